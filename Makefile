# The two commands of the README. Each creates (or reuses) a virtual environment in .venv,
# installs ecngym into it (compiling the C++ fabric against the ns3 wheel), then runs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?= -m "not slow"

.PHONY: demo test test-all install bench lint check clean

install:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# The build requirements (pyproject's [build-system]) go into the venv and the build runs without
	@# isolation: an isolated build gets a new temporary path for ns-3's and nanobind's headers each
	@# time, which made every reinstall recompile the whole fabric; this way build/ stays incremental.
	$(PY) -m pip install --quiet $$($(PY) -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))")
	$(PY) -m pip install --no-build-isolation ".[test]"

## The main job on a small default scenario.
demo: install
	$(VENV)/bin/ecngym run

## The default (fast) test suite.
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

## Everything, including the slow learning / reproduction tests.
test-all: PYTEST_ARGS =
test-all: test

## Style and static checks (ruff: pycodestyle, pyflakes, isort, bugbear, pydocstyle).
lint: install
	$(PY) -m pip install --quiet ruff
	$(PY) -m ruff check .

## Everything a commit should pass.
check: lint test

## The fabric benchmark (speed and fidelity against the HPCC reference runs).
bench: install
	$(VENV)/bin/ecngym bench fabric

clean:
	rm -rf build $(VENV)

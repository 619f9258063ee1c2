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
	$(PY) -m pip install ".[test]"

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

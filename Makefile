# The two commands of the README. Each creates (or reuses) a virtual environment in .venv,
# installs ecngym into it (compiling the C++ fabric against the ns3 wheel), then runs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?= -m "not slow"
# Written by `make install` when it succeeds. The targets that need the installed package depend on it,
# so they reinstall only when a file the install copies (the tracked and untracked-but-not-ignored files
# outside docs/, tests/, notebooks/ and the top-level Markdown files) is newer than the last install, or the
# venv is new.
INSTALLED := $(VENV)/.ecngym-installed
INSTALL_INPUTS := $(wildcard $(shell git ls-files --cached --others --exclude-standard -- . ':!docs' ':!tests' \
  ':!notebooks' ':(exclude,glob)*.md' 2>/dev/null || find . -name .venv -prune -o -name build -prune -o -name site -prune \
  -o -name outputs -prune -o -name tests -prune -o -name docs -prune -o -type f \( -name '*.py' -o -name '*.cc' \
  -o -name '*.h' -o -name '*.yaml' -o -name '*.toml' -o -name CMakeLists.txt \) -print))

.PHONY: demo test test-all install browser bench lint check clean proto docs docs-serve

$(INSTALLED): $(INSTALL_INPUTS)
	@$(MAKE) --no-print-directory install

install:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# setuptools and wheel too: with --no-build-isolation below, sdist-only dependencies (Hydra's
	@# antlr4-python3-runtime) build with the venv's own setuptools, and a new venv's (65.x) has no
	@# bdist_wheel without the wheel package.
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	@# The build requirements (pyproject's [build-system]) go into the venv and the build runs without
	@# isolation: an isolated build gets a new temporary path for ns-3's and nanobind's headers each
	@# time, which made every reinstall recompile the whole fabric; this way build/ stays incremental.
	$(PY) -m pip install --quiet $$($(PY) -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))")
	$(PY) -m pip install --no-build-isolation ".[test]"
	@touch $(INSTALLED)

## The main job: the benchmark's core suite (configs/suite/core.yaml), then its board (terminal + HTML page).
demo: $(INSTALLED)
	$(VENV)/bin/ecngym run suite=core

## Headless Chromium for the leaderboard page test (Debian's chromium; CI runs as root on a fresh machine).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }

## The default (fast) test suite (the page test needs the browser: a missing one fails it here).
test: $(INSTALLED) browser
	ECNGYM_REQUIRE_BROWSER=1 $(PY) -m pytest $(PYTEST_ARGS)

## Everything, including the slow learning / reproduction tests.
test-all: PYTEST_ARGS =
test-all: test

## Style and static checks (ruff: pycodestyle, pyflakes, isort, bugbear, pydocstyle).
lint: $(INSTALLED)
	$(PY) -m pip install --quiet ruff
	$(PY) -m ruff check .

## Everything a commit should pass.
check: lint test

## The fabric benchmark (speed and fidelity against the HPCC reference runs).
bench: $(INSTALLED)
	$(VENV)/bin/ecngym bench fabric

## Regenerate opengym/messages_pb2.py from opengym/messages.proto (the module is committed, as ns3-gym
## does, so installing runs no protoc). grpcio-tools 1.64 ships protoc 26.1, whose code loads on every
## protobuf >= 5.26.1 (pyproject's floor); it gets a venv of its own (it pins protobuf < 6).
proto:
	@test -x build/protoc-venv/bin/python || $(PYTHON) -m venv build/protoc-venv
	build/protoc-venv/bin/python -m pip install --quiet "grpcio-tools==1.64.3"
	build/protoc-venv/bin/python -m grpc_tools.protoc -I opengym --python_out=opengym opengym/messages.proto

## The docs' benchmark and reproduction pages, rerun by the commands that measure them (each writes its
## page with --markdown, stamped with version, date, machine and command). Slow: tens of minutes.
.PHONY: docs-results
docs-results: $(INSTALLED)
	$(VENV)/bin/ecngym bench fabric --markdown docs/benchmarks/fabric.md
	$(VENV)/bin/ecngym bench env --markdown docs/benchmarks/env.md
	$(VENV)/bin/ecngym bench env --ns3gym --markdown docs/benchmarks/ns3gym.md
	$(VENV)/bin/ecngym bench train --algorithms '' --suite full --profile full --learners all --scaling-suite full \
	  --markdown docs/benchmarks/train.md
	$(VENV)/bin/ecngym bench scale --markdown docs/benchmarks/scale.md
	$(VENV)/bin/ecngym bench tcp --markdown docs/benchmarks/tcp.md
	$(VENV)/bin/ecngym bench tcp-bisect --markdown docs/benchmarks/tcp-bisect.md
	$(VENV)/bin/ecngym bench branch --markdown docs/benchmarks/branch.md
	$(VENV)/bin/ecngym reproduce --all --markdown docs/reproductions.md
	$(VENV)/bin/ecngym benchmark scenarios markdown=docs/benchmarks/scenarios.md
	$(VENV)/bin/ecngym benchmark headroom suite=full markdown=docs/benchmarks/headroom.md
	$(VENV)/bin/ecngym benchmark oracle-window suite=core test_seeds=3 window=2ms beam=1,2 \
	  markdown=docs/benchmarks/oracle-window.md
	$(VENV)/bin/ecngym benchmark headroom-map family=storage_phases markdown=docs/benchmarks/headroom-map-storage.md
	$(VENV)/bin/ecngym benchmark headroom-map family=bulk_vs_reads markdown=docs/benchmarks/headroom-map-bulk.md
	$(VENV)/bin/ecngym benchmark headroom-map family=pred_regimes markdown=docs/benchmarks/headroom-map-pred.md
	$(VENV)/bin/ecngym run suite=core results.dir=outputs/docs-results leaderboard.html=outputs/docs-results/board.html
	$(VENV)/bin/ecngym benchmark board suite=core store=outputs/docs-results html=outputs/docs-results/board.html \
	  markdown=docs/benchmarks/suite.md
	$(VENV)/bin/ecngym benchmark rewards suite=core store=outputs/docs-results markdown=docs/benchmarks/rewards.md

## The documentation site into site/ (strict: a broken link or a page that fails to render fails it).
## (`make install` installs the test extra, which includes the docs extra: mkdocs and its plug-ins; it runs
## only when the package's files changed since the last install.)
docs: $(INSTALLED)
	DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d site
	@echo "Open site/index.html in a browser (it works from disk), or run: make docs-serve"

## The documentation site served at http://127.0.0.1:8000, rebuilt when a page changes (the API pages
## show the installed package: `make install` after changing the code).
docs-serve: $(INSTALLED)
	DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

clean:
	rm -rf build $(VENV) site

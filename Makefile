# Two commands do all the set-up on a fresh machine with Python >= 3.11, git and make:
#   make run    - create .venv, install, open the app (the bundled sample when no FILE)
#   make test   - create .venv, install with the dev extra, run the whole test suite
#   make lint   - ruff (lint + format check), mypy and import-linter with the venv's tools;
#                 `make test` runs them first
# The first interpreter that really runs and is >= 3.11 (a pyenv shim can exist
# for a version that is not installed, so `command -v` alone is not enough).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null && { echo $$p; break; }; done)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint fuzz bench sample screenshot clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 needed"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# Our packages' bytecode, written ahead (cheap when up to date): an editable install has
# none, and where PYTHONDONTWRITEBYTECODE is set (our CI machine) Python would recompile
# every module from source at each start: about 0.2 s of every window's and command's start.
BYTECODE := $(PY) -m compileall -q -j 0 loom_core loom_desktop benchmarks

run: $(STAMP)
	@$(BYTECODE)
	$(VENV)/bin/loom-desktop $(FILE)

test: lint
	@$(BYTECODE)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(PYTEST_ARGS)

# make lint - the static checks, configured in pyproject.toml (ruff, mypy) and by the
# import-linter contracts (layers and feature seams); each must report zero findings
LINT_PATHS := loom_core loom_desktop tests benchmarks packaging
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# make fuzz - the long property run: N mutated inputs of every family through every reader,
# view and command, then N of every family opened in one real window (offscreen); crashes
# are kept in tests/fuzz_regressions/ (replayed by make test)
fuzz: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.core.fuzz.drive --cases $(or $(N),10000)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.core.fuzz.drive --window --cases $(or $(N),10000)
	QT_QPA_PLATFORM=offscreen LOOM_FUZZ_PROFILE=long $(PY) -m pytest -q tests/core/fuzz

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) benchmarks/open_trace.py --effects $(or $(N),100000) --json

sample: $(STAMP)
	$(PY) -m loom_core.demo.sample resources/sample.loom.json --force

screenshot: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/loom-desktop --screenshot docs/screenshot.png --step 14 --size 1400x860

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# make package - build the one-folder app into dist/loom-desktop (PyInstaller, packaging/)
PACKAGE_STAMP := $(VENV)/.installed-package

$(PACKAGE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,package]"
	touch $(PACKAGE_STAMP)

.PHONY: package package-deps
package-deps: $(PACKAGE_STAMP)

package: $(PACKAGE_STAMP)
	$(PY) -m PyInstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/loom-desktop.spec
	@du -sh dist/loom-desktop

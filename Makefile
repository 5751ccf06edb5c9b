# refig-study — `make run` serves the embedded default; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench soak faults setup sample lint clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,prod]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_sample_data
	@echo
	@echo "refig-study is serving on http://$(HOST):$(PORT)/"
	@echo "Log in as coordinator / researcher / annotator with password 'refig-sample' (sample accounts),"
	@echo "or create your own: $(PY) manage.py createcoordinator NAME"
	@echo
	$(PY) manage.py runserver $(HOST):$(PORT)

# CELERY_TASK_ALWAYS_EAGER=1 keeps in-process task calls eager; the worker tests start real workers over the broker.
test: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q

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

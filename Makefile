# refig-study — `make run` serves the embedded default; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(PY) -m uv
# Every package's version and hash (test and prod extras, uv and the build backend too): `make lock` writes it.
LOCK := requirements.lock
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | sha256sum | cut -c1-12)
UV_PIN := $(shell sed -n 's/^uv==\([^ ]*\) .*/\1/p' $(LOCK))
VAR := $(or $(REFIG_VAR_DIR),var)
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO ?= 1
# Python keeps its bytecode cache (.venv and the project's __pycache__, both ignored by git): with an inherited
# PYTHONDONTWRITEBYTECODE=1 every command recompiled Django, pandas and SciPy in memory, 3-4 s per process.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test screenshots bench bench-paper soak faults setup lock sample lint clean

# The locked uv, installed by pip unless it is there: the base interpreter's pip, or the venv's own (ensurepip) where
# that one is too old for --python.
UV_REQ := $(VENV)/uv-requirement.txt
INSTALL_UV = test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV) || python3 -m venv --without-pip $(VENV); \
  sed -n '/^uv==/,/[^\\]$$/p' $(LOCK) >$(UV_REQ); \
  $(UV) --version 2>/dev/null | grep -qF 'uv $(UV_PIN) ' \
  || $(PYTHON) -m pip --python $(PY) install -q --no-deps --require-hashes -r $(UV_REQ) \
  || { $(PY) -m ensurepip && $(PY) -m pip install -q --no-deps --require-hashes -r $(UV_REQ); }

# Everything from $(LOCK): uv, then the locked packages, then the project itself, editable, resolving nothing; the
# check fails when pyproject.toml asks for a package the lock lacks.
$(STAMP): pyproject.toml $(LOCK)
	@echo "[1/4] installing Python packages into $(VENV) from $(LOCK) (first run only; log in $(VENV)/install.log)"
	@mkdir -p $(VENV)
	@( set -e; $(INSTALL_UV); \
	   $(UV) pip install --python $(PY) --require-hashes -r $(LOCK); \
	   $(UV) pip install --python $(PY) --no-deps --no-build-isolation -e .; \
	   $(UV) pip check --python $(PY) || { echo "$(LOCK) lacks what pyproject.toml asks for: make lock"; exit 1; } \
	 ) >$(VENV)/install.log 2>&1 || (tail -n 30 $(VENV)/install.log; exit 1)
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

setup: $(STAMP)

# After a change to pyproject.toml's dependencies: re-resolve, keeping every pin that still fits (ARGS=--upgrade: the newest).
lock:
	@mkdir -p $(VENV) && ( set -e; $(INSTALL_UV) ) >$(VENV)/install.log 2>&1 || (tail -n 30 $(VENV)/install.log; exit 1)
	$(UV) pip compile -q pyproject.toml --extra test --extra prod --group setup --universal --python-version 3.11 \
	  --generate-hashes --custom-compile-command 'make lock' -o $(LOCK) $(ARGS)

# One line per step; the demo loader prints one line per part of the demo it loads. The server runs quietly: its
# banner (stdout) and its line per request (REFIG_REQUEST_LOG) go to the log file; errors still reach the terminal.
run: setup
	@echo "[2/4] migrating the database ($(VAR)/)"
	@$(PY) manage.py migrate --noinput -v 0
	@if [ "$(DEMO)" = "0" ]; then echo "[3/4] DEMO=0: no demo loaded (your own accounts: $(PY) manage.py createcoordinator NAME)"; \
	else echo "[3/4] loading the synthetic demo study and the sample accounts"; $(PY) manage.py load_sample_data; fi
	@mkdir -p $(VAR)/log
	@echo "[4/4] serving http://$(HOST):$(PORT)/  (Ctrl-C stops; requests are logged to $(VAR)/log/requests.log)"
	@echo "      log in as annotator, coordinator, researcher or admin, password 'refig-sample'"
	@echo "      your own accounts: $(PY) manage.py createcoordinator NAME"
	@REFIG_REQUEST_LOG=$(VAR)/log/requests.log $(PY) manage.py runserver $(HOST):$(PORT) --noreload --skip-checks \
	  >>$(VAR)/log/requests.log

# CELERY_TASK_ALWAYS_EAGER=1 keeps in-process task calls eager; the worker tests start real workers over the broker.
# One test process per core (pytest-xdist), a module's tests kept together so its module-scoped fixtures are built
# once; each process has its own test database and Redis database (tests/celery_worker.py). JOBS=1: one process.
JOBS ?= auto
test: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -n $(JOBS) --dist loadscope

# The README's and docs/' screenshots: the browser tests, writing under docs/ (make test writes them to a scratch folder).
screenshots: setup
	REFIG_SCREENSHOTS=1 CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -m browser -p no:cacheprovider

bench: setup
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -s tests/benchmarks -p no:cacheprovider

# A whole ReFigBench-sized study, rendering by 1 then 2 real render workers included, timed phase by phase (about
# 18 min here; REFIG_BENCH_PAPER_SCALE=0.1 runs a tenth in about 4). Needs Redis and LibreOffice; DATABASE_URL for PostgreSQL.
bench-paper: setup
	REFIG_BENCH_PAPER_SCALE=$${REFIG_BENCH_PAPER_SCALE:-1} CELERY_BROKER_URL=$${CELERY_BROKER_URL:-redis://127.0.0.1:6379/10} \
	  CELERY_TASK_ALWAYS_EAGER=1 $(PY) -m pytest -q -s tests/benchmarks/test_bench_paper.py -p no:cacheprovider

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

"""Gunicorn settings of the web process: `gunicorn -c config/gunicorn.py config.wsgi:application`.

docker/start-web.sh serves production with this file, and tests/benchmarks/test_annotation_bench.py measures the
annotator API under the very same server, so what is benchmarked is what is deployed.
"""

import multiprocessing
import os

bind = os.environ.get("WEB_BIND", "0.0.0.0:8000")
# One process per core: every request is Python work between short database round trips, so more processes than
# cores only share the cores out, stretching the longer requests most (tests/benchmarks/test_annotation_bench.py).
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count()))
# Two threads per worker: a slow client or a long export holds one, not the whole process.
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", 2))
keepalive = 5
# Longest legitimate request: a table export at paper scale. Renders and judge calls run on Celery workers.
timeout = int(os.environ.get("WEB_TIMEOUT", 120))
graceful_timeout = 30
# Recycle workers now and then so a slow leak in a dependency cannot grow without bound.
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", 5000))
max_requests_jitter = 500
accesslog = os.environ.get("WEB_ACCESS_LOG", "-") or None

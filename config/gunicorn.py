"""Gunicorn settings of the web process: `gunicorn -c config/gunicorn.py config.wsgi:application`.

docker/start-web.sh serves production with this file, and tests/benchmarks/test_annotation_bench.py measures the
annotator API under the very same server, so what is benchmarked is what is deployed.
"""

import multiprocessing
import os

bind = os.environ.get("WEB_BIND", "0.0.0.0:8000")
# One process per core: every request is Python work between short database round trips, so more processes than
# cores only share the cores out, stretching the longer requests most. The annotation benchmark (50 annotators,
# 2 cores, PostgreSQL on the same machine), next-item p95 / healthz p95 and requests/s, run by run:
#   (2 x cores) + 1 = 5 processes x 2 threads: 3.29x, 3.24x, 2.56x; 131, 131, 103 req/s
#   3 x 1: 2.01x, 1.81x; 167, 107 req/s      2 x 1: 1.74x, 1.62x, 1.69x; 145, 127, 102 req/s
#   2 x 2 (this default on 2 cores): 1.98x, 1.66x; 161, 132 req/s, the next-item p95 0.66 and 0.81 s against 1.13-1.59 s
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

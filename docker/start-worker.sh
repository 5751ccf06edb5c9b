#!/bin/sh
# QUEUES: render (LibreOffice, one process per worker slot), judge (network bound), analysis, default.
set -e
exec celery -A config worker -Q "${QUEUES:-default,render,judge,analysis}" --concurrency "${CONCURRENCY:-2}" --loglevel INFO

"""Ingest at paper scale: corpus, artifacts, 60,000 judge records, PPTBench's scores.csv and 4,270 votes, each beside a
bare pass (the same files parsed, the same rows bulk-inserted, no validation) measured in the same run; rows/s, peak
memory and the ratio are printed. The issue's target: at least 5,000 rows/s for judge records, PPTBench scores and
comparisons, on both databases.

Run: .venv/bin/pytest tests/benchmarks/test_ingest_bench.py -q -s   (DATABASE_URL=postgres://... for PostgreSQL)
"""

import pytest

from tests.benchmarks.paper_data import generate
from tests.benchmarks.test_paper_scale_bench import IMPORT_TARGET_ROWS_PER_S, import_everything, rates_line

pytestmark = pytest.mark.django_db(transaction=True)


def test_imports_beside_a_bare_pass(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    lines, rates, _ = import_everything(generate(tmp_path / "input"), audit=False)
    print("\n" + "\n".join(lines))
    print(rates_line(rates))
    slow = {
        k: round(rates[k])
        for k in ("judge records", "PPTBench scores", "comparisons")
        if rates[k] < IMPORT_TARGET_ROWS_PER_S
    }
    assert not slow, f"below {IMPORT_TARGET_ROWS_PER_S} rows/s: {slow}"

"""The pure modules stay free of Django/DRF/Celery and apps depend in one direction (import-linter)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_import_contracts_hold():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports")], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "broken" in result.stdout and "0 broken" in result.stdout


def test_ruff_lint_and_format_are_clean():
    ruff = str(Path(sys.executable).parent / "ruff")
    lint = subprocess.run(
        [ruff, "check", "--output-format", "concise", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-2000:]
    form = subprocess.run([ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert form.returncode == 0, form.stdout[-3000:] + form.stderr[-2000:]


APPS = ("agents", "annotation", "bt_elo", "config", "core", "corpus", "scoring")


def test_only_one_module_looks_at_the_database_vendor():
    """One code path for both databases: the statements PostgreSQL runs differently (COPY, ANALYZE of some columns) live
    in core/bulk_write.py, and nothing else branches on the vendor or writes SQL over another app's table by name."""
    vendor, raw = [], []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            text = path.read_text()
            name = str(path.relative_to(ROOT))
            if ".vendor" in text:
                vendor.append(name)
            if "RawSQL" in text or "_meta.db_table" in text:
                raw.append(name)
    assert vendor == ["core/bulk_write.py"]
    assert raw == ["core/bulk_write.py"]

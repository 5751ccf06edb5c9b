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

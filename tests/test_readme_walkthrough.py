"""The README's own-study walkthrough runs as written, from a fresh clone, and ends with an Elo table.

The block that names docs/example-study is taken from the README line by line: `. .venv/bin/activate` puts this
interpreter's environment first on PATH, and each `python manage.py …` runs in the clone against a new embedded
database (SQLite under the clone's own var/), as it would for a user who has just run `make setup`.
"""

import csv
import io
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import README, ROOT, WALKTHROUGH, sh_blocks

pytestmark = pytest.mark.libreoffice
if shutil.which("soffice") is None:
    pytestmark = [
        pytestmark,
        pytest.mark.skip(reason="LibreOffice (soffice) is not installed: audit_artifacts renders"),
    ]


def walkthrough_lines() -> list[str]:
    blocks = [block for block in sh_blocks() if WALKTHROUGH in block]
    assert len(blocks) == 1, "the README has one walkthrough block naming docs/example-study"
    return [line.split("  #")[0].strip() for line in blocks[0].splitlines() if line.strip()]


def fresh_clone(target: Path) -> Path:
    """A clone of the committed tree when this is a git checkout, else a copy without local state (.venv, var)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    else:
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(".venv", "var", ".git", "__pycache__"))
    return target


def test_the_walkthrough_runs_from_a_fresh_clone_and_ends_with_an_elo_table(tmp_path):
    clone = fresh_clone(tmp_path / "clone")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REFIG_VAR_DIR"))}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    environment["CELERY_TASK_ALWAYS_EAGER"] = "1"
    output = ""
    lines = walkthrough_lines()
    assert lines[0] == ". .venv/bin/activate" and lines[-1].startswith("python manage.py export elo")
    for line in lines[1:]:
        argv = shlex.split(line)
        assert argv[:2] == ["python", "manage.py"], line
        done = subprocess.run(
            [sys.executable, *argv[1:]], cwd=clone, env=environment, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        output = done.stdout
    table = {row["configuration"]: row for row in csv.DictReader(io.StringIO(output))}
    assert set(table) == {"mine-high", "mine-low"}
    # the example's votes: mine-high wins three, one tie
    assert (table["mine-high"]["wins"], table["mine-high"]["ties"], table["mine-low"]["losses"]) == ("3", "1", "3")
    assert float(table["mine-high"]["elo"]) > float(table["mine-low"]["elo"])
    assert "Start to finish" in README

"""Data from outside the project, read in place from ../shared beside the checkout (never copied in).

The one place tests find it: `needs_shared(path)` marks a test, `require_shared(path)` skips from inside a test, a
fixture or a module; both say where to get what is missing.
"""

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"  # tests/data/paths.py -> the checkout's parent

# PPTBench (Wang et al., 2026), Einsia/PPTBench `results/`: scores.csv, leaderboard.csv, issue-summary.csv.
PPTBENCH = SHARED / "data" / "pptbench"
# Real PPTX files from python-pptx (MIT) and Apache POI (Apache-2.0); see its SOURCE.md.
PPTX_REAL = SHARED / "fixtures" / "pptx-real"

SOURCES = {
    PPTBENCH: "PPTBench's published results, CC BY 4.0",
    PPTX_REAL: "real PPTX files from python-pptx, MIT, and Apache POI, Apache-2.0",
}


def skip_reason(path: Path) -> str:
    """'needs ../shared/data/pptbench beside the checkout (PPTBench's published results, CC BY 4.0)'."""
    source = next(text for root, text in SOURCES.items() if path == root or root in path.parents)
    return f"needs ../{path.relative_to(SHARED.parent)} beside the checkout ({source})"


def needs_shared(path: Path) -> pytest.MarkDecorator:
    """Skip the marked test when `path` (under ../shared) is absent."""
    return pytest.mark.skipif(not path.exists(), reason=skip_reason(path))


def require_shared(path: Path) -> Path:
    """`path` when present; otherwise skip the calling test, fixture or (at import) module."""
    if not path.exists():
        pytest.skip(skip_reason(path), allow_module_level=True)
    return path

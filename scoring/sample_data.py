"""`make run` samples of the scoring app: the demo's synthetic judge records, and PPTBench's published scores.

PPTBench (CC BY 4.0, Wang et al., 2026) is a different benchmark with its own 36 configurations; it is loaded when a
copy sits beside the repository and is shown only in its own table.
"""

import os
from pathlib import Path

from django.conf import settings

from core import demo_bundle


def pptbench_scores_path() -> Path:
    """$REFIG_PPTBENCH_SCORES, else ../shared/data/pptbench/scores.csv beside the checkout (read in place)."""
    default = Path(settings.BASE_DIR).parent / "shared" / "data" / "pptbench" / "scores.csv"
    return Path(os.environ.get("REFIG_PPTBENCH_SCORES", default))


def load_demo_judge_records() -> str:
    from .services import judge_records_import

    report = judge_records_import(path=demo_bundle.BUNDLE_DIR / "judge.jsonl")
    if not report.created:
        return "demo judge records: already loaded"
    return f"demo judge records (synthetic, two judge families x three runs): {report.summary()}"


def load_pptbench_sample() -> str:
    from .models import PptbenchScore
    from .services import pptbench_scores_import

    lines = [load_demo_judge_records()]
    path = pptbench_scores_path()
    if not path.is_file():
        lines.append(f"PPTBench scores (a different benchmark): not present, no {path}")
    elif PptbenchScore.objects.exists():
        lines.append("PPTBench scores (a different benchmark, CC BY 4.0): already loaded")
    else:
        report = pptbench_scores_import(path=path)
        lines.append(
            f"PPTBench scores (a different benchmark, CC BY 4.0): {report.summary().replace('records', 'scores')}"
        )
    return "\n".join(lines)

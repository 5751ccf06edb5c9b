"""`make run` sample: PPTBench's published scores (CC BY 4.0, Wang et al., 2026), when present beside the repo."""

import os
from pathlib import Path

from django.conf import settings


def pptbench_scores_path() -> Path:
    """$REFIG_PPTBENCH_SCORES, else ../shared/data/pptbench/scores.csv beside the checkout (read in place)."""
    default = Path(settings.BASE_DIR).parent / "shared" / "data" / "pptbench" / "scores.csv"
    return Path(os.environ.get("REFIG_PPTBENCH_SCORES", default))


def load_pptbench_sample() -> str:
    from .models import PptbenchScore
    from .services import pptbench_scores_import

    path = pptbench_scores_path()
    if not path.is_file():
        return f"PPTBench sample not present: no {path} (PPTBench's published results, CC BY 4.0)"
    if PptbenchScore.objects.exists():
        return "PPTBench sample scores already loaded"
    report = pptbench_scores_import(path=path)
    return f"PPTBench sample: {report.summary().replace('records', 'scores')} (see /results/)"

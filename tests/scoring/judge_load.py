"""Many artifacts to judge, fast, and a stand-in judge that answers every call well: the load used by the pacing
tests (tests/scoring/test_judge_pacing_run.py) and the rate benchmark (tests/benchmarks/test_judge_rate_bench.py)."""

from __future__ import annotations

import json

from agents.models import Artifact
from corpus.models import Figure
from tests.factories import artifact_create, configuration_create, figure_create
from tests.scoring.judge_server import Scripted, reply_body

# 18 + 25 + 12 + 20 + 8 = 83
GOOD = {
    "score": 83,
    "subscores": {"text": 18, "semantic_structure": 25, "layout": 12, "editability": 20, "visual_detail": 8},
    "major_errors": [],
    "minor_errors": [],
    "editability_assessment": "native shapes",
    "reason": "close match",
}
INPUT_TOKENS, OUTPUT_TOKENS = 100, 20  # what every stand-in reply reports using
PRICE_INPUT, PRICE_OUTPUT = 10.0, 50.0  # USD per million tokens: (100 x 10 + 20 x 50) / 1e6 = 0.002 a judgement
COST = 0.002


def answer_well(protocol: str, _body: dict) -> Scripted:
    return Scripted(200, reply_body(protocol, json.dumps(GOOD), input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS))


def artifacts_to_judge(n: int, *, per_configuration: int = 100) -> list[int]:
    """``n`` gate-passed artifacts sharing one source image and one rendering (the judge reads both per call), made
    in bulk: one of each through the factories, the rest copies."""
    first_figure = figure_create("load-0")
    configuration = configuration_create("load-c0", model="m0")
    template = artifact_create(configuration, first_figure)
    figures = [first_figure]
    fields = {f.attname: getattr(first_figure, f.attname) for f in Figure._meta.concrete_fields if not f.primary_key}
    copies = []
    for i in range(1, min(n, per_configuration)):
        arxiv = f"2402.{10000 + i:05d}"
        copies.append(Figure(**dict(fields, task_id=f"load-{i}", arxiv_id=arxiv, arxiv_base_id=arxiv)))
    figures += Figure.objects.bulk_create(copies)
    if len(figures) > 1 and figures[1].pk is None:  # backends that return no ids on bulk_create
        figures = [first_figure, *Figure.objects.filter(task_id__startswith="load-").exclude(pk=first_figure.pk)]
    art_fields = {
        f.attname: getattr(template, f.attname)
        for f in Artifact._meta.concrete_fields
        if not f.primary_key and f.attname not in ("configuration_id", "figure_id")
    }
    rows = []
    for c in range((n + per_configuration - 1) // per_configuration):
        conf = configuration if c == 0 else configuration_create(f"load-c{c}", model=f"m{c}", position=c)
        for figure in figures[: min(per_configuration, n - c * per_configuration)]:
            if (conf, figure) != (configuration, first_figure):
                rows.append(Artifact(configuration_id=conf.pk, figure_id=figure.pk, **art_fields))
    Artifact.objects.bulk_create(rows, batch_size=500)
    return list(Artifact.objects.filter(configuration__slug__startswith="load-c").values_list("pk", flat=True))

"""The synthetic demo bundle: deterministic, in every data contract, and loadable by the real importers."""

import csv
import hashlib
import itertools
import json
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from pptx import Presentation
from pptx.exc import PackageNotFoundError
from scipy.stats import spearmanr

from agents.configurations import configuration_pairs, parse_configurations
from agents.pptx_audit import audit_pptx
from agents.runlog import parse_run_log
from corpus.manifest import parse_manifest_line
from corpus.protocol import FLATTEN_CAP, OUTCOMES
from corpus.protocol import RUBRIC_MAXIMA as PROTOCOL_MAXIMA
from demo.generator.configurations import CONFIGURATIONS, RUBRIC_MAXIMA
from demo.generator.writer import generate_demo
from scoring.rubric import load_rubric, validate_reply

FIELDS = frozenset({"cs.AI", "cs.CL", "cs.CV", "cs.LG"})
SEED = 20260713


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return out, generate_demo(out, seed=SEED)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _battles(root: Path) -> list[dict]:
    with open(root / "battles.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_same_seed_same_bytes(demo, tmp_path):
    out, _ = demo
    again = generate_demo(tmp_path / "again", seed=SEED)
    first, second = _files(out), _files(tmp_path / "again")
    assert sorted(first) == sorted(second)
    assert [name for name in first if first[name] != second[name]] == []
    assert again.total_bytes == sum(len(b) for b in first.values())
    for name in first:
        if name.endswith("output.pptx") and first[name][:2] == b"PK":
            try:
                dates = {info.date_time for info in zipfile.ZipFile(out / name).infolist()}
            except zipfile.BadZipFile:  # the intended corrupt file
                continue
            assert dates == {(1980, 1, 1, 0, 0, 0)}


def test_module_is_pure():
    code = (
        "import pkgutil, sys, demo.generator, demo.bundled, demo.build\n"
        "for module in pkgutil.iter_modules(demo.generator.__path__, 'demo.generator.'): __import__(module.name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'rest_framework', 'celery'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert result.stdout.strip() == "[]"


def test_summary_states_what_is_synthetic(demo):
    out, summary = demo
    stated = json.loads((out / "summary.json").read_text())
    assert stated["synthetic"] is True and stated["seed"] == SEED
    assert stated["strengths"] == {c.slug: c.strength for c in CONFIGURATIONS}
    assert sum(stated["strengths"].values()) / len(stated["strengths"]) == pytest.approx(1000)
    assert set(stated["defect_rates"]) == set(stated["strengths"])
    assert "SYNTHETIC" in (out / "DEMO.md").read_text()
    assert RUBRIC_MAXIMA == PROTOCOL_MAXIMA
    assert summary.total_bytes < 8_000_000


def test_manifest_rows_validate(demo):
    out, summary = demo
    lines = (out / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == summary.figures == 30
    rows = [parse_manifest_line(line, images_dir=out / "images", fields=FIELDS) for line in lines]
    assert {r.values["field"] for r in rows} == FIELDS
    assert len({r.arxiv_base_id for r in rows}) == len(rows)
    for row in rows:
        assert row.values["title"].startswith("[synthetic]")
        assert hashlib.sha256(row.image_path.read_bytes()).hexdigest() == row.values["sha256"]
        assert row.image_path.stat().st_size < 60_000
    from PIL import Image

    shapes = {Image.open(r.image_path).size for r in rows}
    assert len(shapes) > 20 and any(w < h for w, h in shapes) and any(w > 2 * h for w, h in shapes)


def test_configurations_are_ten_with_45_pairs(demo):
    out, _ = demo
    specs = parse_configurations(out / "configurations.toml")
    assert [s.slug for s in specs] == [c.slug for c in CONFIGURATIONS]
    pairs = configuration_pairs(specs)
    assert len(pairs) == 45
    assert Counter(p.kind for p in pairs) == {"within": 5, "across": 40}
    assert {s.workflow for s in specs} == {"direct", "specialized"}
    assert len({s.model for s in specs}) == 4


def test_every_deck_opens_except_the_intended_failures(demo):
    out, summary = demo
    corrupt = set(summary.gate_failures["corrupt"])
    multi = set(summary.gate_failures["multi_slide"])
    missing = set(summary.gate_failures["missing"])
    assert corrupt and multi and missing and summary.pasted_rasters
    for slug in summary.configurations:
        for task_id in summary.task_ids:
            path = out / "runs" / slug / task_id / "output.pptx"
            if (slug, task_id) in missing:
                assert not path.exists() and (path.parent / "output.jsonl").is_file()
                continue
            if (slug, task_id) in corrupt:
                with pytest.raises((zipfile.BadZipFile, PackageNotFoundError)):
                    Presentation(str(path))
                continue
            slides = len(Presentation(str(path)).slides)
            assert slides == (2 if (slug, task_id) in multi else 1), (slug, task_id)


def test_behaviours_show_in_the_audit(demo):
    out, summary = demo
    for slug, task_id in summary.pasted_rasters[:4]:
        audit = audit_pptx(out / "runs" / slug / task_id / "output.pptx")
        assert audit.gate_passed and audit.largest_picture_ratio >= 0.85 and audit.cap == FLATTEN_CAP
    slug, task_id = summary.gate_failures["corrupt"][0]
    assert not audit_pptx(out / "runs" / slug / task_id / "output.pptx").gate_passed
    # Faithful direct decks attach their connectors; the specialized workflow draws more freeform lines.
    attached = {"direct": [0, 0], "specialized": [0, 0]}
    for configuration in CONFIGURATIONS[:4]:
        for task_id in summary.task_ids[:10]:
            path = out / "runs" / configuration.slug / task_id / "output.pptx"
            if (configuration.slug, task_id) in summary.pasted_rasters or any(
                (configuration.slug, task_id) in v for v in summary.gate_failures.values()
            ):
                continue
            audit = audit_pptx(path)
            assert audit.gate_passed and audit.text_boxes > 0 and audit.shapes > 0
            attached[configuration.workflow][0] += audit.connectors_attached
            attached[configuration.workflow][1] += 1
    assert attached["direct"][0] / attached["direct"][1] > attached["specialized"][0] / attached["specialized"][1]
    counts = summary.behaviours
    direct = sum(counts[c.slug]["freeform_connectors"] for c in CONFIGURATIONS if c.workflow == "direct")
    specialized = sum(counts[c.slug]["freeform_connectors"] for c in CONFIGURATIONS if c.workflow == "specialized")
    assert specialized > 3 * direct


def test_run_logs_parse(demo):
    out, summary = demo
    logs = sorted((out / "runs").glob("*/*/output.jsonl"))
    assert len(logs) == len(summary.configurations) * len(summary.task_ids)
    economics = [parse_run_log(p) for p in logs]
    recoverable = [e for e in economics if e.recoverable]
    assert 0.85 * len(logs) <= len(recoverable) < len(logs)  # a few truncated logs, as in the paper
    assert all(e.turns > 0 and e.total_tokens > e.output_tokens > 0 for e in recoverable)
    assert all(e.duration_seconds and e.duration_seconds > 0 for e in recoverable)
    assert any(e.cost_usd for e in recoverable) and any(e.cost_usd is None for e in recoverable)


def test_judge_records_follow_the_contract(demo):
    out, summary = demo
    rubric = load_rubric()
    records = [json.loads(line) for line in (out / "judge.jsonl").read_text().splitlines()]
    assert len(records) == summary.judge_records
    gated = {k for v in summary.gate_failures.values() for k in v}
    keys = Counter((r["judge"], r["run"]) for r in records)
    assert len(keys) == 6 and len({r["judge_family"] for r in records}) == 2
    assert set(keys.values()) == {len(summary.configurations) * len(summary.task_ids) - len(gated)}
    for record in records:
        fields = ("score", "subscores", "major_errors", "minor_errors", "editability_assessment", "reason")
        validate_reply(json.dumps({k: record[k] for k in fields}), rubric)
        assert record["reason"].startswith("synthetic demo judge")
        assert (record["configuration"], record["task_id"]) not in gated
    raster = [r for r in records if (r["configuration"], r["task_id"]) in set(summary.pasted_rasters)]
    assert raster and all(r["subscores"]["editability"] <= 6 for r in raster)


def test_battles_cover_every_pair_with_both_tie_kinds(demo):
    out, summary = demo
    rows = _battles(out)
    assert 700 <= len(rows) <= 900 and len(rows) == summary.votes
    assert len({r["comparison_id"] for r in rows}) == len(rows)
    slugs = [c.slug for c in CONFIGURATIONS]
    pairs = Counter(frozenset((r["config_a"], r["config_b"])) for r in rows)
    assert set(pairs) == {frozenset(p) for p in itertools.combinations(slugs, 2)}
    assert {r["outcome"] for r in rows} == set(OUTCOMES)
    assert all(r["left_config"] == r["config_a"] and r["study"] == "demo" and r["reason"] for r in rows)
    assert len({r["annotator"] for r in rows}) >= 3 and "annotator" in {r["annotator"] for r in rows}
    by_item = {}
    for r in rows:
        by_item.setdefault((r["task_id"], frozenset((r["config_a"], r["config_b"]))), set()).add(r["annotator"])
    overlap = [a for a in by_item.values() if len(a) > 1]
    assert len(overlap) == summary.overlap_items >= 20
    ties = sum(r["outcome"].startswith("tie") for r in rows) / len(rows)
    assert 0.15 < ties < 0.45


def test_win_rates_follow_the_stated_strengths(demo):
    out, summary = demo
    points, games = Counter(), Counter()
    for r in _battles(out):
        a, b = r["config_a"], r["config_b"]
        games[a] += 1
        games[b] += 1
        if r["outcome"] == "a":
            points[a] += 1
        elif r["outcome"] == "b":
            points[b] += 1
        else:
            points[a] += 0.5
            points[b] += 0.5
    slugs = list(summary.strengths)
    rho = spearmanr([summary.strengths[s] for s in slugs], [points[s] / games[s] for s in slugs]).statistic
    assert rho > 0.8


@pytest.mark.django_db
def test_the_real_importers_load_the_bundle(demo):
    from agents.models import Artifact
    from agents.services import artifacts_import
    from annotation.models import Comparison
    from annotation.services import comparisons_import
    from corpus.services import corpus_import
    from scoring.services import judge_records_import

    out, summary = demo
    corpus = corpus_import(manifest=out / "manifest.jsonl", images_dir=out / "images")
    assert corpus.rejected == [] and corpus.created == 30
    artifacts = artifacts_import(run_root=out / "runs", configurations_file=out / "configurations.toml")
    assert artifacts.rejected == [] and artifacts.warnings == []  # no unknown task or configuration folder
    assert artifacts.created == 300
    assert f"{len(summary.gate_failures['missing'])} artifacts without output.pptx (gate: missing)" in artifacts.notes
    assert Artifact.objects.filter(log_status=Artifact.LogStatus.RECOVERABLE).count() > 255
    judged = judge_records_import(path=out / "judge.jsonl")
    assert judged.rejected == [] and judged.created == summary.judge_records
    votes = comparisons_import(path=out / "battles.csv")
    assert votes.rejected == [] and votes.created == summary.votes and "created study demo" in votes.notes
    assert Comparison.objects.count() == summary.votes
    again = comparisons_import(path=out / "battles.csv")
    assert again.created == 0 and again.unchanged == summary.votes

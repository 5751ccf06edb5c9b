"""What `make run` loads (`load_sample_data`), in order: the synthetic demo corpus and its ten configurations'
artifacts, the demo's judge records and PPTBench's published scores, then the `demo` study with its simulated votes.

Everything goes through the apps' own importers and services, as a user's data would. The bundle's renderings (made
by LibreOffice when the bundle was built, see demo/build.py) are attached instead of rendering again, so `make run`
needs no LibreOffice. Each loader is idempotent and returns one line (or several) for the command to print.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

from agents import selectors as agent_selectors
from agents.services import artifact_audit, artifact_rendering_attach, artifacts_import
from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import StudyKind
from annotation.services import artifact_studies, gate_reviews, ratings
from corpus.services import corpus_import
from scoring.models import PptbenchScore
from scoring.services import judge_records_import, pptbench_scores_import

from . import bundled

DEMO_TARGET_PER_PAIR = 30  # the densest pair has 20 imported votes plus overlap: items remain to vote on
DEMO_QUOTA = 1000
# The demo's gate-review and rating studies (PPTBench's and PPTArena's protocols): name, kind, bundle file, about.
DEMO_ARTIFACT_STUDIES = (
    ("demo-gate-review", StudyKind.GATE_REVIEW, "gate_reviews.csv", "gate review of every configuration's slide"),
    ("demo-ratings", StudyKind.RATING, "ratings.csv", "0-5 ratings of every configuration's slide"),
)
# The demo's screening study: a seeded sample of the corpus as candidate figures, for the sample annotator to screen.
DEMO_SCREENING_STUDY = "demo-screening"
DEMO_SCREENING_FIGURES = 12


def load_sample_corpus_and_artifacts() -> str:
    """The demo corpus and every configuration's artifacts, audited, with the bundled renderings attached."""
    slugs = bundled.configuration_slugs()
    bundle = bundled.bundle_index()
    index = bundle["artifacts"]
    demo_artifacts = agent_selectors.artifact_list().filter(configuration__slug__in=slugs)
    if demo_artifacts.count() == len(index) and not demo_artifacts.filter(gate_passed__isnull=True).exists():
        return "demo corpus and artifacts: already loaded"
    root = bundled.BUNDLE_DIR
    corpus_import(manifest=root / "manifest.jsonl", images_dir=root / "images")
    artifacts_import(run_root=root / "runs", configurations_file=root / "configurations.toml")
    audited = rendered = 0
    for slug in slugs:
        for artifact in agent_selectors.artifact_list(configuration=slug):
            artifact = artifact_audit(artifact=artifact)
            audited += bool(artifact.audit_passed)
            png_path = bundled.render_path(artifact.pptx_sha256) if artifact.pptx_sha256 else None
            entry = index.get(f"{slug}/{artifact.figure.task_id}", {})
            if artifact.audit_passed and artifact.render_ok is None and png_path and png_path.is_file():
                if entry.get("pptx_sha256") != artifact.pptx_sha256:
                    continue  # not the bundled deck: leave it to audit_artifacts
                png = png_path.read_bytes()
                thumbnail, width, height = bundled.thumbnail_png(png, settings.REFIG["THUMBNAIL_LONG_EDGE"])
                artifact_rendering_attach(artifact=artifact, png=png, thumbnail=thumbnail, width=width, height=height)
                rendered += 1
    return (
        f"demo corpus: {bundle['figures']} synthetic figures, {len(slugs)} configurations, {len(index)} artifacts "
        f"({audited} pass the audit, {rendered} bundled renderings attached)"
    )


def pptbench_scores_path() -> Path:
    """$REFIG_PPTBENCH_SCORES, else ../shared/data/pptbench/scores.csv beside the checkout (read in place)."""
    default = Path(settings.BASE_DIR).parent / "shared" / "data" / "pptbench" / "scores.csv"
    return Path(os.environ.get("REFIG_PPTBENCH_SCORES", default))


def load_demo_judge_records() -> str:
    report = judge_records_import(path=bundled.BUNDLE_DIR / "judge.jsonl")
    if not report.created:
        return "demo judge records: already loaded"
    return f"demo judge records (synthetic, two judge families x three runs): {report.summary()}"


def load_sample_scores() -> str:
    """The demo's synthetic judge records, and PPTBench's published scores.

    PPTBench (CC BY 4.0, Wang et al., 2026) is a different benchmark with its own 36 configurations; it is loaded when
    a copy sits beside the repository and is shown only in its own table.
    """
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


def load_sample_study() -> str:
    """The synthetic `demo` study with its simulated votes; then the demo's gate-review and rating studies
    (PPTBench's and PPTArena's protocols), simulated like its votes, and its small screening study. The sample
    annotator is assigned to all four.

    Each study is created before its votes or judgements are imported so its settings are the demo's (the pairwise
    one: a target per pair above the imported votes and a generous quota), so the `annotator` account still has items
    to work on in each.
    """
    slugs = bundled.configuration_slugs()
    if len(agent_selectors.configurations_by_slugs(slugs=slugs)) < len(slugs):
        return ""
    study = annotation_selectors.study_list().filter(name=bundled.DEMO_STUDY).first()
    created = study is None
    if created:
        study = annotation_services.study_create(
            name=bundled.DEMO_STUDY,
            configurations=slugs,
            description=f"[synthetic] Demo study: {bundled.SYNTHETIC_NOTE}.",
            target_per_pair=DEMO_TARGET_PER_PAIR,
            overlap_rate=0.1,
            min_dwell_ms=1500,
            quota_per_annotator=DEMO_QUOTA,
            seed=bundled.bundle_index()["seed"],
        )
    report = annotation_services.comparisons_import(path=bundled.BUNDLE_DIR / "battles.csv")
    annotators = get_user_model().objects.filter(username="annotator")
    annotation_services.study_annotators_set(study=study, users=annotators)
    for name, kind, file, about in DEMO_ARTIFACT_STUDIES:
        load_demo_artifact_study(name=name, kind=kind, path=bundled.BUNDLE_DIR / file, about=about, slugs=slugs)
    reviews = gate_reviews.gate_reviews_import(path=bundled.BUNDLE_DIR / "gate_reviews.csv", study="demo-gate-review")
    rating_report = ratings.ratings_import(path=bundled.BUNDLE_DIR / "ratings.csv", study="demo-ratings")
    screening = load_demo_screening_study()
    if not created and not report.created:
        return f"demo study {bundled.DEMO_STUDY!r}: already created"
    return (
        f"demo study {bundled.DEMO_STUDY!r}: {len(slugs)} configurations, {report.created} simulated votes "
        f"imported, annotator assigned; demo-gate-review: {reviews.created} reviews; demo-ratings: {rating_report.created} "
        f"ratings; {screening} (all with the annotator assigned)"
    )


def load_demo_artifact_study(*, name: str, kind: str, path: Path, about: str, slugs: list[str]) -> None:
    """A demo gate-review or rating study over every demo configuration on the figures its simulated judgements cover,
    with the sample annotator assigned, so that they have every artifact of it left to judge (the simulated reviewers
    and raters are not accounts). A study an earlier demo's import created bare gets its configurations."""
    with path.open(newline="", encoding="utf-8") as rows:
        task_ids = sorted({row["task_id"] for row in csv.DictReader(rows)})
    study = annotation_selectors.study_list().filter(name=name).first()
    if study is None:
        study = annotation_services.study_create(
            name=name,
            kind=kind,
            configurations=slugs,
            figures=task_ids,
            description=f"[synthetic] Demo {about}: {bundled.SYNTHETIC_NOTE}.",
            seed=bundled.bundle_index()["seed"],
        )
    elif not study.configurations.exists():
        artifact_studies.artifact_study_links_set(study=study, configurations=slugs, figures=task_ids)
    annotators = get_user_model().objects.filter(username="annotator")
    annotation_services.study_annotators_set(study=study, users=[*study.annotators.all(), *annotators])


def load_demo_screening_study() -> str:
    """The demo's screening study: a seeded sample of DEMO_SCREENING_FIGURES figures of the demo corpus as candidates,
    with the sample annotator assigned and no simulated decisions (screeners are accounts), so that every candidate is
    left to them on /annotate/screen/."""
    study = annotation_selectors.study_list().filter(name=DEMO_SCREENING_STUDY).first()
    if study is None:
        study = annotation_services.study_create(
            name=DEMO_SCREENING_STUDY,
            kind=StudyKind.SCREENING,
            figure_sample=DEMO_SCREENING_FIGURES,
            description=f"[synthetic] Demo screening of candidate figures: {bundled.SYNTHETIC_NOTE}.",
            seed=bundled.bundle_index()["seed"],
        )
    annotators = get_user_model().objects.filter(username="annotator")
    annotation_services.study_annotators_set(study=study, users=[*study.annotators.all(), *annotators])
    return f"{DEMO_SCREENING_STUDY}: {study.figures.count()} candidate figures"


# The corpus and artifacts first, then what refers to them.
SAMPLE_LOADERS: tuple[Callable[[], str], ...] = (
    load_sample_corpus_and_artifacts,
    load_sample_scores,
    load_sample_study,
)

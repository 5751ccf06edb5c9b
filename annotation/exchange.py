"""The annotation part of a whole-study export (core.study_exchange): study.json (name, kind, status, settings,
configurations, figures; a rating study's axes) and the study's human data, each in the app's own import format, read
back on import by that format's importer:

- pairwise: battles.csv, the counted votes as battle rows (DESIGN contract 5) with the stored provenance hashes
  (comparisons_import); a votes-only study (import_battles) writes its imported battles as the same rows, its systems
  by name as given and its clusters as task_id (battles_import);
- gate review: gate_reviews.csv, GATE_REVIEW_COLUMNS and the failing gate (gate_reviews_import);
- rating: ratings.csv, RATING_COLUMNS and OPTIONAL_RATING_COLUMNS — category, judge family and the item texts kept on
  StudyArtifact (ratings_import);
- screening: screening_decisions.csv, the `screening-decisions` table's columns with skips as well
  (screening_decisions_import);
- gate review and rating with a stratified sample: sample.csv, the sampled artifacts (read here: no other importer
  takes a sample).

Import creates the study with its settings (or lets its importer create it, as for a study an import made, and then
gives it its settings), runs those importers and sets the status. People leave the app by pseudonym only; a judge,
which rates under its model id, keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug

from agents import services as agent_services
from core.errors import AppError, Invalid
from core.imports import ImportReport, RowError, import_rows
from core.pseudonyms import pseudonymise_frame
from core.readers import read_csv

from . import selectors, services
from .models import Rating, ScreeningDecision, Study, StudyArtifact, StudyKind
from .selectors.battles import VOTES_SUITE, has_imported_battles
from .services.artifact_studies import ArtifactsOfRows, rating_axes_clean
from .services.battles import NAME_LENGTH, SLUG_LENGTH
from .services.gate_reviews import GATE_REVIEW_COLUMNS, OPTIONAL_GATE_REVIEW_COLUMNS, gate_reviews_import
from .services.ratings import ITEM_TEXT_COLUMNS, OPTIONAL_RATING_COLUMNS, RATING_COLUMNS, ratings_import
from .services.screening import ACCEPTED_BY_DECISION, SCREENING_DECISION_COLUMNS, screening_decisions_import
from .services.studies import ARTIFACT_STUDY_SETTINGS, STUDY_SETTINGS
from .system_names import system_name

STUDY, BATTLES = "study.json", "battles.csv"
GATE_REVIEWS, RATINGS, SCREENING_DECISIONS, SAMPLE = (
    "gate_reviews.csv",
    "ratings.csv",
    "screening_decisions.csv",
    "sample.csv",
)
SAMPLE_COLUMNS = ("task_id", "configuration")
# Where an artifact's columns come from in the ORM; every other column is the model's field of that name.
ARTIFACT_LOOKUPS = {"task_id": "artifact__figure__task_id", "configuration": "artifact__configuration__slug"}
ARTIFACT_KINDS = (StudyKind.GATE_REVIEW, StudyKind.RATING)


def study_settings_names(kind: str) -> tuple[str, ...]:
    """The settings a study of this kind is created with (study_create refuses the pairwise ones for other kinds)."""
    return STUDY_SETTINGS if kind == StudyKind.PAIRWISE else ARTIFACT_STUDY_SETTINGS


# --- export -----------------------------------------------------------------------------------------------------------
def _rows_frame(rows, columns: tuple[str, ...], lookups: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows.values_list(*(lookups.get(c, c) for c in columns))), columns=list(columns))


def _write(frame: pd.DataFrame, path: Path) -> None:
    # The folder leaves the app: people by their stable pseudonym (an import keeps them as names).
    pseudonymise_frame(frame).to_csv(path, index=False)


def _battles_export(study: Study, out_dir: Path) -> list[str]:
    battles = selectors.comparisons_frame(study=study.name)[selectors.BATTLE_COLUMNS]
    _write(battles, out_dir / BATTLES)
    return [f"{len(battles)} votes -> {BATTLES}"]


def _gate_reviews_export(study: Study, out_dir: Path) -> list[str]:
    columns = (*GATE_REVIEW_COLUMNS, *OPTIONAL_GATE_REVIEW_COLUMNS)
    reviews = _rows_frame(study.gate_reviews.order_by("pk"), columns, ARTIFACT_LOOKUPS)
    _write(reviews, out_dir / GATE_REVIEWS)
    return [f"{len(reviews)} gate reviews -> {GATE_REVIEWS}", *_sample_export(study, out_dir)]


def _ratings_export(study: Study, out_dir: Path) -> list[str]:
    stored = tuple(c for c in OPTIONAL_RATING_COLUMNS if c not in ITEM_TEXT_COLUMNS)
    ratings = _rows_frame(study.ratings.order_by("pk"), (*RATING_COLUMNS, *stored, "artifact_id"), ARTIFACT_LOOKUPS)
    # The item texts are the study's artifact's (StudyArtifact), repeated on each of its ratings as the import reads them.
    texts = {
        artifact: dict(zip(ITEM_TEXT_COLUMNS, values, strict=True))
        for artifact, *values in study.study_artifacts.values_list("artifact_id", *ITEM_TEXT_COLUMNS)
    }
    for column in ITEM_TEXT_COLUMNS:
        ratings[column] = [texts.get(artifact, {}).get(column, "") for artifact in ratings["artifact_id"]]
    ratings = ratings.reindex(columns=[*RATING_COLUMNS, *OPTIONAL_RATING_COLUMNS])
    # Only people get pseudonyms: a judge's rater is its model id, which the rating tables name.
    human = ratings["rater_kind"] == Rating.RaterKind.HUMAN
    ratings.loc[human, "rater"] = pseudonymise_frame(ratings.loc[human, ["rater"]])["rater"]
    ratings.to_csv(out_dir / RATINGS, index=False)
    return [f"{len(ratings)} ratings -> {RATINGS}", *_sample_export(study, out_dir)]


def _sample_export(study: Study, out_dir: Path) -> list[str]:
    sampled = study.study_artifacts.filter(sampled=True).order_by("pk")
    if not sampled.exists():
        return []  # no sample: the study's artifacts are all its configurations' on its figures
    sample = _rows_frame(sampled, SAMPLE_COLUMNS, ARTIFACT_LOOKUPS)
    sample.to_csv(out_dir / SAMPLE, index=False)
    return [f"a stratified sample of {len(sample)} artifacts -> {SAMPLE}"]


def _screening_export(study: Study, out_dir: Path) -> list[str]:
    decision_of = {accepted: decision for decision, accepted in ACCEPTED_BY_DECISION.items()}
    rows = ScreeningDecision.objects.filter(study=study).order_by("decided_at", "pk")
    records = [
        (task_id, username, decision_of[accepted], reason, decided_at.isoformat())
        for task_id, username, accepted, reason, decided_at in rows.values_list(
            "figure__task_id", "annotator__username", "accepted", "reason", "decided_at"
        )
    ]
    decisions = pd.DataFrame(records, columns=list(SCREENING_DECISION_COLUMNS))
    _write(decisions, out_dir / SCREENING_DECISIONS)
    return [f"{len(decisions)} screening decisions and skips -> {SCREENING_DECISIONS}"]


EXPORTS = {
    StudyKind.PAIRWISE: _battles_export,
    StudyKind.GATE_REVIEW: _gate_reviews_export,
    StudyKind.RATING: _ratings_export,
    StudyKind.SCREENING: _screening_export,
}


def study_export(*, study: str, out_dir: Path) -> list[str]:
    resolved = selectors.study_resolve(study=study)
    document = {
        "name": resolved.name,
        "kind": resolved.kind,
        "status": resolved.status,
        "settings": {name: getattr(resolved, name) for name in study_settings_names(resolved.kind)},
        "configurations": list(resolved.configurations.order_by("position", "slug").values_list("slug", flat=True)),
        "figures": list(resolved.figures.order_by("task_id").values_list("task_id", flat=True)),
    }
    if resolved.kind == StudyKind.RATING:
        document["rating_axes"] = list(resolved.rating_axes)
    if resolved.kind == StudyKind.PAIRWISE and has_imported_battles(resolved):
        document["votes_only"] = True
    (out_dir / STUDY).write_text(json.dumps(document, indent=1), encoding="utf-8")
    return [f"{resolved.kind} study {resolved.name} -> {STUDY}", *EXPORTS[resolved.kind](resolved, out_dir)]


# --- import -----------------------------------------------------------------------------------------------------------
def _strings(document: dict, key: str, path: Path) -> list[str]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Invalid(f"{path} {key}: expected a list of names")
    return value


class _NotFinite(ValueError):
    pass


def _not_finite(constant: str):
    raise _NotFinite(f"{constant} is not a finite number")


def _document_read(path: Path) -> dict:
    """study.json, checked field by field: every problem names the file and the field (a JSON syntax error, its line)."""
    if not path.is_file():
        raise Invalid(f"{path}: not found (every study export has one)")
    try:
        document = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_finite)
    except UnicodeDecodeError:
        raise Invalid(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise Invalid(f"{path}:{error.lineno} not JSON: {error.msg}") from None
    except _NotFinite as error:
        raise Invalid(f"{path}: {error}") from None
    if not isinstance(document, dict):
        raise Invalid(f"{path}: expected a JSON object")
    name = document.get("name")
    try:
        validate_slug(name if isinstance(name, str) else "")
    except ValidationError:
        raise Invalid(f"{path} name: {name!r} is not a study name (letters, digits, - and _ only)") from None
    if len(name) > Study._meta.get_field("name").max_length:
        raise Invalid(f"{path} name: longer than {Study._meta.get_field('name').max_length} characters")
    kind = document.setdefault("kind", StudyKind.PAIRWISE)  # exports before study kinds were carried: pairwise
    if kind not in StudyKind.values:
        raise Invalid(f"{path} kind: must be one of {', '.join(StudyKind.values)}, got {kind!r}")
    if document.get("status") not in Study.Status.values:
        raise Invalid(f"{path} status: must be one of {', '.join(Study.Status.values)}, got {document.get('status')!r}")
    settings = document.get("settings", {})
    if not isinstance(settings, dict):
        raise Invalid(f"{path} settings: expected an object")
    unknown = sorted(set(settings) - set(study_settings_names(kind)))
    if unknown:
        raise Invalid(f"{path} settings: {', '.join(unknown)}: not settings of a {kind} study")
    for setting, value in settings.items():
        try:  # the model field's own checks: type, range, choices
            settings[setting] = Study._meta.get_field(setting).clean(value, None)
        except ValidationError as error:
            raise Invalid(f"{path} settings.{setting}: {' '.join(error.messages)}") from None
    for key in ("configurations", "figures", "rating_axes"):
        document[key] = _strings(document, key, path)
    if document["rating_axes"]:
        try:
            document["rating_axes"] = rating_axes_clean(document["rating_axes"])
        except AppError as error:
            raise Invalid(f"{path} rating_axes: {error.detail}") from None
    votes_only = document.setdefault("votes_only", False)
    if not isinstance(votes_only, bool) or (votes_only and kind != StudyKind.PAIRWISE):
        raise Invalid(f"{path} votes_only: true (a pairwise study of imported battles) or false")
    return document


def _data_file(in_dir: Path, name: str, kind: str) -> Path:
    path = in_dir / name
    if not path.is_file():
        raise Invalid(f"{path}: not found (the export of a {kind} study has one)")
    return path


def _systems_ensure(document: dict, path: Path) -> None:
    """A votes-only study's systems, made before its battles in the study's own order (battles_import would make them
    in the order of first sight in the file, which need not be the study's)."""
    for slug in document["configurations"]:
        try:
            name = system_name(slug)
        except ValueError as error:
            raise Invalid(f"{path} configurations: {error}") from None
        if len(slug) > SLUG_LENGTH or len(name) > NAME_LENGTH:
            raise Invalid(
                f"{path} configurations: a system's slug is at most {SLUG_LENGTH} characters, its name {NAME_LENGTH}"
            )
        agent_services.configuration_ensure_external(
            slug=slug, model=name, reasoning_effort="", suite=VOTES_SUITE, label=name
        )


def _pairwise_load(document: dict, in_dir: Path) -> list[ImportReport]:
    battles = _data_file(in_dir, BATTLES, StudyKind.PAIRWISE)
    if document["votes_only"]:
        return [services.battles_import(path=battles, study=document["name"])]
    return [services.comparisons_import(path=battles)]


def _sample_load(*, study_name: str, path: Path) -> ImportReport:
    """Mark each listed artifact as in the study's stratified sample (StudyArtifact.sampled); idempotent."""
    report = ImportReport(source=str(path), noun="sampled artifacts")
    study = selectors.study_resolve(study=study_name)
    artifacts = ArtifactsOfRows()

    def store(row: dict, line: int) -> bool:
        row = {k: ("" if v is None else str(v).strip()) for k, v in row.items() if k is not None}
        for name in SAMPLE_COLUMNS:
            if not row.get(name):
                raise RowError(name, "missing or empty")
        item, created = StudyArtifact.objects.get_or_create(
            study=study, artifact_id=artifacts(row), defaults={"sampled": True}
        )
        if item.sampled:
            return created
        item.sampled = True  # an item whose texts a rating import stored first
        item.save(update_fields=["sampled"])
        return True

    return import_rows(rows=read_csv(path, required=SAMPLE_COLUMNS), store=store, report=report)


def _artifact_study_load(document: dict, in_dir: Path) -> list[ImportReport]:
    kind, name = document["kind"], document["name"]
    if kind == StudyKind.GATE_REVIEW:
        reports = [gate_reviews_import(path=_data_file(in_dir, GATE_REVIEWS, kind), study=name)]
    else:
        reports = [ratings_import(path=_data_file(in_dir, RATINGS, kind), study=name)]
    if (in_dir / SAMPLE).is_file():
        reports.append(_sample_load(study_name=name, path=in_dir / SAMPLE))
    return reports


def _screening_load(document: dict, in_dir: Path) -> list[ImportReport]:
    path = _data_file(in_dir, SCREENING_DECISIONS, StudyKind.SCREENING)
    return [screening_decisions_import(path=path, study=document["name"])]


LOADS = {
    StudyKind.PAIRWISE: _pairwise_load,
    StudyKind.GATE_REVIEW: _artifact_study_load,
    StudyKind.RATING: _artifact_study_load,
    StudyKind.SCREENING: _screening_load,
}


def _made_by_its_importer(document: dict) -> bool:
    """Whether the study's importer makes it: a votes-only study (its systems come with its battles), and a gate-review
    or rating study with no configurations (one an import made: study_create needs them)."""
    return document["votes_only"] or (document["kind"] in ARTIFACT_KINDS and not document["configurations"])


def _study_create(document: dict) -> None:
    kind = document["kind"]
    extra = {"rating_axes": document["rating_axes"]} if kind == StudyKind.RATING else {}
    services.study_create(
        name=document["name"],
        kind=kind,
        configurations=document["configurations"],
        figures=document["figures"] or None,
        **extra,
        **document["settings"],
    )


def _settings_give(document: dict) -> None:
    """Give a study its importer made the exported settings (and a rating study its axes, in their order)."""
    values = dict(document["settings"])
    if document["kind"] == StudyKind.RATING and document["rating_axes"]:
        values["rating_axes"] = document["rating_axes"]
    Study.objects.filter(name=document["name"]).update(**values)


def study_load(*, in_dir: Path) -> list[ImportReport]:
    path = in_dir / STUDY
    document = _document_read(path)
    report = ImportReport(source=str(path), noun="studies")
    existing = Study.objects.filter(name=document["name"]).first()
    if existing is not None and existing.kind != document["kind"]:
        raise Invalid(f"{path} kind: study {existing.name!r} exists here as a {existing.kind} study")
    if existing is None and document["votes_only"]:
        _systems_ensure(document, path)
    elif existing is None and not _made_by_its_importer(document):
        try:
            _study_create(document)
        except AppError as error:  # what study_create refuses (an unknown configuration, say) is study.json's
            raise Invalid(f"{path}: {error.detail}") from None
    reports = LOADS[document["kind"]](document, in_dir)
    if existing is None:
        report.created += 1
        if _made_by_its_importer(document):
            _settings_give(document)
    else:
        report.unchanged += 1
    study = selectors.study_resolve(study=document["name"])
    if study.status != document["status"]:
        services.study_status_set(study=study, status=document["status"])
    return [report, *reports]

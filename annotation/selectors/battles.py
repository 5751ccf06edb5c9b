"""Reads of votes-only studies (issue 30): battles imported between named systems, with no figure or artifact behind
them. Their votes enter every pairwise table through comparisons_frame as battle rows whose configurations are the
systems' names as given and whose task_id is the battle's cluster, so the Elo fit, its cluster bootstrap, the
stability tables and the coverage read them like any study's votes."""

from __future__ import annotations

import pandas as pd
from django.db.models import Count, Max

from core.errors import AppError
from corpus.protocol import PLAIN_TIE

from ..models import ImportedBattle, Study
from .studies import study_resolve

# The suite of the configurations that stand for imported systems (agents.Configuration.suite): never an agent of this
# study's run layout, so no corpus, artifact or score table lists them. Their `model` holds the name as given.
VOTES_SUITE = "votes"


def configuration_name(configuration) -> str:
    """How tables name a configuration: its slug, or an imported system's name as given."""
    return configuration.model if configuration.suite == VOTES_SUITE else configuration.slug


def has_imported_battles(study: Study) -> bool:
    return ImportedBattle.objects.filter(study=study).exists()


def imported_state(study: Study) -> tuple[int, int]:
    """(imported battles, newest id): changes with every import that adds one (imports never change a stored one)."""
    found = ImportedBattle.objects.filter(study=study).aggregate(n=Count("pk"), newest=Max("pk"))
    return int(found["n"]), int(found["newest"] or 0)


def imported_pair_counts(study: Study) -> dict[tuple[int, int], int]:
    """Imported battles per (system a id, system b id) as shown."""
    rows = ImportedBattle.objects.filter(study=study).values_list("system_a_id", "system_b_id").annotate(n=Count("id"))
    return {(a, b): n for a, b, n in rows.order_by()}


def imported_notes(study: Study) -> list[str]:
    battles = ImportedBattle.objects.filter(study=study)
    clusters = battles.values("cluster").distinct().count()
    plain = battles.filter(outcome=PLAIN_TIE).count()
    return [
        f"votes-only study: {battles.count()} battles imported between named systems (names as given), "
        f"{clusters} clusters resampled by the bootstrap (the file's prompt / question / figure column, or each battle "
        "its own cluster when the file has none)",
        f"{plain} plain ties (kind not stated) count half a win to each side and appear in `ties`, not in "
        "ties_success or ties_failure",
    ]


def imported_frame(study: Study, columns: list[str]) -> pd.DataFrame:
    """The study's imported battles as comparisons_frame rows (these `columns`): no artifacts, dwell or provenance."""
    rows = (
        ImportedBattle.objects.filter(study=study)
        .order_by("created_at", "pk")
        .values_list(
            "battle_id",
            "cluster",
            "annotator_name",
            "system_a__model",
            "system_b__model",
            "outcome",
            "reason",
            "created_at",
        )
    )
    records = [
        {
            "comparison_id": battle_id,
            "study": study.name,
            "task_id": cluster,
            "annotator": annotator,
            "config_a": a,
            "config_b": b,
            "left_config": a,
            "outcome": outcome,
            "reason": reason,
            "created_at": at.isoformat(),
            "matchup": "across",
            **dict.fromkeys(("render_sha256_a", "render_sha256_b", "audit_sha256_a", "audit_sha256_b"), ""),
        }
        for battle_id, cluster, annotator, a, b, outcome, reason, at in rows
    ]
    frame = pd.DataFrame(records, columns=columns)
    for name in ("dwell_ms", "decision_ms", "artifact_a_id", "artifact_b_id"):
        frame[name] = frame[name].astype("Int64")
    frame.attrs["notes"] = imported_notes(study)
    return frame


# The pairwise tables whose frames carry no notes of their own (comparisons and coverage do).
TABLES_NOTED = ("elo", "rank-probabilities", "win-rates", "elo-stability", "elo-adjacent")


def imported_battles_note(name: str, params: dict) -> str | None:
    """A core.tables note provider: an Elo table of a votes-only study says where its votes come from and how plain
    ties count."""
    if name not in TABLES_NOTED:
        return None
    try:
        study = study_resolve(study=params.get("study") or None)
    except AppError:
        return None
    return "; ".join(imported_notes(study)) if has_imported_battles(study) else None

"""Every write of the annotation app, by concern: studies, the pool, the assignment engine, votes, import."""

from ..errors import LeaseClosed, LeaseForeign, LeaseNotFound, StudyUnavailable, VoteInvalid
from .battles import battles_import
from .engine import Served, item_next, servable_items
from .importer import BATTLE_COLUMNS, REQUIRED_COLUMNS, comparisons_import
from .pool import leases_expire, study_pairs, study_pool_sync
from .studies import (
    STUDY_SETTINGS,
    annotator_invite,
    study_annotators_set,
    study_create,
    study_figures_choose,
    study_status_set,
)
from .votes import MAX_DWELL_MS, Vote, comparison_submit, comparison_undo, lease_skip

__all__ = [
    "BATTLE_COLUMNS",
    "MAX_DWELL_MS",
    "REQUIRED_COLUMNS",
    "STUDY_SETTINGS",
    "LeaseClosed",
    "LeaseForeign",
    "LeaseNotFound",
    "Served",
    "StudyUnavailable",
    "Vote",
    "VoteInvalid",
    "annotator_invite",
    "battles_import",
    "comparison_submit",
    "comparison_undo",
    "comparisons_import",
    "item_next",
    "lease_skip",
    "leases_expire",
    "servable_items",
    "study_annotators_set",
    "study_create",
    "study_figures_choose",
    "study_pairs",
    "study_pool_sync",
    "study_status_set",
]

"""Automated-score analyses (REFERENCE 4): the tables built from judge scores.

Pure: numpy / pandas / scipy only — no Django, DRF or Celery. Every function takes the long
"scores" frame (one row per configuration × task × judge × run) and returns a DataFrame whose
leading columns are the export contract (DESIGN "Exports"); extra columns may follow.

Input columns: ``configuration, model, harness, workflow, task_id, field, judge, judge_family,
run, gate_passed, cap, quality, score, text, semantic_structure, layout, editability,
visual_detail``. ``score`` is s = g·min(Q, c), NaN when the judge record is missing.

Conventions shared by every table
---------------------------------
* Gate failures score 0 and stay in every denominator (they are ordinary rows with score 0).
* A missing judge record (score NaN) is *excluded* from its group's mean, never counted as 0;
  the number excluded is reported (``missing`` / ``unpaired`` columns).
* ``run`` is the run number, or the string ``"mean"`` for the row computed on the per-task mean
  over runs (a task's mean over the runs that have a record; a task with no record in any run is
  missing).
* Bootstrap (seed and resamples from corpus.protocol, REFERENCE 4): the tasks resampled are all
  task ids of the input frame, sorted (N of them). The index matrix is drawn once:
  ``np.random.default_rng(seed).integers(0, N, size=(resamples, N))`` (:func:`bootstrap_indices`),
  so it depends only on (seed, resamples, N), and every group of every table — and both sides of
  each paired comparison — is resampled with the very same draws. A group's resample mean is the
  mean of its values over the drawn tasks it has a value for (multiplicity counted; tasks with a
  missing record drop out of that resample's mean, like they drop out of the point estimate);
  with no missing records this is exactly ``values[idx].mean(axis=1)``. It is computed for all
  groups at once as ``(C @ V) / (C @ M)`` (C: resample × task draw counts; V: task × group values,
  0 where absent; M: presence mask). The CI is the 2.5 / 97.5 percentile (numpy "linear") of the
  resample means; a resample that drew none of a group's tasks has no mean and is skipped.

Where the tables live
---------------------
This module is the one callers import (``stats.config_scores(...)``); it re-exports the analyses from
the modules that hold them: :mod:`scoring.stats_base` (constants, final score, correlations, bootstrap
primitives), :mod:`scoring.stats_scores` (run means, config-scores, domain-scores),
:mod:`scoring.stats_paired` (paired and harness effects), :mod:`scoring.stats_audit` (structural audit),
:mod:`scoring.stats_judges` (judge runs and families, ICC) and :mod:`scoring.stats_weights`
(rubric-weight sensitivity).
"""

from __future__ import annotations

from collections.abc import Iterable

# Re-exported: callers use ``stats.<name>`` whichever module holds it.
from corpus.protocol import SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED  # noqa: F401
from scoring.stats_audit import AUDIT_COLUMNS, S_HALF_CREDIT, structural_audit  # noqa: F401
from scoring.stats_base import (  # noqa: F401
    AXES,
    CI_LEVEL,
    MEAN_RUN,
    NO_JUDGE_SCORES,
    NoJudgeScores,
    _bootstrap_counts,
    bootstrap_indices,
    correlation,
    final_score,
)
from scoring.stats_judges import icc_2_1, judge_families, judge_runs  # noqa: F401
from scoring.stats_paired import (  # noqa: F401
    DELTA_AXES,
    HARNESS_COLUMNS,
    PAIRED_COLUMNS,
    TIE_TOLERANCE,
    harness_effects,
    paired_effects,
)
from scoring.stats_scores import (  # noqa: F401
    CONFIG_SCORES_COLUMNS,
    DOMAIN_COLUMNS,
    config_scores,
    domain_scores,
    run_means,
)
from scoring.stats_weights import (  # noqa: F401
    DEFAULT_WEIGHTS,
    EDITABILITY_SWEEP,
    NAMED_WEIGHT_VARIANTS,
    SENSITIVITY_COLUMNS,
    SENSITIVITY_EFFECT_COLUMNS,
    WeightSensitivity,
    editability_weights,
    rescore,
    sign_change_editability,
    weight_sensitivity,
    weight_variants,
)

__all__: Iterable[str] = [
    "final_score",
    "bootstrap_indices",
    "run_means",
    "config_scores",
    "paired_effects",
    "harness_effects",
    "domain_scores",
    "structural_audit",
    "icc_2_1",
    "judge_runs",
    "judge_families",
    "editability_weights",
    "weight_variants",
    "rescore",
    "sign_change_editability",
    "weight_sensitivity",
    "WeightSensitivity",
    "DEFAULT_WEIGHTS",
    "NAMED_WEIGHT_VARIANTS",
    "EDITABILITY_SWEEP",
]

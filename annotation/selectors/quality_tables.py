"""Quality control and the other study kinds' tables: each annotator's attention, swapped-repeat and side checks
(annotation.quality.annotator_quality) with the coordinator's exclusions, the overlap items whose votes disagree (the
adjudication page's rows), and the agreement tables of gate-review studies (reviewers with each other and with the
automated gate) and of rating studies (humans against judges, judges against their own repeated runs). The statistics
live in the pure annotation.quality; this module reads the database into the frames it takes."""

from __future__ import annotations

import pandas as pd

from corpus.protocol import TIE_OUTCOMES

from .. import quality
from ..models import Study, StudyKind
from .studies import _current, study_of_kind
from .tables import exclusion_notes


def _label_of(outcome: str, a_id: int, x_id: int) -> str:
    """A vote relative to the item's configurations: x, y, tie_success or tie_failure."""
    if outcome in TIE_OUTCOMES:
        return outcome
    return "x" if (outcome == "a") == (a_id == x_id) else "y"


def quality_votes_frame(*, study: Study) -> pd.DataFrame:
    """One row per current vote of the study, as annotation.quality.annotator_quality takes them."""
    rows = (
        _current(study)
        .filter(lease__isnull=False)
        .exclude(purpose=quality.CALIBRATION)
        .order_by("created_at", "pk")
        .values_list(
            "annotator_name",
            "item_id",
            "purpose",
            "outcome",
            "artifact_a_id",
            "item__artifact_x_id",
            "lease__left_is_x",
            "item__expected_label",
        )
    )
    records = [
        (name, item, purpose, _label_of(outcome, a, x), left, expected)
        for name, item, purpose, outcome, a, x, left, expected in rows
    ]
    return pd.DataFrame(records, columns=["annotator", "item", "purpose", "label", "left_is_x", "expected"])


def annotator_quality_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `annotator-quality` table (annotation.quality.annotator_quality) plus each exclusion's reason."""
    resolved = study_of_kind(study=study, kind=StudyKind.PAIRWISE)
    reasons = dict(resolved.exclusions.values_list("annotator_name", "reason"))
    frame = quality.annotator_quality(quality_votes_frame(study=resolved), excluded=list(reasons))
    frame["exclusion_reason"] = [reasons.get(name, "") for name in frame["annotator"]]
    frame.attrs["notes"] = [
        "all current votes made in the browser (imported votes have no lease and no sides); calibration answers are kept apart and never appear here"
    ] + exclusion_notes(study=resolved)
    return frame


def disagreements(*, study: Study) -> list[dict]:
    """Overlap items where annotators' counted votes disagree, with each vote (relative to the item's x / y and as
    shown) and the coordinator's adjudication if any: the adjudication page's rows."""
    votes = list(
        _current(study)
        .filter(counted=True, purpose=quality.REGULAR)
        .order_by("item_id", "created_at", "pk")
        .values(
            "item_id",
            "annotator_name",
            "outcome",
            "reason",
            "artifact_a_id",
            "item__artifact_x_id",
            "item__figure__task_id",
            "item__config_x__slug",
            "item__config_y__slug",
        )
    )
    by_item: dict[int, list[dict]] = {}
    for vote in votes:
        vote["label"] = _label_of(vote["outcome"], vote["artifact_a_id"], vote["item__artifact_x_id"])
        by_item.setdefault(vote["item_id"], []).append(vote)
    decided = {a.item_id: a for a in study.adjudications.all()}
    rows = []
    for item_id, item_votes in by_item.items():
        latest = {v["annotator_name"]: v for v in item_votes}
        if len(latest) < 2 or len({v["label"] for v in latest.values()}) < 2:
            continue
        first = item_votes[0]
        rows.append(
            {
                "item_id": item_id,
                "task_id": first["item__figure__task_id"],
                "config_x": first["item__config_x__slug"],
                "config_y": first["item__config_y__slug"],
                "votes": list(latest.values()),
                "adjudication": decided.get(item_id),
            }
        )
    return rows


def gate_reviews_frame(*, study: Study) -> pd.DataFrame:
    rows = study.gate_reviews.order_by("pk").values_list("artifact_id", "reviewer", "gate_fail")
    return pd.DataFrame(list(rows), columns=["artifact", "reviewer", "gate_fail"])


def _reviews_notes(study: Study, frame: pd.DataFrame) -> list[str]:
    return [
        f"study {study.name}: {len(frame)} human gate reviews by {frame['reviewer'].nunique()} reviewers; gate failure "
        "is the positive class; each pair is compared over the artifacts both reviewed, nothing else is excluded"
    ]


def gate_review_agreement_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `gate-review-agreement` table: reviewer pairs' raw agreement and Cohen's κ, and Fleiss' κ over all."""
    resolved = study_of_kind(study=study, kind=StudyKind.GATE_REVIEW)
    reviews = gate_reviews_frame(study=resolved)
    frame = quality.gate_review_agreement(reviews)
    frame.attrs["notes"] = _reviews_notes(resolved, reviews)
    return frame


def gate_review_vs_automated_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `gate-review-vs-automated` table: each reviewer against the automated gate (gate_passed false = failure);
    artifacts still waiting for their automated verdict are left out."""
    resolved = study_of_kind(study=study, kind=StudyKind.GATE_REVIEW)
    reviews = gate_reviews_frame(study=resolved)
    automated = dict(
        resolved.gate_reviews.filter(artifact__gate_passed__isnull=False)
        .values_list("artifact_id", "artifact__gate_passed")
        .distinct()
    )
    reference = pd.Series({pk: not passed for pk, passed in automated.items()}, dtype=bool)
    frame = quality.agreement_with_reference(reviews, reference)
    pending = reviews["artifact"].nunique() - len(automated)
    frame.attrs["notes"] = _reviews_notes(resolved, reviews) + [
        f"left out {pending} reviewed artifacts with no automated gate verdict yet"
    ]
    return frame


RATINGS_FRAME_COLUMNS = [
    "artifact",
    "axis",
    "rater",
    "rater_kind",
    "run",
    "rating",
    "configuration",
    "category",
    "judge_family",
]


def ratings_frame(*, study: Study) -> pd.DataFrame:
    """One row per rating of the study, with its artifact's configuration (slug), category and judge family."""
    rows = study.ratings.order_by("pk").values_list(
        "artifact_id",
        "axis",
        "rater",
        "rater_kind",
        "run",
        "rating",
        "artifact__configuration__slug",
        "category",
        "judge_family",
    )
    return pd.DataFrame(list(rows), columns=RATINGS_FRAME_COLUMNS)


def rating_agreement_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-agreement` table: human mean rating per artifact against each judge's mean over its runs."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    ratings = ratings_frame(study=resolved)
    frame = quality.rating_agreement(ratings)
    humans = ratings[ratings["rater_kind"] == "human"]
    frame.attrs["notes"] = [
        f"study {resolved.name}: {len(humans)} human ratings by {humans['rater'].nunique()} raters; per axis and judge "
        "only artifacts rated by both humans and that judge"
    ]
    return frame


_CONSISTENCY_NOTE = (
    "majority_agreement (PPTArena): the share of examples (artifacts) on which more than half of the judge's runs give "
    "the same rating; sd_pct: the mean over examples of the SD of the run scores (population SD, ddof 0) as a "
    "percentage of the 0-5 scale (SD / 5 x 100)"
)


def rating_consistency_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-consistency` table: each judge against its own repeated runs (PPTArena's definitions)."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    frame = quality.rating_consistency(ratings_frame(study=resolved))
    frame.attrs["notes"] = [
        f"study {resolved.name}: judge ratings only; artifacts rated in fewer than 2 runs left out",
        _CONSISTENCY_NOTE,
        "modal_share_mean is NOT the paper's majority agreement: the mean share of runs equal to the example's modal "
        "rating, kept for comparison with earlier exports",
    ]
    return frame


def rating_table8_frame(*, study: str | None = None) -> pd.DataFrame:
    """PPTArena Table 8 (`rating-table8`): per axis and judge, human–judge Spearman / Pearson and the judge's majority
    agreement and SD (%) over its runs."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    ratings = ratings_frame(study=resolved)
    frame = quality.rating_table8(ratings)
    humans = ratings[ratings["rater_kind"] == "human"]
    frame.attrs["notes"] = [
        f"study {resolved.name}: correlations over the artifacts rated by both humans ({len(humans)} human ratings) "
        "and the judge (n_human; the human mean per artifact against the judge's mean over its runs); consistency over "
        "the artifacts the judge rated in at least 2 runs (n_runs)",
        _CONSISTENCY_NOTE,
    ]
    return frame


def rating_system_means_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-system-means` table: per axis, source (human, or a judge family) and category (overall and each),
    each configuration's mean rating."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    ratings = ratings_frame(study=resolved)
    frame = quality.rating_system_means(ratings)
    uncategorised = ratings.loc[ratings["category"] == "", "artifact"].nunique()
    frame.attrs["notes"] = [
        f"study {resolved.name}: every rating, human and judge; a configuration's mean is the mean over its artifacts "
        "of each artifact's mean rating (over raters, and over a judge's runs), n = artifacts",
        "source: human, or the judge family (the import's judge_family, else the judge's model id); category "
        f"{quality.OVERALL} is every artifact, the others the item's category (the import's, else the figure's field)",
        f"{uncategorised} rated artifacts have no category and count in {quality.OVERALL} only",
    ]
    return frame


def rating_cross_judge_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-cross-judge` table: Kendall τ between two judge families' system orders per axis, and the systems
    whose rank moves."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    ratings = ratings_frame(study=resolved)
    frame = quality.rating_cross_judge(ratings)
    judged = ratings[ratings["rater_kind"] == "judge"]
    families = quality.rating_system_means(judged)["source"].nunique() if len(judged) else 0
    frame.attrs["notes"] = [
        f"study {resolved.name}: judge ratings only (humans excluded), {families} judge families (the import's "
        "judge_family, else the judge's model id); system = configuration, its overall mean as in rating-system-means",
        "a pair of families is compared on an axis only when both rated every configuration any judge rated on it; "
        "Kendall tau-b (scipy.stats.kendalltau) between their configuration means; moved: 'configuration rank under "
        "family_a -> rank under family_b' (1 = best, ties share the better rank)",
    ]
    return frame

"""The comparisons and coverage tables (annotation/selectors.py)."""

import pytest

from annotation import selectors
from tests.annotation.data import annotator

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import make_study, vote


def test_comparisons_and_coverage_tables():
    study, figs, configs = make_study(target_per_pair=3, overlap_rate=0)
    user = annotator()
    lease, cmp_ = vote(study, user, outcome="b")
    frame = selectors.comparisons_frame(study="pilot")
    assert list(frame.columns[:15]) == [
        "comparison_id",
        "study",
        "task_id",
        "annotator",
        "config_a",
        "config_b",
        "left_config",
        "outcome",
        "reason",
        "created_at",
        "dwell_ms",
        "render_sha256_a",
        "render_sha256_b",
        "audit_sha256_a",
        "audit_sha256_b",
    ]
    row = frame.iloc[0]
    assert row["left_config"] == row["config_a"] and row["annotator"] == "ann-one" and row["outcome"] == "b"
    assert row["render_sha256_a"] == cmp_.artifact_a.render_sha256 and len(row["audit_sha256_a"]) == 64
    assert row["artifact_a_id"] == cmp_.artifact_a_id
    pair = {row["config_a"], row["config_b"]}
    assert row["matchup"] == ("within" if pair == {"cfg-alpha-direct", "cfg-alpha-specialized"} else "across")
    coverage = selectors.coverage_frame(study="pilot")
    assert len(coverage) == 6 and list(coverage.columns[:4]) == ["config_x", "config_y", "n", "target"]
    assert coverage["n"].sum() == 1 and set(coverage["target"]) == {3}
    assert coverage.iloc[0][["config_x", "config_y"]].tolist() == ["cfg-alpha-direct", "cfg-alpha-specialized"]

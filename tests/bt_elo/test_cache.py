"""Elo and agreement analyses are computed once per state of the votes and scores, and recomputed when it changes."""

import numpy as np
import pytest

from bt_elo import bradley_terry, selectors
from core.tables import table_frame
from tests.bt_elo.test_tables_and_pages import study  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def computations(monkeypatch):
    """How many times each expensive computation ran."""
    calls = {"elo": 0, "agreement": 0}
    bootstrap, agreement = bradley_terry.bootstrap_elo, selectors.agreement.direction_agreement

    def counted_bootstrap(*args, **kwargs):
        calls["elo"] += 1
        return bootstrap(*args, **kwargs)

    def counted_agreement(*args, **kwargs):
        calls["agreement"] += 1
        return agreement(*args, **kwargs)

    monkeypatch.setattr(bradley_terry, "bootstrap_elo", counted_bootstrap)
    monkeypatch.setattr(selectors.agreement, "direction_agreement", counted_agreement)
    return calls


def test_elo_is_bootstrapped_once_per_state_of_the_votes(study, computations):  # noqa: F811
    from annotation.models import Comparison

    first = table_frame("elo", study="pilot")
    assert computations["elo"] == 1
    selectors.rank_probability_table(study="pilot")
    selectors.elo_table(study="pilot")
    assert computations["elo"] == 1  # every Elo table (and the live leaderboard) reads the one bootstrap
    assert table_frame("elo", study="pilot").equals(first)
    # a new vote changes the state: recomputed, and the new vote is in it
    vote = Comparison.objects.filter(study__name="pilot").first()
    vote.pk, vote.comparison_id = None, "c-new"
    vote.save()
    changed = table_frame("elo", study="pilot")
    assert computations["elo"] == 2 and changed["n"].sum() == first["n"].sum() + 2
    # the cached answer is the computed one
    uncached = selectors.elo_bootstrap.uncached(study="pilot")[2]
    cached = selectors.elo_bootstrap(study="pilot")[2]
    assert np.array_equal(cached.samples, uncached.samples) and np.array_equal(cached.ratings.elo, uncached.ratings.elo)


def test_agreement_is_recomputed_when_judge_scores_change(study, computations):  # noqa: F811
    from scoring.models import JudgeRecord

    first = table_frame("agreement-margin", study="pilot")
    runs = computations["agreement"]
    assert runs >= 1
    assert table_frame("agreement-margin", study="pilot").equals(first) and computations["agreement"] == runs
    record = JudgeRecord.objects.order_by("pk").first()
    record.score, record.text = record.score - 10, record.text - 10
    record.save()
    table_frame("agreement-margin", study="pilot")
    assert computations["agreement"] == 2 * runs


@pytest.mark.parametrize("table", ["agreement-matchup", "agreement-3class"])
def test_every_agreement_table_is_computed_once_per_state_of_the_votes_and_scores(study, table, monkeypatch):  # noqa: F811
    from annotation.models import Comparison

    calls = []
    for name in ("matchup_agreement", "three_class_agreement"):
        original = getattr(selectors.agreement, name)
        monkeypatch.setattr(
            selectors.agreement, name, lambda *a, _original=original, **k: calls.append(1) or _original(*a, **k)
        )
    first = table_frame(table, study="pilot")
    runs = len(calls)
    assert runs >= 1 and table_frame(table, study="pilot").equals(first) and len(calls) == runs
    vote = Comparison.objects.filter(study__name="pilot").first()
    vote.pk, vote.comparison_id = None, "c-new"
    vote.save()
    table_frame(table, study="pilot")
    assert len(calls) == 2 * runs

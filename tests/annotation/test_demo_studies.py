"""The demo bundle's gate reviews and ratings (demo.generator) load through the real importers, and the tables
recover what the generator put in: reviewers who slip 8 % of the time agree strongly; ratings track the judge."""

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from agents.models import Artifact
from agents.services import artifacts_import
from annotation import selectors
from annotation.services.gate_reviews import gate_reviews_import
from annotation.services.ratings import ratings_import
from corpus.services import corpus_import
from demo.generator.gate_reviews import GATE_REVIEWERS
from demo.generator.ratings import RATING_AXES
from demo.generator.writer import generate_demo

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return out, generate_demo(out)


def test_demo_gate_reviews_and_ratings_import_and_tabulate(bundle):
    out, summary = bundle
    corpus_import(manifest=out / "manifest.jsonl", images_dir=out / "images")
    artifacts_import(run_root=out / "runs", configurations_file=out / "configurations.toml")

    reviews = gate_reviews_import(path=out / "gate_reviews.csv")
    assert reviews.rejected == [] and reviews.created == 8 * 10 * 3
    assert gate_reviews_import(path=out / "gate_reviews.csv").unchanged == reviews.created
    table = selectors.gate_review_agreement_frame(study="gate-review").set_index(["reviewer_a", "reviewer_b"])
    raw = pd.read_csv(out / "gate_reviews.csv")
    wide = raw.pivot_table(index=["task_id", "configuration"], columns="reviewer", values="gate_fail", aggfunc="last")
    first, second = GATE_REVIEWERS[:2]
    row = table.loc[(first, second)]
    assert row["n"] == 80
    assert row["kappa"] == pytest.approx(cohen_kappa_score(wide[first], wide[second]))
    assert row["agreement"] > 0.75 and table.loc[("all", ""), "n"] == 80
    pending = selectors.gate_review_vs_automated_frame(study="gate-review")
    # Not audited yet: only a missing output has its verdict at import (the gate fails on the missing file itself).
    reviewed = set(wide.index)
    missing = set(summary.gate_failures["missing"])  # (configuration, task id)
    decided = sum((configuration, task) in missing for task, configuration in reviewed)
    assert list(pending["n"]) == [decided] * 3
    assert f"left out {80 - decided} reviewed artifacts with no automated gate verdict yet" in pending.attrs["notes"]
    # The automated gate as the audit would set it: failed for the generator's missing / corrupt / multi-slide decks.
    failed = {tuple(k) for kind in summary.gate_failures.values() for k in kind}
    for artifact in Artifact.objects.select_related("configuration", "figure"):
        artifact.gate_passed = (artifact.configuration.slug, artifact.figure.task_id) not in failed
        artifact.save(update_fields=["gate_passed"])
    versus = selectors.gate_review_vs_automated_frame(study="gate-review").set_index("reviewer")
    assert list(versus["n"]) == [80, 80, 80]
    automated = [(c, t) in failed for t, c in wide.index]
    assert versus.loc[first, "kappa"] == pytest.approx(cohen_kappa_score(wide[first].astype(bool), automated))

    ratings = ratings_import(path=out / "ratings.csv")
    assert ratings.rejected == [] and ratings.created == 6 * 10 * (2 + 3) * 2
    agreement = selectors.rating_agreement_frame(study="ratings").set_index("axis")
    assert set(agreement.index) == set(RATING_AXES)
    assert (agreement["n"] == 60).all() and (agreement["spearman"] > 0.5).all()
    consistency = selectors.rating_consistency_frame(study="ratings")
    assert (consistency["n"] == 60).all() and (consistency["majority_agreement"] > 0.5).all()

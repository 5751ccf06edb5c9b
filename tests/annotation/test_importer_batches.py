"""Import of battle rows in batches: good rows kept, bad ones named, queries per batch bounded (annotation/services/importer.py)."""

import itertools
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import Comparison, Item, StudyPair
from annotation.services import importer
from tests.annotation.data import SLUGS, annotator, build_corpus

pytestmark = pytest.mark.django_db


def battle_rows(n: int, *, figures: int, study: str = "ext", prefix: str = "c") -> list[dict]:
    """n valid rows cycling over figures and the six pairs of SLUGS, alternating display order and outcome."""
    pairs = list(itertools.combinations(SLUGS, 2))
    rows = []
    for i in range(n):
        x, y = pairs[i % len(pairs)]
        a, b = (x, y) if i % 2 == 0 else (y, x)
        rows.append(
            {
                "comparison_id": f"{prefix}-{i}",
                "study": study,
                "task_id": f"task-fig-{i % figures:04d}",
                "annotator": "ann-one" if i % 3 else "someone-external",
                "config_a": a,
                "config_b": b,
                "outcome": ("a", "b", "tie_success", "tie_failure")[i % 4],
                "created_at": f"2025-01-02T03:04:{i % 60:02d}Z",
                "dwell_ms": 4000 + i,
            }
        )
    return rows


def write_jsonl(path, rows) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def counters(study_name: str):
    items = sorted(Item.objects.filter(study__name=study_name).values_list("pk", "votes", "open_count"))
    pairs = sorted(StudyPair.objects.filter(study__name=study_name).values_list("config_x_id", "config_y_id", "votes"))
    return items, pairs


def test_batches_keep_good_rows_name_bad_ones_and_count_like_a_rebuild(tmp_path):
    build_corpus(figures=5)
    annotator("ann-one")
    rows = battle_rows(20, figures=5)
    rows[4] = {**rows[4], "task_id": "task-nope"}
    rows[9] = {**rows[9], "comparison_id": "c-2"}  # a duplicate within the file: already stored by then
    rows[13] = {**rows[13], "config_b": rows[13]["config_a"]}
    path = tmp_path / "battles.jsonl"
    write_jsonl(path, rows[:11] + ["{not json"] + rows[11:])
    report = importer.comparisons_import(path=path, batch_size=3)  # batches split rows, errors and the duplicate
    assert report.created == 17 and report.unchanged == 1
    assert report.rejected == [
        f"{path}:5 task_id: unknown figure 'task-nope'",
        f"{path}:12 $: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{path}:15 config_b: a configuration cannot be compared with itself",
    ]
    stored = Comparison.objects.filter(study__name="ext")
    assert stored.count() == 17 and set(stored.values_list("imported", "counted")) == {(True, True)}
    linked = dict(stored.values_list("annotator_name", "annotator__username").distinct())
    assert linked == {"ann-one": "ann-one", "someone-external": None}
    # every vote landed on the item of its (figure, pair), with x before y in declaration order
    for c in stored.select_related("item", "artifact_a", "artifact_b", "item__config_x", "item__config_y"):
        assert {c.artifact_a_id, c.artifact_b_id} == {c.item.artifact_x_id, c.item.artifact_y_id}
        assert c.item.config_x.position < c.item.config_y.position and c.left_config_id == c.artifact_a.configuration_id
    kept = counters("ext")
    assert sum(v for _, v, _ in kept[0]) == 17
    services.study_pool_sync(study=stored.first().study, force=True)
    items_after, pairs_after = counters("ext")
    votes_of = {pk: v for pk, v, _ in items_after}
    assert all(votes_of[pk] == v for pk, v, _ in kept[0])  # the bulk counter changes equal a rebuild from the rows
    assert sum(v for _, _, v in pairs_after) == 17
    again = importer.comparisons_import(path=path, batch_size=7)
    assert (again.created, again.unchanged, len(again.rejected)) == (0, 18, 3)


def test_queries_per_batch_do_not_grow_with_rows(tmp_path):
    build_corpus(figures=6)
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write_jsonl(small, battle_rows(6, figures=6, study="s1", prefix="s"))
    write_jsonl(large, battle_rows(120, figures=6, study="s2", prefix="l"))
    counted = []
    for path in (small, large):
        with CaptureQueriesContext(connection) as queries:
            report = importer.comparisons_import(path=path)
        counted.append(len(queries))
        assert not report.rejected
    print("queries for 6 rows, 120 rows:", counted)
    assert counted[1] <= counted[0] + 5  # one set of lookups and bulk writes per batch, not per row


def test_a_batch_the_database_refuses_is_written_row_by_row(tmp_path, monkeypatch):
    build_corpus(figures=3)
    first = tmp_path / "first.jsonl"
    rows = battle_rows(4, figures=3)
    write_jsonl(first, rows[:1])
    assert importer.comparisons_import(path=first).created == 1
    # Another writer stored c-0 after this batch was validated: the unique comparison_id refuses the bulk insert.
    lookups = importer._BattleImport.lookups

    def stale(self, values):
        found = lookups(self, values)
        found.stored_ids.clear()
        return found

    monkeypatch.setattr(importer._BattleImport, "lookups", stale)
    second = tmp_path / "second.jsonl"
    write_jsonl(second, rows)
    report = importer.comparisons_import(path=second)
    assert report.created == 3 and len(report.rejected) == 1
    assert report.rejected[0].startswith(f"{second}:1 row: refused by the database")
    assert sorted(Comparison.objects.values_list("comparison_id", flat=True)) == ["c-0", "c-1", "c-2", "c-3"]
    assert sum(Item.objects.filter(study__name="ext").values_list("votes", flat=True)) == 4

"""A design fuzzer: hypothesis draws whole experiment designs and every page, image, table API and plot must answer
200 or a 4xx with a sentence, never a 5xx.

A design is what a real team brings: configurations that vary on any attribute (model, harness, workflow, reasoning
effort, a prompt version), partial runs (artifacts absent, failing the gate, not rendered yet), judge runs covering some
artifacts, studies of every kind (pairwise, gate review, rating) with votes that are absent, all ties or anything, and
studies paused or closed. The data arrives through the importers a user would run, on whichever database the suite
runs on.
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from agents.models import Artifact, Configuration
from annotation.models import Study
from annotation.services.artifact_studies import artifact_study_create
from annotation.services.gate_reviews import gate_reviews_import
from annotation.services.importer import comparisons_import
from annotation.services.ratings import ratings_import
from annotation.services.studies import study_create, study_status_set
from core.errors import AppError
from core.roles import ANNOTATOR, COORDINATOR, RESEARCHER
from core.tables import TABLES
from scoring.services import judge_records_import
from tests.factories import artifact_create, figure_create

OUTCOMES = ("a", "b", "tie_success", "tie_failure")
PLOTS = ("elo", "coverage", "agreement", "scores", "judge-runs", "paired-effects")

configuration_attributes = st.fixed_dictionaries(
    {
        # Small alphabets, so that drawn configurations often share all but one attribute (effort sweeps, prompt
        # variants, workflow pairs) or none.
        "model": st.sampled_from(["m-one", "m-one", "m-two"]),
        "harness": st.sampled_from(["codex", "codex", "claude-code"]),
        "workflow": st.sampled_from(["direct", "specialized", "agentic"]),
        "reasoning_effort": st.sampled_from(["low", "high", "max"]),
        "attributes": st.sampled_from([{}, {"prompt": "p1"}, {"prompt": "p2"}]),
    }
)
artifact_states = st.sampled_from(["absent", "pass", "pass", "pass", "fail", "pending"])
vote_patterns = st.sampled_from(["none", "ties", "any", "one-sided"])
study_kinds = st.sampled_from(["pairwise", "pairwise", "gate_review", "rating"])
statuses = st.sampled_from(["active", "active", "paused", "closed"])


def _rows_file(directory: Path, name: str, rows: list[dict]) -> Path:
    path = directory / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        return path
    columns = list(rows[0]) if rows else ["task_id"]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


class DesignFuzzer(TestCase):
    """One drawn design per example, each in its own rolled-back transaction."""

    def _user(self, name: str, role: str):
        from django.contrib.auth.models import Group

        user = get_user_model().objects.create_user(name, password="x")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        return user

    def _build(self, data, directory: Path) -> list[Study]:
        specs = data.draw(st.lists(configuration_attributes, min_size=1, max_size=6), label="configurations")
        figures = [figure_create(f"t-{n:03d}", field=("cs.CV", "cs.AI")[n % 2], index=n) for n in range(3)]
        configurations = [
            Configuration.objects.create(slug=f"cfg-{n}", label=f"Config {n}", position=n, **spec)
            for n, spec in enumerate(specs)
        ]
        for configuration in configurations:
            for figure in figures:
                state = data.draw(artifact_states, label="artifact")
                if state == "pass":
                    artifact_create(configuration, figure)
                elif state == "fail":
                    artifact_create(configuration, figure, gate_passed=False, reason="missing")
                elif state == "pending":
                    Artifact.objects.create(configuration=configuration, figure=figure)
        passed = list(Artifact.objects.filter(gate_passed=True).select_related("configuration", "figure"))
        records = []
        for run in range(1, data.draw(st.sampled_from([0, 1, 1, 2]), label="judge runs") + 1):
            for artifact in passed:
                if data.draw(st.sampled_from([True, True, False]), label="judged"):
                    sub = {"text": 15, "semantic_structure": 20, "layout": 10, "editability": 20, "visual_detail": 8}
                    sub["text"] = data.draw(st.integers(0, 20), label="text score")
                    records.append(
                        {
                            "task_id": artifact.figure.task_id,
                            "configuration": artifact.configuration.slug,
                            "judge": "judge-x",
                            "judge_family": "family-x",
                            "run": run,
                            "subscores": sub,
                            "score": sum(sub.values()),
                            "major_errors": [],
                            "minor_errors": [],
                            "editability_assessment": "native",
                            "reason": "drawn",
                        }
                    )
        if records:
            judge_records_import(path=_rows_file(directory, "judge.jsonl", records))

        annotator = self._user("ann", ANNOTATOR)
        studies = []
        slugs = [c.slug for c in configurations]
        for number in range(data.draw(st.integers(0, 3), label="studies")):
            kind = data.draw(study_kinds, label="kind")
            chosen = data.draw(st.lists(st.sampled_from(slugs), min_size=1, max_size=len(slugs), unique=True))
            name = f"s{number}-{kind.replace('_', '-')}"
            try:
                if kind == "pairwise":
                    study = study_create(name=name, configurations=chosen, annotators=[annotator])
                else:
                    study = artifact_study_create(name=name, kind=kind, configurations=chosen, annotators=[annotator])
            except AppError:
                continue  # a design the service refuses (one configuration) is refused with a sentence
            self._votes(data, directory, study, chosen, passed)
            study_status_set(study=study, status=data.draw(statuses, label="status"))
            studies.append(study)
        return studies

    def _votes(self, data, directory: Path, study: Study, chosen: list[str], passed: list[Artifact]) -> None:
        usable = [a for a in passed if a.configuration.slug in chosen]
        pattern = data.draw(vote_patterns, label="votes")
        if pattern == "none" or not usable:
            return
        count = data.draw(st.integers(1, 12), label="vote count")
        if study.kind == "pairwise":
            rows = []
            for n in range(count):
                a = data.draw(st.sampled_from(usable))
                partners = [
                    b for b in usable if b.figure_id == a.figure_id and b.configuration_id != a.configuration_id
                ]
                if not partners:
                    continue
                b = data.draw(st.sampled_from(partners))
                outcome = {"ties": "tie_success", "one-sided": "a"}.get(pattern) or data.draw(st.sampled_from(OUTCOMES))
                rows.append(
                    {
                        "comparison_id": f"{study.name}-{n}",
                        "study": study.name,
                        "task_id": a.figure.task_id,
                        "annotator": data.draw(st.sampled_from(["r1", "r2"])),
                        "config_a": a.configuration.slug,
                        "config_b": b.configuration.slug,
                        "left_config": a.configuration.slug,
                        "outcome": outcome,
                        "reason": "drawn",
                        "created_at": f"2026-07-06T09:{n:02d}:00Z",
                        "dwell_ms": 20000,
                    }
                )
            if rows:
                comparisons_import(path=_rows_file(directory, f"{study.name}.csv", rows))
        elif study.kind == "gate_review":
            rows = [
                {
                    "task_id": a.figure.task_id,
                    "configuration": a.configuration.slug,
                    "reviewer": reviewer,
                    "gate_fail": str(pattern == "one-sided" or data.draw(st.booleans())).lower(),
                    "reason": "",
                }
                for a in usable[:count]
                for reviewer in ("r1", "r2")
            ]
            gate_reviews_import(path=_rows_file(directory, f"{study.name}.csv", rows), study=study.name)
        else:
            rows = [
                {
                    "task_id": a.figure.task_id,
                    "configuration": a.configuration.slug,
                    "rater": rater,
                    "rater_kind": "human",
                    "run": 1,
                    "axis": axis,
                    "rating": 3 if pattern == "ties" else data.draw(st.integers(1, 5)),
                }
                for a in usable[:count]
                for rater in ("r1", "r2")
                for axis in ("instruction_following", "visual_quality")
            ]
            ratings_import(path=_rows_file(directory, f"{study.name}.csv", rows), study=study.name)

    def _check(self, client: Client, url: str, *, post: dict | None = None):
        """Note the answer if it is a 5xx, or a 4xx without a sentence; every URL of the example is tried."""
        response = client.get(url) if post is None else client.post(url, post, content_type="application/json")
        body = b"".join(response.streaming_content) if response.streaming else response.content
        if response.status_code >= 500:
            error = response.exc_info[1] if getattr(response, "exc_info", None) else ""
            self.failures.append(f"{url} answered {response.status_code}: {error!r}")
        elif response.status_code >= 400 and not re.search(r"[A-Za-z]{3,} [a-z]{2,}", body.decode("utf-8", "replace")):
            self.failures.append(f"{url} answered {response.status_code} without a sentence")
        return response

    # No shrinking: a failing example already lists every URL that failed and why; shrinking a design of this size
    # takes minutes for little gain.
    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
    )
    @given(data=st.data())
    def test_every_page_table_and_plot_answers_a_drawn_design(self, data):
        self.failures: list[str] = []
        cache.clear()  # cached analyses are keyed by counts and ids, which a rolled-back example repeats
        with tempfile.TemporaryDirectory() as folder:
            studies = self._build(data, Path(folder))
        researcher = Client(raise_request_exception=False)
        researcher.force_login(self._user("res", RESEARCHER))
        coordinator = Client(raise_request_exception=False)
        coordinator.force_login(self._user("coord", COORDINATOR))
        annotator = Client(raise_request_exception=False)
        annotator.force_login(get_user_model().objects.get(username="ann"))

        queries = [""] + [f"?study={s.name}" for s in studies]
        for query in queries:
            for page in ("/results/", "/results/elo", "/results/agreement", "/results/elo/stability.json"):
                self._check(researcher, page + query)
            for plot in PLOTS:
                self._check(researcher, f"/results/plot/{plot}.png{query}")
        query = data.draw(st.sampled_from(queries), label="table query")
        for name in sorted(TABLES):
            fmt = data.draw(st.sampled_from(["csv", "json", "latex"]), label="format")
            # the table's own parameters (one it does not take is a 400 with a sentence, tried once below)
            taken = query.lstrip("?") if "study" in TABLES[name].parameters else ""
            run = (
                data.draw(st.sampled_from(["", "&run=1", "&run=mean"]), label="run")
                if "run" in TABLES[name].parameters
                else ""
            )
            self._check(researcher, f"/api/tables/{name}/?format={fmt}&{taken}{run}")
        self._check(researcher, "/api/tables/corpus-fields/?format=csv&run=2")
        self._check(coordinator, "/coordinate/")
        for study in studies:
            self._check(coordinator, f"/coordinate/{study.name}/")
            self._check(coordinator, f"/coordinate/{study.name}/quality/")
            self._check(researcher, f"/results/elo/live.json?study={study.name}")
        for page in ("/annotate/", "/annotate/review/", "/annotate/rate/", "/annotate/calibration/"):
            self._check(annotator, page)
        for study in studies:
            self._check(annotator, f"/annotate/{study.name}/")
        # The screens fetch their items from these APIs; every image they hand out must answer too. The artifact
        # screens are walked item by item (each skipped in turn), so a slide without a rendering is reached.
        for api in ("/api/annotate/next/", "/api/annotate/calibration/next/"):
            for url in _image_urls(self._check(annotator, api, post={}).content.decode("utf-8", "replace")):
                self._check(annotator, url)
        self._check(annotator, "/api/annotate/summary/")
        for screen in ("review", "rate"):
            for _ in range(12):
                response = self._check(annotator, f"/api/annotate/{screen}/next/", post={})
                text = response.content.decode("utf-8", "replace")
                for url in _image_urls(text):
                    self._check(annotator, url)
                token = re.search(r'"token": ?"([^"]+)"', text)
                if response.status_code != 200 or token is None:
                    break
                self._check(
                    annotator, f"/api/annotate/{screen}/skip/", post={"token": token.group(1), "reason": "fuzz"}
                )
        self.assertEqual(self.failures, [])


def _image_urls(text: str) -> list[str]:
    """Image URLs in a page (src="…") or an API payload ("…": "/annotate/img/…")."""
    return sorted(set(re.findall(r'"(/annotate/(?:img|artifact-img)/[^"]+)"', text)))

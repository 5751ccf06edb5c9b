"""`manage.py judge --batch` end to end against the stand-in's Files and Batches endpoints: submit, poll, ingest, at
half the price, carried on by the same command after a restart without a second batch."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring import batch_runs, services
from scoring.judge_batch import BatchApi
from scoring.judge_client import JudgeSettings, make_client
from scoring.models import JudgeBatch, JudgeRecord, JudgeRun
from scoring.rubric import load_rubric
from tests.scoring.judge_load import answer_well, artifacts_to_judge
from tests.scoring.judge_server import JudgeServer, error_body

pytestmark = pytest.mark.django_db
# (100 x 1000 + 20 x 5000) / 1e6 = $0.20 a judgement at the synchronous price, $0.10 in a batch
PRICES = dict(price_input=1000.0, price_output=5000.0)


def batch_command(server: JudgeServer, **options) -> str:
    out = io.StringIO()
    call_command(
        "judge",
        judge_model="gpt-judge",
        base_url=server.base_url,
        run=1,
        api_key_env="",
        batch=True,
        no_wait=True,
        stdout=out,
        stderr=io.StringIO(),
        **PRICES,
        **options,
    )
    return out.getvalue()


def test_submit_poll_and_ingest_carry_on_across_restarts_with_one_batch_at_half_price():
    ids = artifacts_to_judge(6)
    with JudgeServer(responder=answer_well, batch_polls=3) as server:
        out = batch_command(server)  # submits, polls once: in progress
        assert "batch batch_1 of gpt-judge run 1: 6 requests submitted" in out and "in_progress" in out
        run = JudgeRun.objects.get(judge="gpt-judge", run=1)
        assert list(run.records.values_list("status", flat=True)) == ["running"] * 6  # claimed while in the batch
        # A restart: the same command polls the stored batch; nothing is submitted again.
        out = batch_command(server)
        assert "submitted" not in out and "in_progress; run the same command again to carry on" in out
        out = batch_command(server)  # the third poll completes it: downloaded and stored
        assert (
            "completed: 6 judged, 0 failed; cost $0.60 at the batch price "
            "($1.20 at the synchronous price: $0.60 saved)" in out
        )
        assert batch_command(server) == "gpt-judge run 1: nothing left to judge\n"
        assert len(server.batches) == 1 and server.batches["batch_1"]["endpoint"] == "/v1/responses"
        lines = server.files[server.batches["batch_1"]["input_file_id"]][1].decode().splitlines()
        bodies = [json.loads(line) for line in lines]
    assert sorted(int(b["custom_id"][1:]) for b in bodies) == sorted(ids)
    assert {b["url"] for b in bodies} == {"/v1/responses"} and all(b["body"]["model"] == "gpt-judge" for b in bodies)
    records = JudgeRecord.objects.filter(judge_run=run)
    assert sorted(records.values_list("artifact_id", flat=True)) == sorted(ids)
    assert {(r.status, r.score, round(r.cost_usd, 6)) for r in records} == {("ok", 83.0, 0.1)}
    assert all(r.prompt_hash and r.lease_until is None for r in records)
    run.refresh_from_db()
    assert run.status == "done" and JudgeBatch.objects.get().status == "ingested"


def test_a_failed_line_is_a_failed_record_and_the_next_batch_asks_for_it_alone():
    artifacts_to_judge(3)
    with JudgeServer(responder=answer_well, batch_polls=1) as server:
        server.push(500, error_body("upstream overloaded"))  # the batch's first line
        with pytest.raises(CommandError, match="1 judgements failed"):
            batch_command(server)
        failed = JudgeRecord.objects.get(status="failed")
        assert failed.score is None and "HTTP 500" in failed.error and "upstream overloaded" in failed.error
        out = batch_command(server)
        assert "1 requests submitted" in out and "1 judged, 0 failed" in out
        assert len(server.batches) == 2
    assert set(JudgeRecord.objects.values_list("status", flat=True)) == {"ok"}


def test_a_batch_created_just_before_a_kill_is_found_again_not_paid_for_twice():
    artifacts_to_judge(2)
    with JudgeServer(responder=answer_well, batch_polls=1) as server:
        settings = JudgeSettings(protocol="responses", base_url=server.base_url, model="gpt-judge", api_key_env="")
        run = JudgeRun.objects.create(judge="gpt-judge", family="gpt", run=1, rubric_version="refig-v1")
        batch = batch_runs.judge_batch_prepare(
            judge_run=run,
            settings=settings,
            rubric_version="refig-v1",
            artifacts=services.artifacts_to_judge(judge_run=run),
        )
        # The killed command had uploaded the file (and stored its id) and created the batch, but not stored its id.
        api = BatchApi(settings)
        client = make_client(settings, load_rubric("refig-v1"))
        batch_runs._submit(batch, api, client)
        JudgeBatch.objects.filter(pk=batch.pk).update(batch_id="", status="prepared")
        out = batch_command(server)
        api.close()
    assert len(server.batches) == 1 and "2 judged, 0 failed" in out
    assert JudgeBatch.objects.get().batch_id == "batch_1"

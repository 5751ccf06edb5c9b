"""The judge task claims its record before calling the API: a redelivery (a killed worker's message coming back, or
the same message delivered twice) never pays for a second call, and a dead worker's claim is taken over once stale."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from scoring import services, tasks
from scoring.judge_client import JudgeSettings
from scoring.models import JudgeRecord
from tests.factories import artifact_create, configuration_create, figure_create
from tests.scoring.judge_server import JudgeServer, reply_body
from tests.scoring.test_scoring_integration import reply

RUBRIC = "refig-v1"


@pytest.fixture
def judged(monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-local-test")
    artifact = artifact_create(configuration_create("m1-direct", model="m1"), figure_create("t0"))
    judge_run = services.judge_run_ensure(judge="qwen-judge", family="qwen", run=1, rubric_version=RUBRIC)
    with JudgeServer() as server:
        settings = JudgeSettings(protocol="chat", base_url=server.base_url, model="qwen-judge", api_key_env="JUDGE_KEY")
        yield artifact, judge_run, settings, server


def good_reply(server, delay=0.0):
    server.push(200, reply_body("chat", json.dumps(reply(18, 25, 12, 20, 8))), delay=delay)


@pytest.mark.django_db
def test_a_redelivery_of_a_claimed_or_finished_judgement_calls_nothing(judged):
    artifact, judge_run, settings, server = judged
    # The first worker claimed the record and was killed before the reply came back.
    claim = services.judge_record_claim(artifact=artifact, judge_run=judge_run, rubric_version=RUBRIC)
    assert claim.status == "running" and claim.score is None
    # Its message is delivered again while the claim is fresh: the task answers "running", no call is made.
    run_task = tasks.judge_artifact.apply(args=(artifact.pk, judge_run.pk, settings.__dict__, RUBRIC))
    assert run_task.get() == "running" and server.requests == []
    # A claim older than the hard time limit belongs to a dead worker: the next delivery takes it over, once.
    JudgeRecord.objects.filter(pk=claim.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=services.JUDGE_CLAIM_STALE_SECONDS + 1)
    )
    good_reply(server)
    assert tasks.judge_artifact.apply(args=(artifact.pk, judge_run.pk, settings.__dict__, RUBRIC)).get() == "ok"
    assert len(server.requests) == 1
    record = JudgeRecord.objects.get(artifact=artifact, judge_run=judge_run)
    assert (record.pk, record.status, record.score) == (claim.pk, "ok", 83.0)
    # Delivered yet again after it is done: nothing is called.
    assert tasks.judge_artifact.apply(args=(artifact.pk, judge_run.pk, settings.__dict__, RUBRIC)).get() == "ok"
    assert len(server.requests) == 1
    assert services.JUDGE_CLAIM_STALE_SECONDS > tasks.judge_artifact.time_limit


@pytest.mark.django_db
def test_a_crash_during_the_call_releases_the_claim(judged, monkeypatch):
    artifact, judge_run, settings, server = judged
    monkeypatch.setattr(services, "judge_inputs_for", lambda artifact: (_ for _ in ()).throw(OSError("disk gone")))
    with pytest.raises(OSError):
        services.judge_artifact(artifact=artifact, judge_run=judge_run, settings=settings, rubric_version=RUBRIC)
    record = JudgeRecord.objects.get(artifact=artifact, judge_run=judge_run)
    assert record.status == "failed" and "disk gone" in record.error
    monkeypatch.undo()
    monkeypatch.setenv("JUDGE_KEY", "sk-local-test")
    good_reply(server)
    assert services.judge_artifact(artifact=artifact, judge_run=judge_run, settings=settings, rubric_version=RUBRIC)
    assert JudgeRecord.objects.get(pk=record.pk).status == "ok" and len(server.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_at_once_make_one_call(judged):
    artifact, judge_run, settings, server = judged
    good_reply(server, delay=1.0)  # the first call is slow: the second delivery arrives while it is in flight
    good_reply(server)
    statuses = []

    def deliver():
        try:
            record = services.judge_artifact(
                artifact=artifact, judge_run=judge_run, settings=settings, rubric_version=RUBRIC
            )
            statuses.append(record.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == ["ok", "running"]
    assert len(server.requests) == 1
    assert JudgeRecord.objects.get(artifact=artifact, judge_run=judge_run).status == "ok"

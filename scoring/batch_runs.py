"""A judge run through the Batch API (a service): prepare, submit, poll, ingest — each step stored before the next,
so the same command run again after a kill or a restart carries on with the batch it already paid for.

Preparing claims every artifact of the batch (``services.judge_record_claim``, with a lease as long as the batch's
completion window) in the same transaction that stores the batch, so neither the command's synchronous loop nor
another batch judges them meanwhile; ingesting stores each result over its claim, and a batch the API ends without a
result gives its claims back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from agents import selectors as agent_selectors

from . import services
from .judge_batch import BATCH_PRICE_FACTOR, DONE_STATUSES, MAX_BATCH_REQUESTS, BatchApi, batch_file, read_results
from .judge_client import JudgeSettings, make_client
from .models import JudgeBatch, JudgeRecord, JudgeRun
from .rubric import load_rubric

BATCH_LEASE_SECONDS = 25 * 3600  # the 24 h completion window and an hour to ingest


@dataclass(frozen=True)
class BatchReport:
    batch: JudgeBatch | None  # None: nothing left to judge
    submitted: bool  # submitted by this call
    ok: int = 0
    failed: int = 0
    cost_usd: float | None = None  # at the batch price

    @property
    def synchronous_cost_usd(self) -> float | None:
        return None if self.cost_usd is None else self.cost_usd / BATCH_PRICE_FACTOR


def _artifacts(ids: list[int]) -> dict:
    return {artifact.pk: artifact for artifact in agent_selectors.artifact_list().filter(pk__in=ids)}


def judge_batch_prepare(*, judge_run: JudgeRun, settings: JudgeSettings, rubric_version: str, artifacts) -> JudgeBatch:
    """Claim the artifacts and store the batch (its requests, not yet its file) in one transaction."""
    client = make_client(settings, load_rubric(rubric_version))
    with transaction.atomic():
        batch = JudgeBatch.objects.create(judge_run=judge_run)
        requests = {}
        for artifact in artifacts[:MAX_BATCH_REQUESTS]:
            claim = services.judge_record_claim(
                artifact=artifact, judge_run=judge_run, rubric_version=rubric_version, lease_seconds=BATCH_LEASE_SECONDS
            )
            if claim is not None:
                requests[f"a{artifact.pk}"] = [artifact.pk, client.prompt_digest(services.judge_inputs_for(artifact))]
        batch.requests = requests
        batch.save(update_fields=["requests"])
    return batch


def judge_batch_step(
    *,
    judge_run: JudgeRun,
    settings: JudgeSettings,
    rubric_version: str,
    artifacts: Callable[[], list],
    wait: bool,
    poll_seconds: float = 60.0,
    on_poll: Callable[[JudgeBatch], None] | None = None,
) -> BatchReport:
    """Carry the run's open batch one step further — or prepare one from ``artifacts()`` when none is open — and, with
    ``wait``, poll until it is ingested."""
    batch = JudgeBatch.objects.filter(
        judge_run=judge_run, status__in=[JudgeBatch.Status.PREPARED, JudgeBatch.Status.SUBMITTED]
    ).first()
    if batch is None:
        batch = judge_batch_prepare(
            judge_run=judge_run, settings=settings, rubric_version=rubric_version, artifacts=artifacts()
        )
        if not batch.requests:
            batch.delete()
            return BatchReport(None, False)
    api = BatchApi(settings)
    client = make_client(settings, load_rubric(rubric_version))
    try:
        submitted = batch.status == JudgeBatch.Status.PREPARED
        if submitted:
            _submit(batch, api, client)
        while True:
            state = api.state(batch.batch_id)
            batch.api_status = state.status
            batch.save(update_fields=["api_status", "updated_at"])
            if state.status in DONE_STATUSES:
                return _ingest(batch, state, api, client, rubric_version, submitted)
            if on_poll:
                on_poll(batch)
            if not wait:
                return BatchReport(batch, submitted)
            time.sleep(poll_seconds)
    finally:
        api.close()


def _submit(batch: JudgeBatch, api: BatchApi, client) -> None:
    if not batch.input_file_id:
        artifacts = _artifacts([pk for pk, _ in batch.requests.values()])
        lines = (
            (cid, client.request_body(services.judge_inputs_for(artifacts[pk])))
            for cid, (pk, _) in batch.requests.items()
        )
        batch.input_file_id = api.upload(batch_file(lines, protocol=client.settings.protocol))
        batch.save(update_fields=["input_file_id", "updated_at"])
    # A kill between creating the batch and storing its id must not pay for a second one.
    batch.batch_id = api.find(batch.input_file_id) or api.create(
        batch.input_file_id, metadata={"refig_judge_run": str(batch.judge_run), "refig_batch": str(batch.pk)}
    )
    batch.status = JudgeBatch.Status.SUBMITTED
    batch.save(update_fields=["batch_id", "status", "updated_at"])


def _ingest(batch: JudgeBatch, state, api: BatchApi, client, rubric_version: str, submitted: bool) -> BatchReport:
    digests = {cid: digest for cid, (_, digest) in batch.requests.items()}
    outcomes = {}
    for file_id in (state.output_file_id, state.error_file_id):
        if file_id:
            outcomes.update(read_results(api.download(file_id), client, digests))
    artifacts = _artifacts([pk for pk, _ in batch.requests.values()])
    ok = failed = 0
    cost = None
    with transaction.atomic():
        for cid, outcome in outcomes.items():
            artifact = artifacts[batch.requests[cid][0]]
            services.judge_record_store(
                artifact=artifact, judge_run=batch.judge_run, outcome=outcome, rubric_version=rubric_version
            )
            ok, failed = ok + outcome.ok, failed + (not outcome.ok)
            if outcome.usage.cost_usd is not None:
                cost = (cost or 0.0) + outcome.usage.cost_usd
        unanswered = [
            record.pk
            for record in JudgeRecord.objects.filter(
                judge_run=batch.judge_run, artifact_id__in=[pk for pk, _ in batch.requests.values()], status="running"
            )
        ]
        services.judge_claims_release(record_ids=unanswered, error=f"batch {batch.batch_id} ended {state.status}")
        batch.status = JudgeBatch.Status.INGESTED if state.status == "completed" else JudgeBatch.Status.FAILED
        batch.output_file_id, batch.error_file_id, batch.cost_usd = state.output_file_id, state.error_file_id, cost
        batch.save()
    return BatchReport(batch, submitted, ok, failed + len(unanswered), cost)

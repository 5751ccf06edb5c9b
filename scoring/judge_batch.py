"""The OpenAI Batch API for a hosted judge: the request file, the calls (upload, create, find, poll, download) over
the official ``openai`` package, and the reading of the results. Pure: no Django, DRF or Celery; what to store and
when lives in ``scoring.batch_runs``.

A batch costs half the synchronous price (OpenAI's pricing for the Batch API) and completes within 24 hours.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

import openai

from .judge_client import Attempt, JudgeClient, JudgeOutcome, JudgeSettings, Usage

BATCH_PRICE_FACTOR = 0.5
COMPLETION_WINDOW = "24h"
MAX_BATCH_REQUESTS = 50_000  # the API's limit of requests in one batch
ENDPOINTS = {"responses": "/v1/responses", "chat": "/v1/chat/completions"}
DONE_STATUSES = frozenset({"completed", "expired", "cancelled", "failed"})  # the API will not change these


class BatchError(RuntimeError):
    pass


@dataclass(frozen=True)
class BatchState:
    status: str
    output_file_id: str
    error_file_id: str


def batch_file(lines: Iterable[tuple[str, dict]], *, protocol: str) -> bytes:
    """JSON Lines, one request per (custom id, body)."""
    url = ENDPOINTS[protocol]
    return b"".join(
        json.dumps({"custom_id": cid, "method": "POST", "url": url, "body": body}).encode() + b"\n"
        for cid, body in lines
    )


def read_results(text: str, client: JudgeClient, digests: dict[str, str]) -> dict[str, JudgeOutcome]:
    """Outcomes by custom id from an output or error file; a line the API failed is a failed outcome, never a zero."""
    outcomes: dict[str, JudgeOutcome] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        cid = row.get("custom_id")
        if cid not in digests:
            continue  # not a request of this batch: nothing to store it under
        response = row.get("response") or {}
        if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
            outcome = client.outcome_from_body(response["body"], digest=digests[cid], price_factor=BATCH_PRICE_FACTOR)
        else:
            detail = row.get("error") or response.get("body")
            error = f"HTTP {response.get('status_code', '?')}: {json.dumps(detail)[:500]}"
            status = "rate_limited" if response.get("status_code") == 429 else "server_error"
            attempts = (Attempt(1, status, error, "", 0.0),)
            outcome = JudgeOutcome(False, None, "", error, attempts, Usage(), digests[cid])
        outcomes[cid] = outcome
    return outcomes


class BatchApi:
    """The five Batch API calls a judge run needs; each raises ``BatchError`` with the API's reason."""

    def __init__(self, settings: JudgeSettings):
        key = os.environ.get(settings.api_key_env) if settings.api_key_env else "EMPTY"
        if not key:
            raise BatchError(f"environment variable {settings.api_key_env} is not set")
        self.protocol = settings.protocol
        self._client = openai.OpenAI(
            base_url=settings.base_url, api_key=key, timeout=settings.timeout_seconds, max_retries=3
        )

    def _call(self, what: str, call):
        try:
            return call()
        except openai.APIError as error:
            raise BatchError(f"{what}: {error}") from error

    def upload(self, data: bytes) -> str:
        upload = ("judge-batch.jsonl", data, "application/jsonl")
        return self._call("upload", lambda: self._client.files.create(file=upload, purpose="batch")).id

    def create(self, input_file_id: str, *, metadata: dict[str, str]) -> str:
        batch = self._call(
            "batch create",
            lambda: self._client.batches.create(
                input_file_id=input_file_id,
                endpoint=ENDPOINTS[self.protocol],
                completion_window=COMPLETION_WINDOW,
                metadata=metadata,
            ),
        )
        return batch.id

    def find(self, input_file_id: str) -> str | None:
        """A batch already made from this file (created just before a crash could store its id), or None."""
        batches = self._call("batch list", lambda: self._client.batches.list(limit=100))
        return next((b.id for b in batches.data if b.input_file_id == input_file_id), None)

    def state(self, batch_id: str) -> BatchState:
        batch = self._call("batch poll", lambda: self._client.batches.retrieve(batch_id))
        return BatchState(batch.status, batch.output_file_id or "", batch.error_file_id or "")

    def download(self, file_id: str) -> str:
        return self._call("download", lambda: self._client.files.content(file_id)).text

    def close(self) -> None:
        self._client.close()

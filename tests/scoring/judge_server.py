"""A local stand-in for an OpenAI-compatible judge endpoint, for tests only.

``JudgeServer`` is a ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) running in a thread. It serves
``POST /v1/responses`` and ``POST /v1/chat/completions`` from a queue of scripted replies
``(status, body, delay, headers)`` that each test pushes, and records every request it receives
(path, headers, JSON body). Nothing here knows what a good judgement is: the test scripts it.

For load (tests/scoring/test_judge_pacing_run.py, tests/benchmarks/test_judge_rate_bench.py): a ``responder`` answers
when the queue is empty, and ``Faults`` add latency, an unannounced rate limit answering 429 with ``Retry-After``
(its rate may change mid-run), occasional 5xx and malformed replies. ``/v1/files`` and ``/v1/batches`` are a small
Batch API: a batch completes after ``batch_polls`` polls, each line answered by the queue or the responder.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATHS = {"/v1/responses": "responses", "/v1/chat/completions": "chat"}


@dataclass(frozen=True)
class Scripted:
    status: int
    body: dict | str
    delay: float = 0.0
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict  # lower-cased names
    body: dict


def responses_body(text: str, *, input_tokens: int = 100, output_tokens: int = 20, model: str = "judge") -> dict:
    """A minimal Responses API object whose ``output_text`` is ``text``."""
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_test",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def chat_body(text: str, *, input_tokens: int = 100, output_tokens: int = 20, model: str = "judge") -> dict:
    """A minimal Chat Completions object whose first choice's content is ``text``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    }


def reply_body(protocol: str, text: str, **usage) -> dict:
    return (responses_body if protocol == "responses" else chat_body)(text, **usage)


def error_body(message: str, *, kind: str = "server_error") -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


@dataclass(frozen=True)
class Faults:
    """What a hosted API does to a client under load, drawn from one seeded generator. ``limits`` is the rate limit
    as (from second, requests per second) steps counted from the first request; it is never announced in headers, and
    the bucket holds ``burst`` seconds' worth of requests."""

    latency: tuple[float, float] = (0.0, 0.0)  # uniform, seconds, for every answered request
    limits: tuple[tuple[float, float], ...] = ()
    burst: float = 0.2
    server_error_rate: float = 0.0
    malformed_rate: float = 0.0
    seed: int = 0


class _Limiter:
    def __init__(self, faults: Faults):
        self.steps = faults.limits
        self.burst = faults.burst
        self.started: float | None = None
        self.level = 0.0
        self.at = 0.0

    def rate(self, now: float) -> float:
        assert self.started is not None
        rate = self.steps[0][1]
        for second, value in self.steps:
            if now - self.started >= second:
                rate = value
        return rate

    def admit(self, now: float) -> float | None:
        """None when the request may pass, else the seconds until it could."""
        if self.started is None:
            self.started, self.at, self.level = now, now, self.steps[0][1] * self.burst
        rate = self.rate(now)
        self.level = min(rate * self.burst, self.level + (now - self.at) * rate)
        self.at = now
        if self.level >= 1:
            self.level -= 1
            return None
        return (1 - self.level) / rate


def _form_parts(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    return {
        part.get_param("name", header="content-disposition"): (part.get_filename(), part.get_payload(decode=True))
        for part in message.iter_parts()
    }


class JudgeServer:
    def __init__(
        self,
        *,
        faults: Faults | None = None,
        responder: Callable[[str, dict], Scripted] | None = None,
        batch_polls: int = 2,
    ) -> None:
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self.requests: list[Received] = []
        self.faults = faults
        self.responder = responder  # (protocol, request body) -> reply, when nothing is queued
        self.batch_polls = batch_polls
        self.served: list[tuple[float, int]] = []  # (monotonic time, status) of every judge call answered
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, dict] = {}
        self._limiter = _Limiter(faults) if faults and faults.limits else None
        self._rng = random.Random(faults.seed if faults else 0)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting --------------------------------------------------------------------------------

    def push(self, status: int, body: dict | str, delay: float = 0.0, headers: dict | None = None) -> None:
        with self._lock:
            self._queue.append(Scripted(status, body, delay, dict(headers or {})))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self) -> JudgeServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # a client killed mid-request (tests/scoring/test_judge_pacing_run.py)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                if self.path.startswith(("/v1/files", "/v1/batches")):
                    return self._send(server._batch_post(self.path, headers, raw, body))
                with server._lock:
                    server.requests.append(Received(self.path, headers, body))
                    scripted = server._fault(self.path)
                    if scripted is None:
                        scripted = server._queue.popleft() if self.path in PATHS and server._queue else None
                if scripted is None and self.path in PATHS and server.responder is not None:
                    scripted = server._maybe_malformed(self.path, server.responder(PATHS[self.path], body))
                if self.path not in PATHS:
                    scripted = Scripted(404, error_body(f"no route {self.path}", kind="not_found"))
                elif scripted is None:
                    # 418 is a client error: the client stops at once and the test sees why
                    scripted = Scripted(
                        418, error_body("judge_server: no scripted reply left", kind="invalid_request_error")
                    )
                self._send(scripted)
                if self.path in PATHS:
                    with server._lock:
                        server.served.append((time.monotonic(), scripted.status))

            def do_GET(self) -> None:
                self._send(server._batch_get(self.path))

            def _send(self, scripted: Scripted) -> None:
                if scripted.delay:
                    time.sleep(scripted.delay)
                if isinstance(scripted.body, bytes):
                    data = scripted.body
                else:
                    payload = scripted.body if isinstance(scripted.body, str) else json.dumps(scripted.body)
                    data = payload.encode("utf-8")
                try:
                    self.send_response(scripted.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in scripted.headers.items():
                        self.send_header(name, str(value))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to deliver

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="judge-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> JudgeServer:
        return self.start()

    # --- faults (called with the lock held, except _maybe_malformed) ------------------------------

    def _fault(self, path: str) -> Scripted | None:
        """A 429 or 5xx in place of the reply, or None; the answered replies get the latency."""
        if self.faults is None or path not in PATHS:
            return None
        if self._limiter is not None:
            wait = self._limiter.admit(time.monotonic())
            if wait is not None:  # real APIs send both; retry-after-ms is the precise one
                headers = {"retry-after-ms": str(max(1, round(wait * 1000))), "Retry-After": str(max(1, round(wait)))}
                return Scripted(429, error_body("Rate limit reached", kind="rate_limit_exceeded"), 0.0, headers)
        if self._rng.random() < self.faults.server_error_rate:
            return Scripted(500, error_body("The server had an error"), self._latency())
        return None

    def _latency(self) -> float:
        low, high = self.faults.latency if self.faults else (0.0, 0.0)
        return self._rng.uniform(low, high) if high else 0.0

    def _maybe_malformed(self, path: str, scripted: Scripted) -> Scripted:
        with self._lock:
            malformed = self.faults is not None and self._rng.random() < self.faults.malformed_rate
            delay = scripted.delay or self._latency()
        if malformed and scripted.status == 200:  # a reply cut off mid-JSON, as a truncated generation gives
            return Scripted(200, reply_body(PATHS[path], '{"score": 8'), delay, scripted.headers)
        return Scripted(scripted.status, scripted.body, delay, scripted.headers)

    # --- the Batch API: files and batches ---------------------------------------------------------

    def _batch_post(self, path: str, headers: dict, raw: bytes, body: dict) -> Scripted:
        with self._lock:
            if path == "/v1/files":
                parts = _form_parts(headers.get("content-type", ""), raw)
                filename, data = parts["file"]
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = (filename or "upload.jsonl", data)
                return Scripted(200, self._file_object(file_id, parts["purpose"][1].decode()))
            if path == "/v1/batches":
                if body.get("input_file_id") not in self.files:
                    return Scripted(400, error_body("unknown input_file_id", kind="invalid_request_error"))
                batch_id = f"batch_{len(self.batches) + 1}"
                self.batches[batch_id] = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": body["endpoint"],
                    "input_file_id": body["input_file_id"],
                    "completion_window": body["completion_window"],
                    "created_at": int(time.time()),
                    "status": "validating",
                    "metadata": body.get("metadata"),
                    "polls": 0,
                }
                return Scripted(200, self._batch_object(batch_id))
        return Scripted(404, error_body(f"no route {path}", kind="not_found"))

    def _batch_get(self, path: str) -> Scripted:
        parts = path.split("?")[0].strip("/").split("/")  # v1 files <id> content | v1 batches [<id>]
        with self._lock:
            if len(parts) == 4 and parts[1] == "files" and parts[3] == "content" and parts[2] in self.files:
                return Scripted(200, self.files[parts[2]][1], headers={"Content-Type": "application/octet-stream"})
            if parts[1:] == ["batches"]:
                listed = [self._batch_object(b) for b in reversed(self.batches)]
                return Scripted(200, {"object": "list", "data": listed, "has_more": False})
            if len(parts) == 3 and parts[1] == "batches" and parts[2] in self.batches:
                batch = self.batches[parts[2]]
                batch["polls"] += 1
                if batch["status"] == "validating":
                    batch["status"] = "in_progress"
                if batch["status"] != "in_progress" or batch["polls"] < self.batch_polls:
                    return Scripted(200, self._batch_object(parts[2]))
                pending = parts[2]
            else:
                return Scripted(404, error_body(f"no route {path}", kind="not_found"))
        self._batch_run(pending)  # outside the lock: the responder may take its time
        with self._lock:
            return Scripted(200, self._batch_object(pending))

    def _batch_run(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        lines = self.files[batch["input_file_id"]][1].decode().splitlines()
        out, errors = [], []
        for number, line in enumerate(lines, 1):
            request = json.loads(line)
            with self._lock:
                self.requests.append(Received(request["url"], {}, request["body"]))
                scripted = self._queue.popleft() if self._queue else None
            if scripted is None:
                scripted = self._maybe_malformed(request["url"], self.responder(PATHS[request["url"]], request["body"]))
            result = {
                "id": f"batch_req_{number}",
                "custom_id": request["custom_id"],
                "response": {"status_code": scripted.status, "request_id": f"req_{number}", "body": scripted.body},
                "error": None,
            }
            (out if scripted.status == 200 else errors).append(json.dumps(result))
        with self._lock:
            for kind, rows in (("output", out), ("error", errors)):
                if rows:
                    file_id = f"file-{len(self.files) + 1}"
                    self.files[file_id] = (f"{batch_id}_{kind}.jsonl", ("\n".join(rows) + "\n").encode())
                    batch[f"{kind}_file_id"] = file_id
            batch["status"] = "completed"
            batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(errors)}

    def _file_object(self, file_id: str, purpose: str) -> dict:
        name, data = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }

    def _batch_object(self, batch_id: str) -> dict:
        return {key: value for key, value in self.batches[batch_id].items() if key != "polls"}

    def __exit__(self, *exc) -> None:
        self.stop()


# --- PPTBench's three stages (tests/scoring/test_pptbench_judge.py) -----------------------------------------------------

PPTBENCH_STAGES = {
    "pptbench_semantic_gate": "semantic",
    "pptbench_render_gate": "render",
    "pptbench_findings": "findings",
}


def request_parts(protocol: str, body: dict) -> tuple[str, list[str]]:
    """(reply schema name, the data URLs of the request's images in order) of a Responses or Chat request."""
    if protocol == "responses":
        name = body["text"]["format"]["name"]
        urls = [part["image_url"] for part in body["input"][-1]["content"] if part["type"] == "input_image"]
    else:
        name = body["response_format"]["json_schema"]["name"]
        urls = [part["image_url"]["url"] for part in body["messages"][-1]["content"] if part["type"] == "image_url"]
    return name, urls


class PptbenchResponder:
    """Answers the PPTBench stages from a plan per candidate image (keyed by the SHA-256 of the request's second
    image): ``plans[sha] = [{"semantic": reason or "", "render": reason or "", "findings": [...]}, ...]``, one entry
    per round. The requests of a round carry no round number, so the k-th semantic-gate call for an image answers
    plan k, the k-th rendering-gate call the k-th plan whose semantic gate stays quiet, and the k-th findings call the
    k-th plan with neither gate: whatever order the rounds arrive in, the set of rounds a task gets is its plans. An
    image without a plan gets no gate and one finding whose affected fraction is read off its digest."""

    def __init__(self, plans: dict[str, list[dict]] | None = None) -> None:
        self.plans = dict(plans or {})
        self.calls: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def default_plan(digest: str) -> dict:
        finding = {
            "dimension": "text_and_typography",
            "category": "improper_typography",
            "issue_type": "unexpected_wrap",
            "location": "Systemic",
            "candidate": "labels wrap onto two lines",
            "reference": "labels on one line",
            "affected_count": 1,
            "affected_fraction": int(digest[:2], 16) % 101 / 100,
        }
        return {"semantic": "", "render": "", "findings": [finding]}

    def __call__(self, protocol: str, body: dict) -> Scripted:
        import base64
        import hashlib

        name, urls = request_parts(protocol, body)
        digest = hashlib.sha256(base64.b64decode(urls[1].split(",", 1)[1])).hexdigest()
        stage = PPTBENCH_STAGES[name]
        plans = self.plans.get(digest) or [self.default_plan(digest)]
        if stage != "semantic":
            plans = [p for p in plans if not p["semantic"]]
        if stage == "findings":
            plans = [p for p in plans if not p["render"]]
        with self._lock:
            k = self.calls.get((digest, stage), 0)
            self.calls[(digest, stage)] = k + 1
        plan = plans[k % len(plans)]
        if stage == "findings":
            reply = {"findings": plan["findings"], "summary": f"{len(plan['findings'])} findings"}
        else:
            reason = plan[stage]
            reply = {"triggered": bool(reason), "reason": reason or "nodes and connections checked"}
        return Scripted(200, reply_body(protocol, json.dumps(reply)))

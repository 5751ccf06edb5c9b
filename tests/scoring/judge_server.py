"""A local stand-in for an OpenAI-compatible judge endpoint, for tests only.

``JudgeServer`` is a ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) running in a thread. It serves
``POST /v1/responses`` and ``POST /v1/chat/completions`` from a queue of scripted replies
``(status, body, delay, headers)`` that each test pushes, and records every request it receives
(path, headers, JSON body). Nothing here knows what a good judgement is: the test scripts it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
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


class JudgeServer:
    def __init__(self) -> None:
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self.requests: list[Received] = []
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

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(Received(self.path, headers, body))
                    scripted = server._queue.popleft() if self.path in PATHS and server._queue else None
                if self.path not in PATHS:
                    scripted = Scripted(404, error_body(f"no route {self.path}", kind="not_found"))
                elif scripted is None:
                    # 418 is a client error: the client stops at once and the test sees why
                    scripted = Scripted(
                        418, error_body("judge_server: no scripted reply left", kind="invalid_request_error")
                    )
                if scripted.delay:
                    time.sleep(scripted.delay)
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

    def __exit__(self, *exc) -> None:
        self.stop()

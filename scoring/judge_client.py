"""Rubric-judge client over the official ``openai`` package: OpenAI Responses API, or Chat Completions
as served by vLLM-style local servers with JSON-schema-constrained output (REFERENCE 3).

Pure: no Django, DRF or Celery. One ``judge()`` call is one judgement of one artifact; it retries on
its own (the SDK's retries are off) so that every attempt is recorded:

* reply breaks the contract (bad JSON, missing/extra field, subscore out of range, score != sum)
  -> ``invalid_reply``, retried at once;
* HTTP 429 -> ``rate_limited``, 5xx -> ``server_error``, timeout, connection failure
  -> retried after an exponential backoff with jitter (``Retry-After`` honoured, capped);
* any other 4xx -> ``client_error``, not retried.

A failed judgement is never a zero score: ``ok=False`` and ``reply=None``, with the last raw reply and
error kept. The API key is read from the environment at call time and never stored.

With a ``pacer`` (``scoring.judge_pacing.Pacer``: a run's shared concurrency window and budgets), every attempt waits
for its turn and reports how it went; a 429 is then load to wait out, not a failure: it does not use up one of
``max_attempts`` (up to ``MAX_RATE_LIMITED_RETRIES``), and its ``Retry-After`` is waited on by the pacer, for every
thread at once.
"""

from __future__ import annotations

import base64
import contextlib
import email.utils
import hashlib
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from typing import Protocol as TypingProtocol

if TYPE_CHECKING:  # imported where a call is made: openai costs about 0.5 s at every process start otherwise
    import openai

from scoring.rubric import JudgeReply, JudgeReplyError, Rubric, prompt_hash, validate_reply

Protocol = Literal["responses", "chat"]
AttemptStatus = Literal[
    "ok", "invalid_reply", "rate_limited", "server_error", "timeout", "connection_error", "client_error"
]
IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
IMAGE_DETAIL = "high"  # figures carry small labels; low detail would hide them
_ERROR_BODY_LIMIT = 500
MAX_RATE_LIMITED_RETRIES = 50  # a paced judgement gives up after this many 429s (an API that never lets it through)


@dataclass(frozen=True)
class JudgeSettings:
    protocol: Protocol
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"  # empty string: the server needs no key (a local vLLM)
    reasoning_effort: str | None = None
    temperature: float | None = None
    timeout_seconds: float = 600.0
    max_attempts: int = 4
    backoff_base_seconds: float = 1.0
    backoff_max_seconds: float = 30.0
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None
    concurrency: int = 4
    # A local open-weight judge's thinking, through vLLM's chat-template option (chat protocol only): False sends
    # "chat_template_kwargs": {"enable_thinking": false}; None leaves the template's default and sends nothing.
    thinking: bool | None = None

    def __post_init__(self) -> None:
        if self.protocol not in ("responses", "chat"):
            raise ValueError(f"protocol must be 'responses' or 'chat', not {self.protocol!r}")
        if self.thinking is not None and self.protocol != "chat":
            raise ValueError("thinking on/off is a chat-template option of the chat protocol (vLLM), not of responses")
        if not self.model:
            raise ValueError("model is required")
        if self.max_attempts < 1 or self.concurrency < 1:
            raise ValueError("max_attempts and concurrency must be at least 1")
        if self.timeout_seconds <= 0 or self.backoff_base_seconds < 0 or self.backoff_max_seconds < 0:
            raise ValueError("timeout must be positive and backoff non-negative")


@dataclass(frozen=True)
class JudgeInputs:
    source_png: bytes
    source_mime: str
    render_png: bytes
    object_summary: dict


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class Attempt:
    number: int
    status: AttemptStatus
    error: str
    raw_reply: str
    seconds: float


@dataclass(frozen=True)
class JudgeOutcome:
    ok: bool
    reply: JudgeReply | None
    raw_reply: str
    error: str
    attempts: tuple[Attempt, ...]
    usage: Usage
    prompt_hash: str


class AttemptPacer(TypingProtocol):
    def before_attempt(self) -> None: ...

    def after_attempt(self, status: str, *, started: float, retry_after: float | None, tokens: int) -> None: ...


class _AttemptFailed(Exception):
    def __init__(self, status: AttemptStatus, error: str, *, retry_after: float | None = None):
        super().__init__(error)
        self.status = status
        self.error = error
        self.retry_after = retry_after


def _data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _retry_after_seconds(headers) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``Retry-After`` (seconds or date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _status_error_text(exc: openai.APIStatusError) -> str:
    body = getattr(exc, "body", None)
    detail = str(body if body is not None else exc.message)
    if len(detail) > _ERROR_BODY_LIMIT:
        detail = detail[:_ERROR_BODY_LIMIT] + "…"
    return f"HTTP {exc.status_code}: {detail}"


class JudgeClient:
    def __init__(
        self,
        settings: JudgeSettings,
        rubric: Rubric,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        pacer: AttemptPacer | None = None,
    ):
        self.settings = settings
        self.rubric = rubric
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._pacer = pacer
        self._shared: openai.OpenAI | None = None  # a paced run's one connection pool (keep-alive) for every thread
        self._shared_lock = threading.Lock()

    # --- public -----------------------------------------------------------------------------------

    def judge(self, inputs: JudgeInputs) -> JudgeOutcome:
        """Judge one artifact; never raises for API or reply failures (see the module docstring)."""
        digest = self.prompt_digest(inputs)
        attempts: list[Attempt] = []
        tokens_in = tokens_out = tokens_total = 0
        last_raw = ""

        try:
            api_key = self._api_key()
        except _AttemptFailed as failed:
            attempts.append(Attempt(1, failed.status, failed.error, "", 0.0))
            return self._outcome(None, "", failed.error, attempts, 0, 0, 0, digest)

        request = self._request(inputs)
        with self._connection(api_key) as client:
            failures = waited_out = 0  # attempts that count against max_attempts; 429s a pacer waited out
            while failures < self.settings.max_attempts:
                number = failures + waited_out + 1
                if self._pacer is not None:
                    self._pacer.before_attempt()
                started = time.monotonic()
                try:
                    raw, used_in, used_out, used_total = self._call(client, request)
                except _AttemptFailed as failed:
                    attempts.append(Attempt(number, failed.status, failed.error, "", time.monotonic() - started))
                    if self._pacer is not None:
                        self._pacer.after_attempt(
                            failed.status, started=started, retry_after=failed.retry_after, tokens=0
                        )
                        if failed.status == "rate_limited" and waited_out < MAX_RATE_LIMITED_RETRIES:
                            waited_out += 1
                            if failed.retry_after is None:  # else the pacer holds every thread until it has passed
                                self._sleep(self._backoff(min(waited_out, 8), None))
                            continue
                    failures += 1
                    if failed.status == "client_error" or failures == self.settings.max_attempts:
                        break
                    self._sleep(self._backoff(failures, failed.retry_after))
                    continue
                tokens_in, tokens_out, tokens_total = (
                    tokens_in + used_in,
                    tokens_out + used_out,
                    tokens_total + used_total,
                )
                last_raw = raw
                try:
                    # A protocol with its own reply shape (scoring.pptbench_judge) brings its own check.
                    own = getattr(self.rubric, "validate_reply", None)
                    reply = own(raw) if own else validate_reply(raw, self.rubric)
                except JudgeReplyError as exc:
                    attempts.append(Attempt(number, "invalid_reply", str(exc), raw, time.monotonic() - started))
                    if self._pacer is not None:
                        self._pacer.after_attempt("invalid_reply", started=started, retry_after=None, tokens=used_total)
                    failures += 1
                    continue  # a malformed reply is not load: ask again at once
                attempts.append(Attempt(number, "ok", "", raw, time.monotonic() - started))
                if self._pacer is not None:
                    self._pacer.after_attempt("ok", started=started, retry_after=None, tokens=used_total)
                return self._outcome(reply, raw, "", attempts, tokens_in, tokens_out, tokens_total, digest)

        return self._outcome(None, last_raw, attempts[-1].error, attempts, tokens_in, tokens_out, tokens_total, digest)

    def judge_many(self, inputs: Iterable[JudgeInputs]) -> list[JudgeOutcome]:
        """Judge several artifacts with ``settings.concurrency`` threads; results keep input order."""
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            return list(pool.map(self.judge, inputs))

    def prompt_digest(self, inputs: JudgeInputs) -> str:
        """The fingerprint of the exact prompt (``rubric.prompt_hash``) an outcome records."""
        if inputs.source_mime not in IMAGE_MIMES:
            raise ValueError(f"unsupported source_mime {inputs.source_mime!r}")
        return prompt_hash(
            self.rubric,
            source_sha256=hashlib.sha256(inputs.source_png).hexdigest(),
            render_sha256=hashlib.sha256(inputs.render_png).hexdigest(),
            object_summary=inputs.object_summary,
            model=self.settings.model,
        )

    def request_body(self, inputs: JudgeInputs) -> dict:
        """The HTTP body ``judge`` sends for these inputs, as a Batch API line carries it."""
        request = self._request(inputs)
        request.update(request.pop("extra_body", {}))  # the SDK sends extra_body's keys at the top level
        return request

    def outcome_from_body(self, body: dict, *, digest: str, price_factor: float = 1.0) -> JudgeOutcome:
        """The outcome of a reply body read elsewhere (a Batch API output line), priced at ``price_factor`` times the
        synchronous price."""
        if self.settings.protocol == "responses":
            text = "".join(
                part.get("text", "")
                for item in body.get("output") or []
                if item.get("type") == "message"
                for part in item.get("content") or []
                if part.get("type") == "output_text"
            )
            usage = body.get("usage") or {}
            used_in, used_out = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
        else:
            choices = body.get("choices") or []
            text = ((choices[0].get("message") or {}).get("content") or "") if choices else ""
            usage = body.get("usage") or {}
            used_in, used_out = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        used_total = usage.get("total_tokens") or used_in + used_out
        try:
            reply, status, error = validate_reply(text, self.rubric), "ok", ""
        except JudgeReplyError as exc:
            reply, status, error = None, "invalid_reply", str(exc)
        outcome = self._outcome(
            reply, text, error, [Attempt(1, status, error, text, 0.0)], used_in, used_out, used_total, digest
        )
        if outcome.usage.cost_usd is None or price_factor == 1.0:
            return outcome
        usage = Usage(used_in, used_out, used_total, outcome.usage.cost_usd * price_factor)
        return JudgeOutcome(outcome.ok, reply, text, error, outcome.attempts, usage, digest)

    def close(self) -> None:
        if self._shared is not None:
            self._shared.close()
            self._shared = None

    # --- internals --------------------------------------------------------------------------------

    def _new_connection(self, api_key: str) -> openai.OpenAI:
        import openai

        s = self.settings
        return openai.OpenAI(base_url=s.base_url, api_key=api_key, timeout=s.timeout_seconds, max_retries=0)

    def _connection(self, api_key: str):
        if self._pacer is None:
            return self._new_connection(api_key)  # closed by its own with-block
        with self._shared_lock:
            if self._shared is None or self._shared.api_key != api_key:
                self._shared = self._new_connection(api_key)
            return contextlib.nullcontext(self._shared)

    def _api_key(self) -> str:
        if not self.settings.api_key_env:
            return "EMPTY"  # the convention of OpenAI-compatible local servers that ignore the key
        key = os.environ.get(self.settings.api_key_env)
        if not key:
            raise _AttemptFailed("client_error", f"environment variable {self.settings.api_key_env} is not set")
        return key

    def _request(self, inputs: JudgeInputs) -> dict:
        s, rubric = self.settings, self.rubric
        user_text = rubric.user_prompt(inputs.object_summary)
        source_url = _data_url(inputs.source_png, inputs.source_mime)
        render_url = _data_url(inputs.render_png, "image/png")
        if s.protocol == "responses":
            request: dict = {
                "model": s.model,
                "input": [
                    {"role": "system", "content": [{"type": "input_text", "text": rubric.system_prompt}]},
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": user_text},
                            {"type": "input_image", "image_url": source_url, "detail": IMAGE_DETAIL},
                            {"type": "input_image", "image_url": render_url, "detail": IMAGE_DETAIL},
                        ],
                    },
                ],
                "text": {
                    "format": {
                        "type": "json_schema",
                        "name": rubric.reply_schema_name,
                        "schema": rubric.reply_schema,
                        "strict": True,
                    }
                },
            }
            if s.reasoning_effort is not None:
                request["reasoning"] = {"effort": s.reasoning_effort}
        else:
            request = {
                "model": s.model,
                "messages": [
                    {"role": "system", "content": rubric.system_prompt},
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": user_text},
                            {"type": "image_url", "image_url": {"url": source_url, "detail": IMAGE_DETAIL}},
                            {"type": "image_url", "image_url": {"url": render_url, "detail": IMAGE_DETAIL}},
                        ],
                    },
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": rubric.reply_schema_name, "schema": rubric.reply_schema, "strict": True},
                },
            }
            if s.reasoning_effort is not None:
                request["reasoning_effort"] = s.reasoning_effort
            if s.thinking is not None:  # not a Chat Completions field: the SDK sends extra_body as part of the body
                request["extra_body"] = {"chat_template_kwargs": {"enable_thinking": s.thinking}}
        if s.temperature is not None:
            request["temperature"] = s.temperature
        return request

    def _call(self, client: openai.OpenAI, request: dict) -> tuple[str, int, int, int]:
        import openai

        """One HTTP request: (reply text, input, output, total tokens), or ``_AttemptFailed``."""
        try:
            if self.settings.protocol == "responses":
                response = client.responses.create(**request)
                text = response.output_text or ""
                usage = response.usage
                used_in = getattr(usage, "input_tokens", 0) or 0
                used_out = getattr(usage, "output_tokens", 0) or 0
            else:
                response = client.chat.completions.create(**request)
                choices = response.choices or []
                text = (choices[0].message.content or "") if choices else ""
                usage = response.usage
                used_in = getattr(usage, "prompt_tokens", 0) or 0
                used_out = getattr(usage, "completion_tokens", 0) or 0
            used_total = getattr(usage, "total_tokens", 0) or (used_in + used_out)
            return text, used_in, used_out, used_total
        except openai.APITimeoutError as exc:  # subclass of APIConnectionError: test it first
            raise _AttemptFailed("timeout", f"timed out after {self.settings.timeout_seconds:g}s ({exc})") from exc
        except openai.APIConnectionError as exc:
            raise _AttemptFailed("connection_error", f"connection failed: {exc}") from exc
        except openai.APIStatusError as exc:
            retry_after = _retry_after_seconds(getattr(exc.response, "headers", None))
            if exc.status_code == 429:
                raise _AttemptFailed("rate_limited", _status_error_text(exc), retry_after=retry_after) from exc
            if exc.status_code >= 500:
                raise _AttemptFailed("server_error", _status_error_text(exc), retry_after=retry_after) from exc
            raise _AttemptFailed("client_error", _status_error_text(exc)) from exc
        except (openai.APIResponseValidationError, ValueError) as exc:  # 200 with an unreadable body
            raise _AttemptFailed("server_error", f"unreadable response: {exc}") from exc

    def _backoff(self, number: int, retry_after: float | None) -> float:
        """Delay before attempt ``number + 1``: Retry-After if given, else exponential with jitter."""
        cap = self.settings.backoff_max_seconds
        if retry_after is not None:
            return min(retry_after, cap)
        ceiling = min(cap, self.settings.backoff_base_seconds * 2 ** (number - 1))
        return ceiling * (0.5 + 0.5 * self._rng.random())  # "equal jitter": between half and full

    def _outcome(self, reply, raw, error, attempts, tokens_in, tokens_out, tokens_total, digest) -> JudgeOutcome:
        s = self.settings
        cost = None
        if s.price_input_per_mtok is not None and s.price_output_per_mtok is not None:
            cost = (tokens_in * s.price_input_per_mtok + tokens_out * s.price_output_per_mtok) / 1_000_000
        return JudgeOutcome(
            ok=reply is not None,
            reply=reply,
            raw_reply=raw,
            error=error,
            attempts=tuple(attempts),
            usage=Usage(tokens_in, tokens_out, tokens_total, cost),
            prompt_hash=digest,
        )


def make_client(settings: JudgeSettings, rubric: Rubric, *, pacer: AttemptPacer | None = None) -> JudgeClient:
    return JudgeClient(settings, rubric, pacer=pacer)

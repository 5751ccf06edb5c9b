"""Rubric loading, reply validation, prompt hashing, and the judge client against a local server."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.protocol import RUBRIC_AXES, RUBRIC_MAXIMA
from scoring.judge_client import JudgeClient, JudgeInputs, JudgeSettings, make_client
from scoring.rubric import JudgeReplyError, Rubric, load_rubric, prompt_hash, validate_reply
from tests.scoring.judge_server import JudgeServer, error_body, reply_body

PROTOCOLS = ("responses", "chat")
KEY_ENV = "REFIG_TEST_JUDGE_KEY"
KEY = "sk-test-1234"
SOURCE = b"\x89PNG\r\n\x1a\n source figure bytes"
RENDER = b"\x89PNG\r\n\x1a\n rendered slide bytes"
SUMMARY = {
    "text_boxes": 14,
    "shapes": 9,
    "connectors": 6,
    "connectors_attached": 4,
    "pictures": 0,
    "largest_picture_ratio": 0.0,
    "marker": "summary-marker-42",
}


def good(**overrides) -> dict:
    # 18 + 24 + 12 + 20 + 7.5 = 81.5, computed by hand
    reply = {
        "major_errors": ["The arrow from Encoder to Decoder is missing."],
        "minor_errors": ["Legend font is smaller than in the source."],
        "editability_assessment": "All boxes are native shapes; six connectors, four attached.",
        "reason": "Structure mostly intact; one arrow missing costs S.",
        "subscores": {"text": 18, "semantic_structure": 24, "layout": 12, "editability": 20, "visual_detail": 7.5},
        "score": 81.5,
    }
    reply.update(overrides)
    return reply


def good_text(**overrides) -> str:
    return json.dumps(good(**overrides))


def with_subscores(**changes) -> dict:
    subscores = dict(good()["subscores"], **changes)
    return good(subscores=subscores, score=sum(subscores.values()))


@pytest.fixture(scope="module")
def rubric() -> Rubric:
    return load_rubric("refig-v1")


@pytest.fixture
def server():
    with JudgeServer() as srv:
        yield srv


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def settings_for(server: JudgeServer, protocol: str, **overrides) -> JudgeSettings:
    values = dict(
        protocol=protocol,
        base_url=server.base_url,
        model="judge-model-x",
        api_key_env=KEY_ENV,
        timeout_seconds=5.0,
        max_attempts=4,
        backoff_base_seconds=1.0,
        backoff_max_seconds=30.0,
    )
    values.update(overrides)
    return JudgeSettings(**values)


def client_for(server, protocol, rubric, sleeps, **overrides) -> JudgeClient:
    return JudgeClient(settings_for(server, protocol, **overrides), rubric, sleep=sleeps.append)


INPUTS = JudgeInputs(source_png=SOURCE, source_mime="image/png", render_png=RENDER, object_summary=SUMMARY)


# --- rubric -----------------------------------------------------------------------------------------


def test_rubric_matches_protocol_constants(rubric):
    assert rubric.version == "refig-v1"
    assert rubric.axes == RUBRIC_AXES
    assert (
        rubric.maxima
        == RUBRIC_MAXIMA
        == {"text": 20, "semantic_structure": 30, "layout": 15, "editability": 25, "visual_detail": 10}
    )
    assert sum(rubric.maxima.values()) == 100
    assert "{object_summary}" in rubric.user_prompt_template
    assert "sum" in rubric.system_prompt and "editab" in rubric.system_prompt.lower()


def test_reply_schema_is_strict(rubric):
    schema = rubric.reply_schema
    assert schema["additionalProperties"] is False
    assert (
        set(schema["required"])
        == set(schema["properties"])
        == {"score", "subscores", "major_errors", "minor_errors", "editability_assessment", "reason"}
    )
    sub = schema["properties"]["subscores"]
    assert sub["additionalProperties"] is False and set(sub["required"]) == set(RUBRIC_AXES)
    assert {k: v["maximum"] for k, v in sub["properties"].items()} == RUBRIC_MAXIMA


def test_load_rubric_rejects_unknown_and_path_like_versions():
    with pytest.raises(ValueError, match="no rubric"):
        load_rubric("refig-v999")
    with pytest.raises(ValueError, match="invalid"):
        load_rubric("../settings")


def test_pure_modules_do_not_import_django():
    code = (
        "import sys, scoring.rubric, scoring.judge_client; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'celery')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_project_root()))


def _project_root() -> Path:
    return Path(__file__).resolve().parents[2]


# --- validate_reply ---------------------------------------------------------------------------------


def test_validate_reply_accepts_a_good_reply(rubric):
    reply = validate_reply(good_text(), rubric)
    assert reply.score == 81.5
    assert reply.subscores == {
        "text": 18.0,
        "semantic_structure": 24.0,
        "layout": 12.0,
        "editability": 20.0,
        "visual_detail": 7.5,
    }
    assert reply.major_errors == ["The arrow from Encoder to Decoder is missing."]
    assert reply.minor_errors == ["Legend font is smaller than in the source."]
    assert reply.editability_assessment.startswith("All boxes")
    assert reply.reason.startswith("Structure")


def test_validate_reply_accepts_the_extremes(rubric):
    zero = {axis: 0 for axis in RUBRIC_AXES}
    assert validate_reply(json.dumps(good(subscores=zero, score=0)), rubric).score == 0
    full = dict(RUBRIC_MAXIMA)
    assert validate_reply(json.dumps(good(subscores=full, score=100)), rubric).score == 100
    # float rounding within 1e-6 is tolerated
    assert validate_reply(json.dumps(good(score=81.5 + 1e-9)), rubric).score == pytest.approx(81.5)


def _without(key):
    reply = good()
    del reply[key]
    return json.dumps(reply)


def _without_subscore(axis):
    reply = good()
    del reply["subscores"][axis]
    return json.dumps(reply)


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("not json at all", "$", "not valid JSON"),
        ("```json\n" + json.dumps(good()) + "\n```", "$", "not valid JSON"),
        ("", "$", "not valid JSON"),
        ("[1, 2]", "$", "expected a JSON object"),
        ('{"score": NaN}', "$", "not valid JSON"),
        (_without("score"), "score", "missing"),
        (_without("reason"), "reason", "missing"),
        (_without("subscores"), "subscores", "missing"),
        (_without_subscore("layout"), "subscores.layout", "missing"),
        (json.dumps(good(confidence=0.9)), "confidence", "unexpected"),
        (json.dumps(good(subscores=dict(good()["subscores"], colour=3))), "subscores.colour", "unexpected"),
        (json.dumps(good(score="81.5")), "score", "expected number"),
        (json.dumps(good(score=True)), "score", "expected number"),
        (json.dumps(good(reason=None)), "reason", "expected string"),
        (json.dumps(good(editability_assessment=["x"])), "editability_assessment", "expected string"),
        (json.dumps(good(major_errors="none")), "major_errors", "expected array"),
        (json.dumps(good(minor_errors=["ok", 3])), "minor_errors[1]", "expected string"),
        (json.dumps(good(subscores=[1, 2, 3, 4, 5])), "subscores", "expected object"),
        (json.dumps(good(subscores=dict(good()["subscores"], text="18"))), "subscores.text", "expected number"),
        (json.dumps(with_subscores(text=21)), "subscores.text", "outside"),
        (json.dumps(with_subscores(semantic_structure=30.5)), "subscores.semantic_structure", "outside"),
        (json.dumps(with_subscores(layout=-1)), "subscores.layout", "outside"),
        (json.dumps(with_subscores(editability=26)), "subscores.editability", "outside"),
        (json.dumps(with_subscores(visual_detail=11)), "subscores.visual_detail", "outside"),
        (json.dumps(good(score=80)), "score", "sum"),
        (json.dumps(good(score=81.6)), "score", "sum"),
    ],
)
def test_validate_reply_names_the_offending_field(rubric, text, field, reason):
    with pytest.raises(JudgeReplyError) as caught:
        validate_reply(text, rubric)
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert str(caught.value) == f"{field}: {caught.value.reason}"
    assert isinstance(caught.value, ValueError)


# --- prompt_hash ------------------------------------------------------------------------------------


def _hash(rubric, **changes):
    args = dict(source_sha256="a" * 64, render_sha256="b" * 64, object_summary=dict(SUMMARY), model="m1")
    args.update(changes)
    return prompt_hash(rubric, **args)


def test_prompt_hash_is_stable(rubric):
    first = _hash(rubric)
    assert first == _hash(rubric) == _hash(load_rubric("refig-v1"))
    assert len(first) == 64 and int(first, 16) >= 0
    # key order of the summary does not matter (canonical JSON)
    reordered = dict(reversed(list(SUMMARY.items())))
    assert _hash(rubric, object_summary=reordered) == first


def test_prompt_hash_is_sensitive_to_every_input(rubric):
    base = _hash(rubric)
    variants = [
        _hash(rubric, source_sha256="c" * 64),
        _hash(rubric, render_sha256="c" * 64),
        _hash(rubric, object_summary=dict(SUMMARY, pictures=1)),
        _hash(rubric, model="m2"),
        _hash(Rubric(**{**rubric.__dict__, "system_prompt": rubric.system_prompt + " "})),
        _hash(Rubric(**{**rubric.__dict__, "user_prompt_template": rubric.user_prompt_template + "!"})),
        _hash(Rubric(**{**rubric.__dict__, "version": "refig-v1b"})),
    ]
    assert len({base, *variants}) == len(variants) + 1


# --- the client against the local server ------------------------------------------------------------


def _data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _images_and_text(protocol: str, body: dict) -> tuple[list[str], str, str]:
    if protocol == "responses":
        system, user = body["input"]
        system_text = "".join(part["text"] for part in system["content"])
        images = [part["image_url"] for part in user["content"] if part["type"] == "input_image"]
        text = "".join(part["text"] for part in user["content"] if part["type"] == "input_text")
    else:
        system, user = body["messages"]
        system_text = system["content"]
        images = [part["image_url"]["url"] for part in user["content"] if part["type"] == "image_url"]
        text = "".join(part["text"] for part in user["content"] if part["type"] == "text")
    assert system["role"] == "system" and user["role"] == "user"
    return images, text, system_text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_success_sends_the_full_request(server, rubric, sleeps, protocol):
    server.push(200, reply_body(protocol, good_text(), input_tokens=1000, output_tokens=200))
    client = client_for(
        server,
        protocol,
        rubric,
        sleeps,
        reasoning_effort="high",
        temperature=0.25,
        price_input_per_mtok=2.0,
        price_output_per_mtok=8.0,
    )
    outcome = client.judge(INPUTS)

    assert outcome.ok and outcome.error == ""
    assert outcome.reply == validate_reply(good_text(), rubric)
    assert outcome.raw_reply == good_text()
    assert [a.status for a in outcome.attempts] == ["ok"]
    assert outcome.attempts[0].number == 1 and outcome.attempts[0].raw_reply == good_text()
    assert outcome.usage.input_tokens == 1000 and outcome.usage.output_tokens == 200
    assert outcome.usage.total_tokens == 1200
    assert outcome.usage.cost_usd == pytest.approx(1000 * 2.0 / 1e6 + 200 * 8.0 / 1e6)  # 0.0036
    assert outcome.prompt_hash == prompt_hash(
        rubric,
        source_sha256=hashlib.sha256(SOURCE).hexdigest(),
        render_sha256=hashlib.sha256(RENDER).hexdigest(),
        object_summary=SUMMARY,
        model="judge-model-x",
    )
    assert sleeps == []

    [received] = server.requests
    assert received.path == ("/v1/responses" if protocol == "responses" else "/v1/chat/completions")
    assert received.headers["authorization"] == f"Bearer {KEY}"
    body = received.body
    assert body["model"] == "judge-model-x"
    assert body["temperature"] == 0.25
    images, text, system_text = _images_and_text(protocol, body)
    assert images == [_data_url(SOURCE), _data_url(RENDER)]
    assert "summary-marker-42" in text and "{object_summary}" not in text
    assert system_text == rubric.system_prompt
    if protocol == "responses":
        fmt = body["text"]["format"]
        assert fmt["type"] == "json_schema" and fmt["strict"] is True
        assert fmt["schema"] == rubric.reply_schema and fmt["name"] == rubric.reply_schema_name
        assert body["reasoning"] == {"effort": "high"}
    else:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["schema"] == rubric.reply_schema
        assert fmt["json_schema"]["strict"] is True and fmt["json_schema"]["name"] == rubric.reply_schema_name


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_optional_knobs_are_not_sent_when_unset(server, rubric, sleeps, protocol):
    server.push(200, reply_body(protocol, good_text()))
    outcome = client_for(server, protocol, rubric, sleeps).judge(INPUTS)
    assert outcome.ok
    body = server.requests[0].body
    assert "temperature" not in body and "reasoning" not in body and "reasoning_effort" not in body
    assert outcome.usage.cost_usd is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_schema_violation_then_valid(server, rubric, sleeps, protocol):
    bad = json.dumps(with_subscores(text=25))
    server.push(200, reply_body(protocol, bad, input_tokens=10, output_tokens=5))
    server.push(200, reply_body(protocol, good_text(), input_tokens=10, output_tokens=5))
    outcome = client_for(server, protocol, rubric, sleeps).judge(INPUTS)

    assert outcome.ok and outcome.reply.score == 81.5
    assert [a.status for a in outcome.attempts] == ["invalid_reply", "ok"]
    first = outcome.attempts[0]
    assert first.raw_reply == bad and "subscores.text" in first.error
    assert outcome.usage.input_tokens == 20 and outcome.usage.output_tokens == 10  # summed
    assert len(server.requests) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_persistent_wrong_sum_fails_without_a_score(server, rubric, sleeps, protocol):
    wrong = good_text(score=90)
    for _ in range(3):
        server.push(200, reply_body(protocol, wrong))
    outcome = client_for(server, protocol, rubric, sleeps, max_attempts=3).judge(INPUTS)

    assert not outcome.ok and outcome.reply is None
    assert "score" in outcome.error
    assert outcome.raw_reply == wrong
    assert [a.status for a in outcome.attempts] == ["invalid_reply"] * 3
    assert all(a.raw_reply == wrong for a in outcome.attempts)
    assert outcome.usage.input_tokens == 300
    assert len(server.requests) == 3 and server.pending == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rate_limited_then_success_honours_retry_after(server, rubric, sleeps, protocol):
    server.push(429, error_body("slow down", kind="rate_limit_error"), headers={"Retry-After": "0"})
    server.push(200, reply_body(protocol, good_text()))
    outcome = client_for(server, protocol, rubric, sleeps).judge(INPUTS)

    assert outcome.ok
    assert [a.status for a in outcome.attempts] == ["rate_limited", "ok"]
    assert "429" in outcome.attempts[0].error
    assert sleeps == [0.0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_server_error_then_success_backs_off(server, rubric, sleeps, protocol):
    server.push(500, error_body("boom"))
    server.push(200, reply_body(protocol, good_text()))
    outcome = client_for(server, protocol, rubric, sleeps, backoff_base_seconds=2.0).judge(INPUTS)

    assert outcome.ok
    assert [a.status for a in outcome.attempts] == ["server_error", "ok"]
    assert "500" in outcome.attempts[0].error
    assert len(sleeps) == 1 and 1.0 <= sleeps[0] <= 2.0  # first backoff: base with jitter in [½, 1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_retry_after_is_capped_and_backoff_grows(server, rubric, sleeps, protocol):
    server.push(429, error_body("slow"), headers={"Retry-After": "3600"})
    server.push(503, error_body("busy"))
    server.push(502, error_body("bad gateway"))
    server.push(500, error_body("boom"))
    outcome = client_for(server, protocol, rubric, sleeps, backoff_base_seconds=1.0, backoff_max_seconds=3.0).judge(
        INPUTS
    )

    assert not outcome.ok and outcome.reply is None and outcome.raw_reply == ""
    assert [a.status for a in outcome.attempts] == ["rate_limited", "server_error", "server_error", "server_error"]
    assert "500" in outcome.error
    assert len(sleeps) == 3  # no sleep after the last attempt
    assert sleeps[0] == 3.0  # Retry-After 3600 capped at backoff_max_seconds
    assert 1.0 <= sleeps[1] <= 2.0  # attempt 2: base·2 with jitter
    assert 1.5 <= sleeps[2] <= 3.0  # attempt 3: base·4 capped at 3, jitter


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_timeout_then_success(server, rubric, sleeps, protocol):
    server.push(200, reply_body(protocol, good_text()), delay=1.5)
    server.push(200, reply_body(protocol, good_text()))
    outcome = client_for(server, protocol, rubric, sleeps, timeout_seconds=0.5).judge(INPUTS)

    assert outcome.ok
    assert [a.status for a in outcome.attempts] == ["timeout", "ok"]
    assert outcome.attempts[0].seconds < 1.4
    assert len(sleeps) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_client_error_is_not_retried(server, rubric, sleeps, protocol):
    server.push(400, error_body("unsupported parameter: reasoning", kind="invalid_request_error"))
    server.push(200, reply_body(protocol, good_text()))
    outcome = client_for(server, protocol, rubric, sleeps).judge(INPUTS)

    assert not outcome.ok and outcome.reply is None
    assert [a.status for a in outcome.attempts] == ["client_error"]
    assert "400" in outcome.error and "unsupported parameter" in outcome.error
    assert len(server.requests) == 1 and server.pending == 1
    assert sleeps == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_connection_refused_is_retried_then_fails(rubric, sleeps, protocol):
    with JudgeServer() as gone:
        base_url = gone.base_url  # a port that is closed once the server stops
    settings = JudgeSettings(
        protocol=protocol, base_url=base_url, model="m", api_key_env=KEY_ENV, timeout_seconds=2.0, max_attempts=2
    )
    outcome = JudgeClient(settings, rubric, sleep=sleeps.append).judge(INPUTS)
    assert not outcome.ok
    assert [a.status for a in outcome.attempts] == ["connection_error", "connection_error"]
    assert len(sleeps) == 1


def test_missing_api_key_fails_without_calling(server, rubric, sleeps, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    outcome = client_for(server, "responses", rubric, sleeps).judge(INPUTS)
    assert not outcome.ok and KEY_ENV in outcome.error
    assert [a.status for a in outcome.attempts] == ["client_error"]
    assert server.requests == []


def test_key_is_read_at_call_time(server, rubric, sleeps, monkeypatch):
    client = client_for(server, "chat", rubric, sleeps)
    monkeypatch.setenv(KEY_ENV, "sk-rotated")
    server.push(200, reply_body("chat", good_text()))
    assert client.judge(INPUTS).ok
    assert server.requests[0].headers["authorization"] == "Bearer sk-rotated"
    assert "sk-rotated" not in repr(client.__dict__) and KEY not in repr(client.__dict__)


def test_judge_many_keeps_order(server, rubric, sleeps):
    for _ in range(3):
        server.push(200, reply_body("chat", good_text()))
    client = client_for(server, "chat", rubric, sleeps, concurrency=3)
    summaries = [dict(SUMMARY, marker=f"m{i}") for i in range(3)]
    outcomes = client.judge_many(JudgeInputs(SOURCE, "image/png", RENDER, s) for s in summaries)
    assert [o.ok for o in outcomes] == [True] * 3
    expected = [
        prompt_hash(
            rubric,
            source_sha256=hashlib.sha256(SOURCE).hexdigest(),
            render_sha256=hashlib.sha256(RENDER).hexdigest(),
            object_summary=s,
            model="judge-model-x",
        )
        for s in summaries
    ]
    assert [o.prompt_hash for o in outcomes] == expected


def test_make_client_and_settings_validation(rubric):
    client = make_client(
        JudgeSettings(protocol="chat", base_url="http://127.0.0.1:9/v1", model="m", timeout_seconds=1.0), rubric
    )
    assert isinstance(client, JudgeClient) and client.rubric is rubric
    with pytest.raises(ValueError, match="protocol"):
        JudgeSettings(protocol="completions", base_url="x", model="m")
    with pytest.raises(ValueError):
        JudgeSettings(protocol="chat", base_url="x", model="m", max_attempts=0)

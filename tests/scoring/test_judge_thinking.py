"""`manage.py judge --thinking off`: a local open-weight judge served by vLLM gets
"chat_template_kwargs": {"enable_thinking": false} in its chat-completions body, and nothing of the kind without the
flag; the responses protocol refuses the option."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.judge_client import JudgeClient, JudgeInputs, JudgeSettings
from scoring.rubric import load_rubric
from tests.factories import artifact_create, configuration_create, figure_create
from tests.scoring.judge_server import JudgeServer, reply_body

REPLY = {
    "score": 83,
    "subscores": {"text": 18, "semantic_structure": 25, "layout": 12, "editability": 20, "visual_detail": 8},
    "major_errors": [],
    "minor_errors": [],
    "editability_assessment": "native shapes",
    "reason": "close match",
}


def judge(server: JudgeServer, run: int, **options) -> None:
    call_command(
        "judge",
        judge_model="qwen-judge",
        base_url=server.base_url,
        run=run,
        family="qwen",
        protocol="chat",
        api_key_env="",
        concurrency=1,
        no_progress=True,
        stdout=io.StringIO(),
        **options,
    )


@pytest.mark.django_db
def test_the_judge_command_switches_thinking_off_only_when_asked():
    figures = [figure_create(f"t{i}", index=i) for i in range(2)]
    configuration = configuration_create("m1-direct", model="m1")
    for figure in figures:
        artifact_create(configuration, figure)
    with JudgeServer() as server:
        for _ in range(4):
            server.push(200, reply_body("chat", json.dumps(REPLY)))
        judge(server, 1, thinking="off")
        off = [request.body for request in server.requests]
        judge(server, 2)
        default = [request.body for request in server.requests[len(off) :]]
    assert len(off) == len(default) == 2
    assert all(body["chat_template_kwargs"] == {"enable_thinking": False} for body in off)
    assert all("chat_template_kwargs" not in body and "enable_thinking" not in json.dumps(body) for body in default)


@pytest.mark.django_db
def test_thinking_is_an_option_of_the_chat_protocol_only():
    with pytest.raises(CommandError, match="chat protocol"):
        call_command(
            "judge", judge_model="gpt-judge", base_url="http://127.0.0.1:9", run=1, protocol="responses", thinking="off"
        )


def test_the_client_sends_thinking_on_when_asked():
    inputs = JudgeInputs(
        source_png=b"\x89PNG source", source_mime="image/png", render_png=b"\x89PNG", object_summary={}
    )
    with JudgeServer() as server:
        server.push(200, reply_body("chat", json.dumps(REPLY)))
        settings = JudgeSettings(protocol="chat", base_url=server.base_url, model="qwen", api_key_env="", thinking=True)
        assert JudgeClient(settings, load_rubric("refig-v1"), sleep=lambda _: None).judge(inputs).ok
        assert server.requests[0].body["chat_template_kwargs"] == {"enable_thinking": True}

import json

import pytest

from agents.configurations import ConfigurationFileError, configuration_pairs, parse_configurations
from agents.runlog import parse_run_log

TEN = "\n".join(
    f'[[configurations]]\nslug = "{m}-{w}"\nmodel = "{m}"\nharness = "{h}"\nworkflow = "{w}"\nreasoning_effort = "high"\nlabel = "{m} {w}"\n'
    for m, h in (("m1", "codex"), ("m2", "codex"), ("m3", "claude-code"), ("m4", "codex"), ("m4x", "opencode"))
    for w in ("direct", "specialized")
).replace('"m4x', '"m4x')


def test_ten_configurations_give_45_pairs_with_within_pairs_marked(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(TEN)
    specs = parse_configurations(path)
    pairs = configuration_pairs(specs)
    assert len(specs) == 10 and len(pairs) == 45
    within = sorted((p.x, p.y) for p in pairs if p.kind == "within")
    # Five (model, harness) combinations, each with a direct and a specialized run.
    assert within == sorted((f"{m}-direct", f"{m}-specialized") for m in ("m1", "m2", "m3", "m4", "m4x"))


def test_same_model_in_two_harnesses_is_an_across_pair(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "configurations": [
                    {
                        "slug": "a",
                        "model": "m",
                        "harness": "h1",
                        "workflow": "direct",
                        "reasoning_effort": "high",
                        "label": "A",
                    },
                    {
                        "slug": "b",
                        "model": "m",
                        "harness": "h2",
                        "workflow": "direct",
                        "reasoning_effort": "high",
                        "label": "B",
                    },
                ]
            }
        )
    )
    assert [p.kind for p in configuration_pairs(parse_configurations(path))] == ["across"]


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            {"slug": "a", "model": "m", "harness": "h", "workflow": "direct", "reasoning_effort": "high"},
            "configuration 1 label: missing",
        ),
        (
            {
                "slug": "A B",
                "model": "m",
                "harness": "h",
                "workflow": "direct",
                "reasoning_effort": "high",
                "label": "x",
            },
            "slug: 'A B' is not a slug",
        ),
        (
            {
                "slug": "a",
                "model": "m",
                "harness": "h",
                "workflow": "direct",
                "reasoning_effort": "high",
                "label": "x",
                "colour": 1,
            },
            "colour: unknown field",
        ),
    ],
)
def test_bad_declarations_name_entry_and_field(tmp_path, entry, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"configurations": [entry]}))
    with pytest.raises(ConfigurationFileError, match=message):
        parse_configurations(path)


def test_claude_style_result_event_gives_totals(tmp_path):
    log = tmp_path / "output.jsonl"
    events = [
        {"type": "system", "subtype": "init"},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "name": "Bash"}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "name": "Write"}],
                "usage": {"input_tokens": 20, "output_tokens": 7},
            },
        },
        {
            "type": "result",
            "num_turns": 2,
            "duration_ms": 61500,
            "total_cost_usd": 0.42,
            "usage": {"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 100},
        },
    ]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    economics = parse_run_log(log)
    assert economics.recoverable
    # totals from the result event: output 12; total = 30 + 100 + 12
    assert (economics.turns, economics.tool_calls, economics.output_tokens, economics.total_tokens) == (2, 2, 12, 142)
    assert economics.duration_seconds == 61.5 and economics.cost_usd == 0.42


def test_codex_style_turn_events_are_summed(tmp_path):
    log = tmp_path / "output.jsonl"
    events = [
        {"type": "thread.started", "timestamp": "2026-01-01T10:00:00Z"},
        {"type": "item.completed", "item": {"type": "command_execution"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 40}},
        {"type": "item.completed", "item": {"type": "command_execution"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 50, "output_tokens": 10},
            "timestamp": "2026-01-01T10:02:30Z",
        },
    ]
    log.write_text("\n".join(json.dumps(e) for e in events))
    economics = parse_run_log(log)
    assert (economics.turns, economics.tool_calls, economics.output_tokens, economics.total_tokens) == (2, 2, 50, 200)
    assert economics.duration_seconds == 150.0 and economics.cost_usd is None


def test_truncated_or_garbage_log_is_unrecoverable(tmp_path):
    log = tmp_path / "output.jsonl"
    log.write_text('{"type": "turn.completed", "usage": {"output_tokens": 4}}\n{"type": "turn.comp')
    economics = parse_run_log(log)
    assert not economics.recoverable and "line 2" in economics.problem
    log.write_bytes(b"\x00\xff garbage")
    assert not parse_run_log(log).recoverable

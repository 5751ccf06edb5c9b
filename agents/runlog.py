"""Run-log economics from an agent's `output.jsonl` (paper Tables 22–23). Pure.

Logs come from different harnesses; we read the shapes they write in common:
- a final `result` event carrying totals (`num_turns`, `duration_ms`, `total_cost_usd`, `usage`),
- per-turn events (`turn.completed`, assistant messages) carrying `usage`,
- tool events (`tool_call`, `tool_use`, `function_call`, items of type `command_execution`…).
A log that is not valid JSON Lines throughout (truncated, garbage) is unrecoverable: partial
numbers from half a log would bias the means.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

MAX_LOG_BYTES = 256 * 1024 * 1024
TOOL_EVENT_TYPES = frozenset(
    {"tool_call", "tool_use", "function_call", "command_execution", "mcp_tool_call", "tool_result_pending"}
)
TURN_EVENT_TYPES = frozenset({"turn.completed", "turn", "assistant_turn"})


@dataclass(frozen=True)
class RunEconomics:
    recoverable: bool
    problem: str = ""
    turns: int | None = None
    tool_calls: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    duration_seconds: float | None = None
    cost_usd: float | None = None


def _usage_tokens(usage: dict) -> tuple[int, int]:
    output = usage.get("output_tokens", usage.get("completion_tokens", 0)) or 0
    inputs = usage.get("input_tokens", usage.get("prompt_tokens", 0)) or 0
    inputs += (usage.get("cache_read_input_tokens") or 0) + (usage.get("cache_creation_input_tokens") or 0)
    total = usage.get("total_tokens") or (inputs + output)
    return int(output), int(total)


def _timestamp(event: dict) -> float | None:
    raw = event.get("timestamp") or event.get("ts") or event.get("time")
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def parse_run_log(path: Path) -> RunEconomics:
    try:
        size = path.stat().st_size
    except OSError as error:
        return RunEconomics(recoverable=False, problem=f"cannot read: {error.strerror}")
    if size == 0:
        return RunEconomics(recoverable=False, problem="empty log")
    if size > MAX_LOG_BYTES:
        return RunEconomics(recoverable=False, problem=f"log of {size} bytes exceeds {MAX_LOG_BYTES}")
    turns = tool_calls = output_tokens = total_tokens = 0
    saw_usage = False
    final: dict | None = None
    stamps: list[float] = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return RunEconomics(recoverable=False, problem=f"line {number} is not JSON (truncated or garbage log)")
            if not isinstance(event, dict):
                return RunEconomics(recoverable=False, problem=f"line {number} is not a JSON object")
            kind = str(event.get("type", ""))
            item = event.get("item") if isinstance(event.get("item"), dict) else {}
            if kind == "result":
                final = event
            if kind in TURN_EVENT_TYPES or (kind == "assistant" and "message" in event):
                turns += 1
            if kind in TOOL_EVENT_TYPES or item.get("type") in TOOL_EVENT_TYPES and kind.endswith("completed"):
                tool_calls += 1
            message = event.get("message") if isinstance(event.get("message"), dict) else {}
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tool_calls += 1
            usage = event.get("usage") or message.get("usage")
            if isinstance(usage, dict) and kind != "result":
                out, tot = _usage_tokens(usage)
                output_tokens += out
                total_tokens += tot
                saw_usage = True
            stamp = _timestamp(event)
            if stamp is not None:
                stamps.append(stamp)

    duration = cost = None
    if final is not None:
        turns = int(final.get("num_turns", turns) or turns)
        if isinstance(final.get("usage"), dict):
            output_tokens, total_tokens = _usage_tokens(final["usage"])
            saw_usage = True
        if final.get("duration_ms") is not None:
            duration = float(final["duration_ms"]) / 1000
        cost = final.get("total_cost_usd", final.get("cost_usd"))
        cost = float(cost) if cost is not None else None
    if duration is None and len(stamps) >= 2:
        duration = max(stamps) - min(stamps)
    return RunEconomics(
        recoverable=True,
        turns=turns,
        tool_calls=tool_calls,
        output_tokens=output_tokens if saw_usage else None,
        total_tokens=total_tokens if saw_usage else None,
        duration_seconds=duration,
        cost_usd=cost,
    )

"""Run-log economics from an agent's `output.jsonl`, and their summary per configuration (paper Tables 22–23). Pure.

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

import numpy as np
import pandas as pd

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


# --- summary per configuration (Tables 22-23) ------------------------------------------------------
ECONOMICS_METRICS = ("turns", "tool_calls", "output_tokens", "total_tokens", "duration_seconds", "cost_usd")
# Columns kept from before the paper's (means over recovered logs, recorded cost only), then Table 22's, then 23's.
ECONOMICS_COLUMNS = [
    "configuration",
    "artifacts",
    "logs_present",
    "logs_recoverable",
    "cost_records",
    *(f"mean_{m}" for m in ECONOMICS_METRICS),
    "median_total_tokens",
    "total_cost_usd",
    "logs_recovered",
    "median_turns",
    "median_tool_calls",
    "median_output_tokens",
    "total_tokens_millions",
    "median_duration_seconds",
    "cost_recorded",
    "cost_estimated_runs",
    "cost_total_usd",
    "cost_mean_usd",
    "cost_upper_bound",
]


@dataclass(frozen=True)
class TokenPrices:
    """List prices in USD per million tokens, to estimate the cost of a run whose log records none."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, output_tokens: float, total_tokens: float) -> float:
        """Output tokens at the output price, every other token (all input, cached included) at the input price: an
        upper bound, since cached input is billed below list price."""
        return ((total_tokens - output_tokens) * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    def note(self) -> str:
        return (
            f"Where a log records no cost, cost_total_usd and cost_mean_usd price its tokens at "
            f"${self.input_per_mtok:g} per million input tokens (all of them, cached included) and "
            f"${self.output_per_mtok:g} per million output tokens: an upper bound (cost_upper_bound)."
        )


NO_PRICES_NOTE = (
    "Runs whose log records no cost are not costed; give price_input and price_output (USD per million tokens, "
    "export --price-input / --price-output) to estimate them from their tokens, as an upper bound."
)
RECOVERED_NOTE = (
    "Medians, totals and means over the runs with a recovered log (logs_recovered and cost_recorded: n of the "
    "configuration's N artifacts); total tokens are uncached input + cache writes + cache reads + output; a duration "
    "is blank where the logs carry no timestamps."
)


def _numbers(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column], errors="coerce").dropna()


def _stat(values: pd.Series, how: str) -> float:
    return float(getattr(values, how)()) if len(values) else np.nan


def economics_summary(runs: pd.DataFrame, *, prices: TokenPrices | None = None) -> pd.DataFrame:
    """One row per configuration (in the order of ``runs``) from one row per artifact: ``configuration``,
    ``log_status`` (absent / unrecoverable / recoverable) and :data:`ECONOMICS_METRICS`. Table 22: logs recovered
    n/N, median turns, tool calls, output tokens and duration, total tokens in millions; Table 23: cost records n/N
    and, with ``prices``, runs without a recorded cost priced from their tokens (:meth:`TokenPrices.cost`), so the
    total and the mean per costed run are an upper bound wherever one was."""
    rows = []
    for slug, group in runs.groupby("configuration", sort=False):
        ok = group[group["log_status"] == "recoverable"]
        n = len(group)
        recorded = _numbers(ok, "cost_usd")
        row = {
            "configuration": slug,
            "artifacts": n,
            "logs_present": int((group["log_status"] != "absent").sum()),
            "logs_recoverable": len(ok),
            "cost_records": len(recorded),
            **{f"mean_{m}": _stat(_numbers(ok, m), "mean") for m in ECONOMICS_METRICS},
            "median_total_tokens": _stat(_numbers(ok, "total_tokens"), "median"),
            "total_cost_usd": _stat(recorded, "sum"),
            "logs_recovered": f"{len(ok)}/{n}",
            **{f"median_{m}": _stat(_numbers(ok, m), "median") for m in ("turns", "tool_calls", "output_tokens")},
            "total_tokens_millions": _stat(_numbers(ok, "total_tokens"), "sum") / 1e6,
            "median_duration_seconds": _stat(_numbers(ok, "duration_seconds"), "median"),
            "cost_recorded": f"{len(recorded)}/{n}",
        }
        estimated = pd.Series([], dtype=float)
        if prices is not None:
            unpriced = ok[ok["cost_usd"].isna()]
            tokens = unpriced[["output_tokens", "total_tokens"]].apply(pd.to_numeric, errors="coerce").dropna()
            estimated = pd.Series([prices.cost(o, t) for o, t in tokens.itertuples(index=False)], dtype=float)
        costs = pd.concat([recorded.astype(float), estimated], ignore_index=True)
        row.update(
            cost_estimated_runs=len(estimated),
            cost_total_usd=_stat(costs, "sum"),
            cost_mean_usd=_stat(costs, "mean"),
            cost_upper_bound=bool(len(estimated)),
        )
        rows.append(row)
    table = pd.DataFrame(rows, columns=ECONOMICS_COLUMNS)
    table.attrs["notes"] = [RECOVERED_NOTE, prices.note() if prices is not None else NO_PRICES_NOTE]
    return table

"""What an agent leaves beside its deck: a stand-in for its code (output.py for the direct workflow, output.js for the
specialized one), its run log in the shape its harness writes (Claude Code / OpenCode stream JSON with a result line
and cost, or Codex / Gemini CLI events without one; a few truncated), and error.log for the missing and corrupt gate
failures. `run_log` also returns the run's economics (turns, tokens, duration, cost) for summary.json. Pure: no Django."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np

from .configurations import PRICE_PER_MTOK, DemoConfiguration
from .figures import FigureModel
from .plans import ArtifactPlan


def agent_code(figure: FigureModel, configuration: DemoConfiguration) -> tuple[str, str]:
    labels = ", ".join(json.dumps(n.label) for n in figure.nodes[:4])
    if configuration.workflow == "direct":
        return "output.py", (
            "# synthetic demo: stands in for the agent's python-pptx code (not executed)\n"
            "from pptx import Presentation\nfrom pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE\n\n"
            f"LABELS = [{labels}, ...]\ndeck = Presentation()\nslide = deck.slides.add_slide(deck.slide_layouts[6])\n"
            "# ... one shape per module, one connector per arrow ...\ndeck.save('output.pptx')\n"
        )
    return "output.js", (
        "// synthetic demo: stands in for the agent's PPTX-skill script (not executed)\n"
        "const pptx = require('pptx-skill');\n"
        f"const labels = [{labels}];\n"
        "// ... html2pptx layout, shapes and lines ...\npptx.writeFile({ fileName: 'output.pptx' });\n"
    )


def run_log(
    figure: FigureModel, configuration: DemoConfiguration, plan: ArtifactPlan, rng: np.random.Generator
) -> tuple[str, dict]:
    """An agent log in the shape its harness writes; returns (text, economics)."""
    specialized = configuration.workflow == "specialized"
    turns = int(rng.integers(5, 11) + (4 if specialized else 0) + (6 if plan.gate == "missing" else 0))
    start = datetime(2026, 6, 20, 8, 0, 0, tzinfo=UTC) + timedelta(minutes=int(rng.integers(0, 60 * 24 * 5)))
    clock, total_in, total_out, lines = 0.0, 0, 0, []
    claude_style = configuration.harness in ("claude-code", "opencode")
    if claude_style:
        lines.append(
            {"type": "system", "subtype": "init", "model": configuration.model, "timestamp": start.isoformat()}
        )
    else:
        lines.append({"type": "thread.started", "timestamp": start.isoformat()})
    for turn in range(turns):
        tokens_in, tokens_out = int(rng.integers(3_000, 9_000)) + 1_500 * turn, int(rng.integers(300, 2_400))
        total_in, total_out = total_in + tokens_in, total_out + tokens_out
        clock += float(rng.uniform(6, 40))
        stamp = (start + timedelta(seconds=clock)).isoformat()
        if claude_style:
            lines.append(
                {
                    "type": "assistant",
                    "message": {
                        "content": [{"type": "tool_use", "name": "Bash"}],
                        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                    },
                }
            )
        else:
            lines.append({"type": "item.completed", "item": {"type": "command_execution", "exit_code": 0}})
            lines.append(
                {
                    "type": "turn.completed",
                    "timestamp": stamp,
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                }
            )
    price_in, price_out = PRICE_PER_MTOK[configuration.model]
    cost = round((total_in * price_in + total_out * price_out) / 1e6, 4)
    if claude_style:
        lines.append(
            {
                "type": "result",
                "subtype": "error_max_turns" if plan.gate == "missing" else "success",
                "is_error": plan.gate == "missing",
                "num_turns": turns,
                "duration_ms": int(clock * 1000),
                "total_cost_usd": cost,
                "usage": {"input_tokens": total_in, "output_tokens": total_out},
                "timestamp": (start + timedelta(seconds=clock)).isoformat(),
            }
        )
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    if plan.truncated_log:
        text = text[: int(len(text) * 0.7)]
    economics = {
        "turns": turns,
        "input_tokens": total_in,
        "output_tokens": total_out,
        "duration_s": round(clock, 1),
        "cost_usd": cost if claude_style else None,
        "recoverable": not plan.truncated_log,
    }
    return text, economics


ERROR_LOGS = {
    "missing": "synthetic demo: agent stopped at the turn budget before output.pptx was written\n",
    "corrupt": "synthetic demo: the process was killed while writing output.pptx (truncated zip)\n",
}

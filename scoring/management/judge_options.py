"""The options every judge command takes (`judge`, `judge_pptbench`): which model, where, how, at what price."""

from __future__ import annotations

from scoring.judge_client import JudgeSettings
from scoring.judge_pacing import PacingSettings


def add_judge_arguments(parser) -> None:
    parser.add_argument("--judge-model", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--run", required=True, type=int)
    parser.add_argument("--family", help="judge family (default: the model id's first dash-separated part)")
    parser.add_argument("--configuration")
    parser.add_argument("--limit", type=int)
    parser.add_argument(
        "--protocol",
        choices=["responses", "chat"],
        default="responses",
        help="API: responses (hosted judge) or chat (OpenAI-compatible server such as vLLM)",
    )
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key ('' for none)"
    )
    parser.add_argument("--reasoning-effort")
    parser.add_argument(
        "--thinking",
        choices=["on", "off"],
        help="chat protocol: switch a local judge's thinking on or off (vLLM chat_template_kwargs.enable_thinking); "
        "default: the chat template's own",
    )
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--max-attempts", type=int, default=4)
    parser.add_argument("--price-input", type=float, help="USD per million input tokens")
    parser.add_argument("--price-output", type=float, help="USD per million output tokens")
    parser.add_argument(
        "--pause", action="store_true", help="pause this judge run (running judges stop after their current calls)"
    )
    parser.add_argument("--no-progress", action="store_true")


def add_pacing_arguments(parser, *, start: int, max_concurrency: int) -> None:
    """How fast a judge command calls the API: adaptive from `start` calls in flight unless --concurrency fixes it."""
    parser.add_argument(
        "--concurrency",
        type=int,
        help=f"calls in flight, fixed (default: adaptive, starting at {start} and following the API's 429s)",
    )
    parser.add_argument(
        "--max-concurrency", type=int, default=max_concurrency, help="the adaptive concurrency's ceiling"
    )
    parser.add_argument("--requests-per-minute", type=float, help="stay under this request rate (your API tier's)")
    parser.add_argument("--tokens-per-minute", type=float, help="stay under this token rate (your API tier's)")
    parser.add_argument(
        "--budget",
        type=float,
        help="stop before this run's cost (USD, all it has cost so far) passes this; needs prices",
    )


def pacing_settings(options: dict, *, start: int) -> PacingSettings:
    """The pacing from the parsed options (ValueError: the settings' own checks, or a budget without prices)."""
    if options["budget"] is not None and (options["price_input"] is None or options["price_output"] is None):
        raise ValueError("--budget needs --price-input and --price-output to know what a judgement costs")
    fixed = options["concurrency"]
    return PacingSettings(
        start_concurrency=fixed or min(start, options["max_concurrency"]),
        max_concurrency=fixed or options["max_concurrency"],
        fixed=fixed is not None,
        requests_per_minute=options["requests_per_minute"],
        tokens_per_minute=options["tokens_per_minute"],
        budget_usd=options["budget"],
    )


def judge_settings(options: dict, *, concurrency: int) -> JudgeSettings:
    """The client's settings from the parsed options (ValueError: the settings' own checks)."""
    thinking = options["thinking"]
    return JudgeSettings(
        protocol=options["protocol"],
        base_url=options["base_url"],
        model=options["judge_model"],
        api_key_env=options["api_key_env"],
        reasoning_effort=options["reasoning_effort"],
        temperature=options["temperature"],
        thinking=None if thinking is None else thinking == "on",
        timeout_seconds=options["timeout"],
        max_attempts=options["max_attempts"],
        concurrency=concurrency,
        price_input_per_mtok=options["price_input"],
        price_output_per_mtok=options["price_output"],
    )


def judge_family(options: dict) -> str:
    return options["family"] or options["judge_model"].split("-")[0]

"""The options every judge command takes (`judge`, `judge_pptbench`): which model, where, how, at what price."""

from __future__ import annotations

from scoring.judge_client import JudgeSettings


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

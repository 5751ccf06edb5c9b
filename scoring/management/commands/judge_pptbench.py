from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import AppError
from scoring import pptbench_judge_services as services
from scoring.judge_client import JudgeSettings
from scoring.models import JudgeRun
from scoring.pptbench_policy import protocol


class Command(BaseCommand):
    help = (
        "Score artifacts under PPTBench's protocol beside the rubric: three judge rounds per artifact (semantic gate, "
        "rendering gate, findings), merged by PPTBench's frozen rules into scores.csv rows kept under this run; "
        "resumable (stored stages are not asked again). The prompts are this project's own (scoring/rubrics/"
        "pptbench-v1.json)."
    )

    def add_arguments(self, parser):
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
        parser.add_argument("--thinking", choices=["on", "off"], help="chat protocol: a local judge's thinking")
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--timeout", type=float, default=600)
        parser.add_argument("--max-attempts", type=int, default=4)
        parser.add_argument("--concurrency", type=int, default=6, help="parallel calls (an artifact's rounds together)")
        parser.add_argument("--price-input", type=float, help="USD per million input tokens")
        parser.add_argument("--price-output", type=float, help="USD per million output tokens")
        parser.add_argument("--pause", action="store_true", help="pause this run (running judges stop after a batch)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **o):
        try:
            settings = JudgeSettings(
                protocol=o["protocol"],
                base_url=o["base_url"],
                model=o["judge_model"],
                api_key_env=o["api_key_env"],
                reasoning_effort=o["reasoning_effort"],
                temperature=o["temperature"],
                thinking=None if o["thinking"] is None else o["thinking"] == "on",
                timeout_seconds=o["timeout"],
                max_attempts=o["max_attempts"],
                concurrency=o["concurrency"],
                price_input_per_mtok=o["price_input"],
                price_output_per_mtok=o["price_output"],
            )
            judge_run = services.pptbench_judge_run_ensure(
                judge=o["judge_model"],
                family=o["family"] or o["judge_model"].split("-")[0],
                run=o["run"],
                api=o["protocol"],
                base_url=o["base_url"],
                reasoning_effort=o["reasoning_effort"] or "",
                temperature=o["temperature"],
            )
        except (ValueError, AppError) as error:
            raise CommandError(str(error)) from error
        if o["pause"]:
            services.pptbench_judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.PAUSED)
            self.stdout.write(f"{judge_run} paused")
            return
        services.pptbench_judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.ACTIVE)
        artifacts = services.pptbench_artifacts_to_judge(
            judge_run=judge_run, configuration=o["configuration"], limit=o["limit"]
        )
        bar = tqdm(
            total=len(artifacts),
            unit="artifact",
            desc=f"PPTBench judge run {o['run']} ({protocol().rounds} rounds each)",
            disable=o["no_progress"],
            file=self.stderr._out,
        )
        counts = services.pptbench_judge_artifacts(
            artifacts=artifacts, judge_run=judge_run, settings=settings, on_done=lambda _: bar.update(1)
        )
        bar.close()
        left = len(artifacts) - counts.scored - counts.failed
        if left == 0 and not counts.failed:
            services.pptbench_judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
        self.stdout.write(
            f"{judge_run}: {counts.scored} artifacts scored, {counts.failed} with a failed round (kept with its raw "
            f"reply), {left} not reached; {counts.finding_errors} findings outside the taxonomy dropped (kept as "
            "errors of their round)"
        )
        if counts.failed:
            raise CommandError(f"{counts.failed} artifacts have a failed round; re-run the same command to retry them")

from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import AppError
from scoring import services, tasks
from scoring.judge_client import JudgeSettings
from scoring.models import JudgeRun


class Command(BaseCommand):
    help = "Judge gate-passed artifacts with a multimodal model under the rubric; resumable (ok records are skipped)."

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
            help="responses: hosted judge; chat: OpenAI-compatible server (vLLM)",
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
        parser.add_argument("--concurrency", type=int, default=4)
        parser.add_argument("--price-input", type=float, help="USD per million input tokens")
        parser.add_argument("--price-output", type=float, help="USD per million output tokens")
        parser.add_argument("--rubric", default="refig-v1")
        parser.add_argument("--enqueue", action="store_true", help="send one task per artifact to the judge queue")
        parser.add_argument(
            "--pause", action="store_true", help="pause this judge run (running judges stop after their current calls)"
        )
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
            judge_run = services.judge_run_ensure(
                judge=o["judge_model"],
                family=o["family"] or o["judge_model"].split("-")[0],
                run=o["run"],
                rubric_version=o["rubric"],
                protocol=o["protocol"],
                base_url=o["base_url"],
                reasoning_effort=o["reasoning_effort"] or "",
                temperature=o["temperature"],
            )
        except (ValueError, AppError) as error:  # the judge settings' own checks, or a run stored differently
            raise CommandError(str(error)) from error
        if o["pause"]:
            services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.PAUSED)
            self.stdout.write(f"{judge_run} paused")
            return
        services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.ACTIVE)
        artifacts = services.artifacts_to_judge(judge_run=judge_run, configuration=o["configuration"], limit=o["limit"])
        if o["enqueue"]:
            for artifact in artifacts:
                tasks.judge_artifact.delay(artifact.pk, judge_run.pk, asdict(settings), o["rubric"])
            self.stdout.write(f"{len(artifacts)} artifacts queued for {judge_run}")
            return
        bar = tqdm(
            total=len(artifacts),
            unit="artifact",
            desc=f"judge run {o['run']}",
            disable=o["no_progress"],
            file=self.stderr._out,
        )
        ok, failed = services.judge_artifacts(
            artifacts=artifacts,
            judge_run=judge_run,
            settings=settings,
            rubric_version=o["rubric"],
            on_done=lambda _: bar.update(1),
        )
        bar.close()
        left = len(artifacts) - ok - failed
        if left == 0 and not failed:
            services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
        self.stdout.write(
            f"{judge_run}: {ok} judged, {failed} failed (kept with their raw replies), {left} not reached"
        )
        if failed:
            raise CommandError(f"{failed} judgements failed; re-run the same command to retry them")

from dataclasses import asdict, replace

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import AppError
from scoring import pptbench_judge_services as services
from scoring import tasks
from scoring.management.judge_options import (
    add_judge_arguments,
    add_pacing_arguments,
    judge_family,
    judge_settings,
    pacing_settings,
)
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
        add_judge_arguments(parser)
        # An artifact's rounds go out together: the window starts at one artifact's worth of calls.
        add_pacing_arguments(parser, start=protocol().rounds, max_concurrency=99)
        parser.add_argument(
            "--enqueue", action="store_true", help="send one task per artifact to the judge queue (its rounds together)"
        )

    def handle(self, *args, **o):
        try:
            settings = judge_settings(o, concurrency=o["concurrency"] or protocol().rounds)
            pacing = pacing_settings(o, start=protocol().rounds)
            if o["budget"] is not None and o["enqueue"]:
                raise ValueError("--budget keeps count in this command: run it without --enqueue")
            judge_run = services.pptbench_judge_run_ensure(
                judge=o["judge_model"],
                family=judge_family(o),
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
        if o["enqueue"]:
            # In a task the artifact's rounds go out together, whatever --concurrency says here.
            task_settings = asdict(replace(settings, concurrency=protocol().rounds))
            for artifact in artifacts:
                tasks.judge_pptbench_artifact.delay(artifact.pk, judge_run.pk, task_settings)
            self.stdout.write(f"{len(artifacts)} artifacts queued for {judge_run}")
            return
        bar = tqdm(
            total=len(artifacts),
            unit="artifact",
            desc=f"PPTBench judge run {o['run']} ({protocol().rounds} rounds each)",
            disable=o["no_progress"],
            file=self.stderr._out,
        )
        counts = services.pptbench_judge_artifacts(
            artifacts=artifacts,
            judge_run=judge_run,
            settings=settings,
            on_done=lambda _: bar.update(1),
            pacing=pacing,
        )
        bar.close()
        left = len(artifacts) - counts.scored - counts.failed
        if left == 0 and not counts.failed:
            services.pptbench_judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
        self.stdout.write(
            f"{judge_run}: {counts.scored} artifacts scored, {counts.failed} with a failed round (kept with its raw "
            f"reply), {left} not reached; {counts.finding_errors} findings outside the taxonomy dropped (kept as "
            "errors of their round)" + ("" if counts.cost_usd is None else f"; cost so far ${counts.cost_usd:.2f}")
        )
        if counts.budget_reached:
            self.stdout.write(f"stopped at the budget of ${o['budget']:.2f}; raise --budget to judge the rest")
        if counts.failed:
            raise CommandError(f"{counts.failed} artifacts have a failed round; re-run the same command to retry them")

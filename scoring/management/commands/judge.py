import sys
import time
from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from core.errors import AppError
from scoring import batch_runs, judge_runs, services, tasks
from scoring.judge_batch import BatchError
from scoring.judge_pacing import Progress, progress_line
from scoring.management.judge_options import (
    add_judge_arguments,
    add_pacing_arguments,
    judge_family,
    judge_settings,
    pacing_settings,
)
from scoring.models import JudgeRun

LOG_LINE_SECONDS = 10  # the progress line's period when stderr is not a terminal
START_CONCURRENCY = 2  # judgements in flight before the API's answers say how many it takes


class Command(BaseCommand):
    help = "Judge gate-passed artifacts with a multimodal model under the rubric; resumable (ok records are skipped)."

    def add_arguments(self, parser):
        add_judge_arguments(parser)
        add_pacing_arguments(parser, start=START_CONCURRENCY, max_concurrency=100)
        parser.add_argument(
            "--claim-lease",
            type=float,
            default=judge_runs.JUDGE_LEASE_SECONDS,
            help="seconds after which a killed command's claims are taken over",
        )
        parser.add_argument("--rubric", default="refig-v1")
        parser.add_argument("--enqueue", action="store_true", help="send one task per artifact to the judge queue")
        parser.add_argument(
            "--batch",
            action="store_true",
            help="hosted judges: judge through the Batch API at half the price (submit, poll, ingest; run the same "
            "command again to carry on after a restart)",
        )
        parser.add_argument("--no-wait", action="store_true", help="with --batch: submit or poll once, then return")
        parser.add_argument("--poll-interval", type=float, default=60, help="with --batch: seconds between polls")

    def handle(self, *args, **o):
        try:
            settings = judge_settings(o, concurrency=o["concurrency"] or 4)
            pacing = pacing_settings(o, start=START_CONCURRENCY)
            if o["claim_lease"] <= 0:
                raise ValueError("--claim-lease must be positive")
            judge_run = services.judge_run_ensure(
                judge=o["judge_model"],
                family=judge_family(o),
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
        if o["batch"]:
            return self._batch(judge_run, settings, o)
        artifacts = services.artifacts_to_judge(judge_run=judge_run, configuration=o["configuration"], limit=o["limit"])
        if o["enqueue"]:
            for artifact in artifacts:
                tasks.judge_artifact.delay(artifact.pk, judge_run.pk, asdict(settings), o["rubric"])
            self.stdout.write(f"{len(artifacts)} artifacts queued for {judge_run}")
            return
        try:
            result = judge_runs.judge_artifacts(
                artifacts=artifacts,
                judge_run=judge_run,
                settings=settings,
                pacing=pacing,
                rubric_version=o["rubric"],
                on_progress=None if o["no_progress"] else self._progress(f"judge run {o['run']}"),
                lease_seconds=o["claim_lease"],
            )
        except KeyboardInterrupt:
            raise CommandError("interrupted; run the same command again to carry on") from None
        if not o["no_progress"] and sys.stderr.isatty():
            self.stderr.write("")
        if result.left == 0 and not result.failed:
            services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
        cost = "" if result.cost_usd is None else f"; cost so far ${result.cost_usd:.2f}"
        self.stdout.write(
            f"{judge_run}: {result.ok} judged, {result.failed} failed (kept with their raw replies), "
            f"{result.left} not reached{cost}"
        )
        if result.budget_reached:
            self.stdout.write(f"stopped at the budget of ${o['budget']:.2f}; raise --budget to judge the rest")
        if result.held_elsewhere:
            self.stdout.write(f"{result.held_elsewhere} artifacts are being judged by another worker")
        if result.failed:
            raise CommandError(f"{result.failed} judgements failed; re-run the same command to retry them")

    def _batch(self, judge_run, settings, o) -> None:
        try:
            report = batch_runs.judge_batch_step(
                judge_run=judge_run,
                settings=settings,
                rubric_version=o["rubric"],
                artifacts=lambda: services.artifacts_to_judge(
                    judge_run=judge_run, configuration=o["configuration"], limit=o["limit"]
                ),
                wait=not o["no_wait"],
                poll_seconds=o["poll_interval"],
                on_poll=lambda b: self.stderr.write(f"{b}: {len(b.requests)} requests, {b.api_status}"),
            )
        except BatchError as error:
            raise CommandError(f"Batch API: {error}") from error
        if report.batch is None:
            services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
            self.stdout.write(f"{judge_run}: nothing left to judge")
            return
        batch = report.batch
        if report.submitted:
            self.stdout.write(f"{batch}: {len(batch.requests)} requests submitted")
        if batch.status in (batch.Status.INGESTED, batch.Status.FAILED):
            cost = ""
            if report.cost_usd is not None:
                saved = report.synchronous_cost_usd - report.cost_usd
                cost = (
                    f"; cost ${report.cost_usd:.2f} at the batch price "
                    f"(${report.synchronous_cost_usd:.2f} at the synchronous price: ${saved:.2f} saved)"
                )
            self.stdout.write(f"{batch} {batch.api_status}: {report.ok} judged, {report.failed} failed{cost}")
            left = services.artifacts_to_judge(judge_run=judge_run, configuration=o["configuration"])
            if not left:
                services.judge_run_set_status(judge_run=judge_run, status=JudgeRun.Status.DONE)
            elif report.failed:
                raise CommandError(f"{report.failed} judgements failed; run the same command again to retry them")
        else:
            self.stdout.write(f"{batch}: {batch.api_status}; run the same command again to carry on")

    def _progress(self, label: str):
        """A live line on a terminal (rewritten in place), a line every ten seconds in a log."""
        tty = sys.stderr.isatty()
        last = [0.0]

        def show(progress: Progress) -> None:
            line = f"{label}: {progress_line(progress)}"
            if tty:
                self.stderr._out.write(f"\r{line}\033[K")
                self.stderr._out.flush()
            elif time.monotonic() - last[0] >= LOG_LINE_SECONDS or progress.done + progress.failed == progress.total:
                last[0] = time.monotonic()
                self.stderr.write(line)

        return show

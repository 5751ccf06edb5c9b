from django.core.management.base import BaseCommand
from tqdm import tqdm

from agents import render, selectors, services, tasks
from agents.models import Artifact


class Command(BaseCommand):
    help = "Run the gate, the object audit and (unless --no-render) the rendering for artifacts that need it."

    def add_arguments(self, parser):
        parser.add_argument("--configuration", help="only this configuration slug")
        parser.add_argument("--no-render", action="store_true")
        parser.add_argument("--force", action="store_true", help="redo even when the stored result is current")
        parser.add_argument(
            "--enqueue", action="store_true", help="send batches to the render queue instead of running inline"
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, configuration, no_render, force, enqueue, no_progress, **options):
        if force:
            ids = list(
                selectors.artifact_list(configuration=configuration).exclude(pptx="").values_list("pk", flat=True)
            )
        else:
            ids = selectors.artifact_ids_pending_audit(configuration=configuration, render=not no_render)
        if enqueue:
            for chunk in render.message_batches(ids):
                if no_render:
                    for pk in chunk:
                        tasks.audit_artifact.delay(pk)
                else:
                    tasks.audit_and_render.delay(chunk)
            self.stdout.write(f"{len(ids)} artifacts queued")
            return
        bar = tqdm(total=len(ids), unit="artifact", desc="audit_artifacts", disable=no_progress, file=self.stderr._out)
        renderer = None if no_render else services.renderer_create()
        try:
            for start in range(0, len(ids), render.DEFAULT_BATCH_SIZE):
                chunk = ids[start : start + render.DEFAULT_BATCH_SIZE]
                batch = list(Artifact.objects.filter(pk__in=chunk).order_by("pk"))
                audited = services.artifacts_audit(artifacts=batch, force=force)
                if renderer is not None:
                    services.artifacts_render(artifacts=audited, force=force, renderer=renderer)
                bar.update(len(batch))
        finally:
            bar.close()
            if renderer is not None:
                renderer.close()
        counts = selectors.gate_reason_counts()
        self.stdout.write(
            f"{len(ids)} artifacts processed; gate: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )

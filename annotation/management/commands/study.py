"""Studies of every kind from scripts and CI: the same services as /coordinate/.

manage.py study create NAME --configurations SLUG... [--kind pairwise|gate_review|rating]
                           [--figures TASK_ID... | --fields F... | --sample N | --from-screening SCREEN]
                           [--stratify STRATUM]  (gate review, rating: --sample N artifacts keeping a figure
                                                  attribute's or the configuration's shares)
                           [--seed S] [--description TEXT]
                           [--target-per-pair N] [--overlap-rate R]     (pairwise)
                           [--rating-axes AXIS...]                      (rating)
manage.py study create NAME --kind screening [--figures TASK_ID... | --fields F... | --sample N] [--seed S]
manage.py study assign NAME USER...
manage.py study status NAME active|paused|closed
manage.py study progress NAME
manage.py study list
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug

from annotation import selectors, services
from annotation.models import Study, StudyKind
from annotation.services.artifact_studies import STRATA
from annotation.views import STUDY_NAME_RULE
from core.errors import AppError
from core.roles import ANNOTATOR, user_has_role


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise CommandError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise CommandError(f"expected a number of at least 1, got {value}")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"--overlap-rate: expected a number in [0, 1], got {text!r}") from None
    if not 0 <= value <= 1:
        raise CommandError(f"--overlap-rate: expected a number in [0, 1], got {value}")
    return value


class Command(BaseCommand):
    help = "Create, assign, pause / resume / close, follow and list annotation studies of every kind."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="create a study")
        create.add_argument("name")
        create.add_argument(
            "--configurations", nargs="+", default=[], metavar="SLUG", help="every kind but screening needs them"
        )
        create.add_argument(
            "--kind",
            choices=StudyKind.values,
            default=StudyKind.PAIRWISE,
            help="pairwise comparisons (default), gate review or rating of one artifact at a time, or screening of "
            "candidate figures (accept / reject with a reason)",
        )
        create.add_argument("--rating-axes", nargs="+", metavar="AXIS", help="rating studies: the axes rated 0-5")
        chosen = create.add_mutually_exclusive_group()
        chosen.add_argument("--figures", nargs="+", metavar="TASK_ID", help="only these figures")
        chosen.add_argument("--fields", nargs="+", metavar="FIELD", help="only figures of these source fields")
        chosen.add_argument("--sample", type=_positive, metavar="N", help="a seeded sample of N figures")
        chosen.add_argument(
            "--from-screening", metavar="SCREEN", help="exactly the figures the screening study accepted by majority"
        )
        create.add_argument(
            "--stratify",
            choices=tuple(STRATA),
            help="gate-review and rating studies: --sample N draws N artifacts keeping each stratum's share (a figure "
            "attribute, or the configuration)",
        )
        create.add_argument("--seed", type=int, help="the study's seed (sample, pairs, sides)")
        create.add_argument("--target-per-pair", type=_positive, metavar="N")
        create.add_argument("--overlap-rate", type=_rate, metavar="R")
        create.add_argument("--description", default="")
        assign = actions.add_parser("assign", help="assign annotators (added to those assigned)")
        assign.add_argument("name")
        assign.add_argument("users", nargs="+", metavar="USER")
        status = actions.add_parser("status", help="set a study's status")
        status.add_argument("name")
        status.add_argument("status", choices=Study.Status.values)
        progress = actions.add_parser("progress", help="what is left of a study, and who is behind")
        progress.add_argument("name")
        actions.add_parser("list", help="every study with its status, configurations, annotators and votes")

    def handle(self, *args, action: str, **options):
        try:
            getattr(self, f"handle_{action}")(**options)
        except AppError as error:
            raise CommandError(error.detail) from None

    def _study(self, name: str) -> Study:
        study = Study.objects.filter(name=name).first()
        if study is None:
            known = ", ".join(selectors.study_list().values_list("name", flat=True)) or "none yet"
            raise CommandError(f"no study named {name!r} (known: {known})")
        return study

    def handle_create(
        self,
        *,
        name,
        configurations,
        kind,
        rating_axes,
        figures,
        fields,
        sample,
        seed,
        target_per_pair,
        overlap_rate,
        description,
        from_screening,
        stratify=None,
        **_,
    ):
        try:
            validate_slug(name)
        except ValidationError:
            raise CommandError(f"{name!r}: {STUDY_NAME_RULE}") from None
        settings = {"description": description}
        for key, value in (("seed", seed), ("target_per_pair", target_per_pair), ("overlap_rate", overlap_rate)):
            if value is not None:
                settings[key] = value
        study = services.study_create(
            name=name,
            kind=kind,
            configurations=configurations,
            figures=figures,
            figure_fields=fields,
            figure_sample=sample,
            rating_axes=rating_axes,
            from_screening=from_screening,
            stratify=stratify,
            **settings,
        )
        figures_note = f"{study.figures.count()} figures" if study.figures.exists() else "the whole corpus"
        if from_screening:
            figures_note += f" accepted in {from_screening}"
        if study.kind == StudyKind.SCREENING:
            whole = "" if study.figures.exists() else " (the whole corpus)"
            self.stdout.write(
                f"created screening study {study.name}: {len(selectors.screening_candidates(study))} candidate "
                f"figures{whole}, seed {study.seed}; screeners work on /annotate/screen/"
            )
        elif study.kind == StudyKind.PAIRWISE:
            self.stdout.write(
                f"created study {study.name}: {len(configurations)} configurations, {figures_note}, "
                f"target {study.target_per_pair} per pair, overlap {study.overlap_rate}, seed {study.seed}"
            )
        else:
            artifacts = len(selectors.study_artifact_ids(study=study))
            axes = f", axes {', '.join(study.rating_axes)}" if study.kind == StudyKind.RATING else ""
            self.stdout.write(
                f"created {study.kind} study {study.name}: {len(configurations)} configurations, {figures_note}, "
                f"{artifacts} artifacts{axes}, seed {study.seed}"
            )
        self.stdout.write(f"next: manage.py study assign {study.name} USER...")

    def handle_assign(self, *, name, users, **_):
        study = self._study(name)
        found = {u.get_username(): u for u in get_user_model().objects.filter(username__in=users)}
        missing = [u for u in users if u not in found]
        if missing:
            raise CommandError(f"no such user(s): {', '.join(missing)} (create them with createannotator)")
        not_annotators = [u for u in users if not user_has_role(found[u], ANNOTATOR)]
        if not_annotators:
            raise CommandError(f"not annotators: {', '.join(not_annotators)}")
        services.study_annotators_set(study=study, users=[*study.annotators.all(), *found.values()])
        assigned = study.annotators.count()
        self.stdout.write(f"{study.name}: {assigned} annotator{'' if assigned == 1 else 's'} assigned")

    def handle_status(self, *, name, status, **_):
        study = services.study_status_set(study=self._study(name), status=status)
        self.stdout.write(f"{study.name} is now {study.status}")

    def handle_progress(self, *, name, **_):
        study = self._study(name)
        progress = selectors.study_progress(study=study)
        self.stdout.write(f"{study.name} ({study.kind}, {study.status})")
        if progress["unit"] == "pair":
            self.stdout.write(f"still needed: {progress['needed']} votes to reach {progress['target']} per pair")
        else:
            self.stdout.write(
                f"still needed: {progress['needed']} judgements (each assigned annotator on each of the "
                f"{progress['target']} {progress['noun']})"
            )
        self.stdout.write(f"last 24 hours: {progress['votes_last_day']} votes; {progress['finish_text']}")
        if progress["waiting"]:
            self.stdout.write(f"waiting for their renderings: {progress['waiting']} items")
        if not progress["annotators"]:
            self.stdout.write(f"no annotator assigned: manage.py study assign {study.name} USER...")
        for a in progress["annotators"]:
            behind = "\tbehind" if a["behind"] else ""
            self.stdout.write(
                f"{a['annotator']}\tdone {a['done']}\tleft {a['left']}\tlast 24 hours {a['last_day']}{behind}"
            )

    def handle_list(self, **_):
        studies = selectors.study_list().prefetch_related("configurations", "annotators")
        if not studies:
            self.stdout.write("no study yet")
            return
        self.stdout.write("name\tstatus\tconfigurations\tannotators\tvotes\ttarget_per_pair\tkind\tstill_needed")
        for study in studies:
            progress = selectors.study_progress(study=study)
            if study.kind == StudyKind.PAIRWISE:
                votes, target = selectors.votes_signature(study=study.name)[1], study.target_per_pair
            elif study.kind == StudyKind.SCREENING:
                votes, target = len(selectors.screening_decisions_frame(study=study.name)), "-"
            else:
                votes, target = len(selectors.artifact_judgements(study=study)), "-"
            self.stdout.write(
                f"{study.name}\t{study.status}\t{study.configurations.count()}\t{study.annotators.count()}\t"
                f"{votes}\t{target}\t{study.kind}\t{progress['needed']}"
            )

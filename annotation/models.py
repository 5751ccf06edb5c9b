from django.conf import settings
from django.db import models

from agents.models import Artifact, Configuration
from corpus.models import Figure


class Study(models.Model):
    """A blinded pairwise comparison study over some configurations and figures."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        PAUSED = "paused"
        CLOSED = "closed"

    name = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    # Ordered by Configuration.position (declaration order) wherever they are listed.
    configurations = models.ManyToManyField(Configuration, related_name="studies")
    # Empty means "every figure of the corpus".
    figures = models.ManyToManyField(Figure, related_name="studies", blank=True)
    target_per_pair = models.PositiveIntegerField(default=20)
    overlap_rate = models.FloatField(default=0.05, help_text="share of items shown to a second annotator")
    seed = models.BigIntegerField(default=0)
    include_gate_failed = models.BooleanField(default=True)
    require_reason_decisive = models.BooleanField(default=False)
    min_dwell_ms = models.PositiveIntegerField(default=3000)
    lease_seconds = models.PositiveIntegerField(default=900)
    quota_per_annotator = models.PositiveIntegerField(default=50, help_text="items in one annotator's session (N of 'k of N')")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="studies", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class Item(models.Model):
    """(figure, artifact x, artifact y) of two configurations, x before y in declaration order."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    figure = models.ForeignKey(Figure, on_delete=models.CASCADE, related_name="+")
    config_x = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="+")
    config_y = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="+")
    artifact_x = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="+")
    artifact_y = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="+")
    is_overlap = models.BooleanField(default=False, help_text="served to more than one annotator on purpose")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "figure", "config_x", "config_y"], name="one_item_per_study_figure_pair")]
        indexes = [models.Index(fields=["study", "config_x", "config_y"])]


class Lease(models.Model):
    """An item handed to one annotator, addressed only by an opaque random token."""

    class State(models.TextChoices):
        OPEN = "open"
        SUBMITTED = "submitted"
        EXPIRED = "expired"
        SKIPPED = "skipped"
        RELEASED = "released"

    token = models.CharField(max_length=64, unique=True)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="leases")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="leases")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases")
    left_is_x = models.BooleanField()
    is_overlap = models.BooleanField(default=False)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    skip_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [models.Index(fields=["study", "state"]), models.Index(fields=["annotator", "state"])]


class Comparison(models.Model):
    """One vote. Never edited in place: a revision or an undo is a new record superseding the old one."""

    class Outcome(models.TextChoices):
        A = "a"
        B = "b"
        TIE_SUCCESS = "tie_success"
        TIE_FAILURE = "tie_failure"

    comparison_id = models.CharField(max_length=100, unique=True)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="comparisons")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="comparisons")
    lease = models.ForeignKey(Lease, on_delete=models.PROTECT, null=True, blank=True, related_name="comparisons")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="comparisons")
    annotator_name = models.CharField(max_length=150, help_text="username, or the name given by an imported row")
    # Display order: A was shown on the left.
    artifact_a = models.ForeignKey(Artifact, on_delete=models.PROTECT, related_name="+")
    artifact_b = models.ForeignKey(Artifact, on_delete=models.PROTECT, related_name="+")
    left_config = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="+")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    dwell_ms = models.PositiveIntegerField(null=True)
    decision_ms = models.PositiveIntegerField(null=True)
    counted = models.BooleanField(default=True, help_text="dwell reached the study's minimum")
    withdrawn = models.BooleanField(default=False, help_text="an undo record: the vote it supersedes is withdrawn")
    supersedes = models.OneToOneField("self", on_delete=models.PROTECT, null=True, blank=True, related_name="superseded_by")
    superseded = models.BooleanField(default=False)
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            # A lease yields one original vote; everything after it supersedes.
            models.UniqueConstraint(fields=["lease"], condition=models.Q(supersedes__isnull=True), name="one_original_vote_per_lease"),
        ]
        indexes = [models.Index(fields=["study", "superseded", "withdrawn", "counted"])]

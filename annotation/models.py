from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from corpus.protocol import ADAPTIVE_PAIR_FLOOR, ALLOCATION_COVERAGE, ALLOCATIONS

from . import quality

INT32_MAX = 2**31 - 1  # the range of a PositiveIntegerField on every database
INT64 = 2**63


def _bounded(low: int, high: int = INT32_MAX) -> list:
    return [MinValueValidator(low), MaxValueValidator(high)]


class StudyKind(models.TextChoices):
    PAIRWISE = "pairwise"  # blinded A / B / tie comparisons (REFERENCE 5)
    GATE_REVIEW = "gate_review"  # does this artifact fail the gate? (PPTBench, REFERENCE 8)
    RATING = "rating"  # ordinal 0–5 ratings on named axes (PPTArena, REFERENCE 9)
    SCREENING = "screening"  # accept / reject candidate figures with a reason, as both papers screened their corpora


class Purpose(models.TextChoices):
    """Why an item or vote exists: only regular votes count towards Elo, coverage and agreement."""

    REGULAR = quality.REGULAR
    ATTENTION = quality.ATTENTION, "attention (known answer)"
    REPEAT = quality.REPEAT, "swapped repeat"
    CALIBRATION = quality.CALIBRATION, "calibration (not counted)"


def default_rating_axes() -> list[str]:
    return list(quality.DEFAULT_RATING_AXES)


class Study(models.Model):
    """A blinded pairwise comparison study over some configurations and figures."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        PAUSED = "paused"
        CLOSED = "closed"

    name = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    # Ordered by Configuration.position (declaration order) wherever they are listed.
    configurations = models.ManyToManyField("agents.Configuration", related_name="studies")
    # Empty means "every figure of the corpus".
    figures = models.ManyToManyField("corpus.Figure", related_name="studies", blank=True)
    target_per_pair = models.PositiveIntegerField(
        default=20, validators=_bounded(1, 1_000_000), help_text="comparisons wanted per configuration pair"
    )
    overlap_rate = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="share of items shown to a second annotator",
    )
    seed = models.BigIntegerField(
        default=0, validators=_bounded(-INT64, INT64 - 1), help_text="seeds every draw of the study"
    )
    include_gate_failed = models.BooleanField(default=True, verbose_name="include gate-failed artifacts")
    require_reason_decisive = models.BooleanField(default=False, verbose_name="require a reason for decisive votes")
    min_dwell_ms = models.PositiveIntegerField(
        default=3000,
        validators=_bounded(0),
        verbose_name="minimum dwell (ms)",
        help_text="votes made faster than this are stored but not counted",
    )
    lease_seconds = models.PositiveIntegerField(
        default=900,
        validators=_bounded(30, 7 * 24 * 3600),
        help_text="how long an item stays with an annotator before it returns to the pool",
    )
    quota_per_annotator = models.PositiveIntegerField(
        default=50,
        validators=_bounded(1, 1_000_000),
        verbose_name="items per annotator",
        help_text="items in one annotator's session (N of 'k of N')",
    )
    allocation = models.CharField(
        max_length=10,
        choices=[(a, a) for a in ALLOCATIONS],
        default=ALLOCATION_COVERAGE,
        help_text="coverage: every pair to its target; adaptive: every pair to the floor, then the pairs whose next "
        "vote most reduces ranking uncertainty",
    )
    adaptive_floor = models.PositiveIntegerField(
        default=ADAPTIVE_PAIR_FLOOR,
        validators=_bounded(1, 1_000_000),
        verbose_name="adaptive floor",
        help_text="adaptive allocation: votes every pair gets before any pair is favoured",
    )
    stop_when_flip_below = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        verbose_name="stop when flip probability below",
        help_text="the ranking is settled when every adjacent pair's rank-flip probability is below this",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # What the materialised pool (Item rows, StudyPair / StudyFigure counters) was built from; "" = not built yet.
    pool_signature = models.CharField(max_length=200, blank=True, default="", editable=False)
    # Counts changes to the study's configurations and figures (added, removed: annotation.signals); part of the pool
    # signature.
    links_version = models.PositiveBigIntegerField(default=0, editable=False)
    # When the artifacts' part of the signature was last compared (services.pool.study_pool_recheck).
    pool_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="studies", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Issue 15: the kind of study, and the quality controls of a pairwise one.
    kind = models.CharField(max_length=12, choices=StudyKind.choices, default=StudyKind.PAIRWISE)
    attention_rate = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="share of an annotator's items that are attention items (a known answer)",
    )
    repeat_rate = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="share of an annotator's items that repeat an earlier item of theirs with the sides swapped",
    )
    rating_axes = models.JSONField(
        default=default_rating_axes, blank=True, help_text="rating studies: the axes rated 0–5 (rubric axis names)"
    )

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class Item(models.Model):
    """(figure, artifact x, artifact y) of two configurations, x before y in declaration order."""

    # No index of its own: the unique (study, figure, config_x, config_y) constraint and the (study, ...) indexes lead
    # with it, and every index costs each of a paper-scale pool's 45,000 inserts.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items", db_index=False)
    # The figure and the two configurations are the artifacts' own (the pool is built from them), so their integrity
    # rests on the artifacts' keys: no constraint or index of their own here. Each costs a paper-scale pool's 45,000
    # inserts an index entry and a check at commit: with all six keys checked and indexed, the COPY took 1.4 s and the
    # commit 1.9 s; without these three, 0.7 s and 0.8 s (same machine, same run). Lookups go by the (study, ...)
    # indexes, and deleting a figure or configuration still cascades (Django's on_delete).
    figure = models.ForeignKey(
        "corpus.Figure", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    config_x = models.ForeignKey(
        "agents.Configuration", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    config_y = models.ForeignKey(
        "agents.Configuration", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    artifact_x = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    artifact_y = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    is_overlap = models.BooleanField(default=False, help_text="served to more than one annotator on purpose")
    created_at = models.DateTimeField(auto_now_add=True)
    # The pool: one Item per (pair, figure) with both artifacts, materialised by services.study_pool_sync.
    in_pool = models.BooleanField(
        default=False, help_text="eligible as a fresh item (pair and figure belong to the study)"
    )
    rank = models.CharField(
        max_length=64, blank=True, default="", help_text="seeded tie-breaker among figures of the pair"
    )
    # Counters kept by the services in the same transaction as the lease / vote they count.
    open_count = models.PositiveIntegerField(default=0, help_text="open leases")
    submitted_count = models.PositiveIntegerField(default=0, help_text="submitted leases")
    votes = models.PositiveIntegerField(default=0, help_text="current counted votes")
    # Attention and calibration items sit beside the pool (in_pool False) with a known answer relative to x / y.
    purpose = models.CharField(max_length=12, choices=Purpose.choices, default=Purpose.REGULAR)
    expected_label = models.CharField(
        max_length=12, blank=True, default="", help_text="known answer: x, y, tie_success or tie_failure"
    )
    explanation = models.TextField(blank=True, help_text="calibration: the expert's explanation shown after the vote")
    # The figure's counter row in the study: no column, a join on (study, figure), so that the engine orders a pair's
    # free items by their figure's uses in one hash join (1.1 ms at paper scale) instead of a subquery per item (4.6).
    study_figure = models.ForeignObject(
        "StudyFigure",
        on_delete=models.DO_NOTHING,
        from_fields=["study", "figure"],
        to_fields=["study", "figure"],
        related_name="+",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "figure", "config_x", "config_y", "purpose"], name="one_item_per_study_figure_pair"
            )
        ]
        indexes = [
            models.Index(fields=["study", "config_x", "config_y"]),
            models.Index(
                fields=["study", "config_x", "config_y"],
                condition=models.Q(in_pool=True, open_count=0, submitted_count=0),
                name="annotation_item_free",
            ),
            models.Index(
                fields=["study", "votes", "rank"],
                condition=models.Q(votes__gte=1, open_count=0),
                name="annotation_item_voted_idle",
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} of study {self.study_id}"


class StudyPair(models.Model):
    """Per configuration pair of a study: the counters the assignment engine orders pairs by."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pool_pairs")
    config_x = models.ForeignKey("agents.Configuration", on_delete=models.CASCADE, related_name="+")
    config_y = models.ForeignKey("agents.Configuration", on_delete=models.CASCADE, related_name="+")
    rank = models.CharField(max_length=64, help_text="seeded tie-breaker among pairs")
    votes = models.PositiveIntegerField(default=0, help_text="current counted votes")
    open_fresh = models.PositiveIntegerField(default=0, help_text="open leases that are not overlap leases")
    x_left = models.PositiveIntegerField(default=0, help_text="live leases showing x on the left")
    y_left = models.PositiveIntegerField(default=0, help_text="live leases showing y on the left")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "config_x", "config_y"], name="one_counter_per_study_pair")
        ]

    def __str__(self) -> str:
        return f"pair {self.config_x_id}/{self.config_y_id} of study {self.study_id}"


class StudyFigure(models.Model):
    """Per figure of a study: live leases over all its items (figures are spread evenly)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pool_figures")
    figure = models.ForeignKey("corpus.Figure", on_delete=models.CASCADE, related_name="+")
    uses = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "figure"], name="one_counter_per_study_figure")]

    def __str__(self) -> str:
        return f"figure {self.figure_id} of study {self.study_id}"


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
    # The item's pair, copied: the engine tallies the annotator's sides per pair on every next item, and joining each
    # lease to its item cost 3 us a lease (3.8 ms against 0.7 at the paper's quota of 1,000 items). It rests on the
    # item's keys, as the item's rest on its artifacts': no constraint or index of its own.
    config_x = models.ForeignKey(
        "agents.Configuration", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    config_y = models.ForeignKey(
        "agents.Configuration", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    left_is_x = models.BooleanField()
    is_overlap = models.BooleanField(default=False)
    purpose = models.CharField(max_length=12, choices=Purpose.choices, default=Purpose.REGULAR)
    reopened = models.BooleanField(default=False, help_text="reopened by an undo: its votes form a chain")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    skip_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the item was last handed out (created, or reopened by an undo): a vote's dwell cannot exceed the time since.
    served_at = models.DateTimeField(null=True)
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["study", "state"]),
            models.Index(fields=["annotator", "state"]),
            # The engine's reads of one annotator's leases in a study (their tally, the items they saw): without it
            # PostgreSQL intersects the study's and the annotator's indexes, reading every lease id of the study.
            models.Index(fields=["study", "annotator", "state"], name="lease_study_annotator"),
        ]
        constraints = [
            # An annotator holds at most one open lease per study (two tabs asking at once get the same item).
            models.UniqueConstraint(
                fields=["study", "annotator"], condition=models.Q(state="open"), name="one_open_lease_per_annotator"
            ),
        ]

    def __str__(self) -> str:
        return f"lease {self.pk} ({self.state})"


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
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="comparisons"
    )
    annotator_name = models.CharField(max_length=150, help_text="username, or the name given by an imported row")
    # Display order: A was shown on the left.
    artifact_a = models.ForeignKey("agents.Artifact", on_delete=models.PROTECT, related_name="+")
    artifact_b = models.ForeignKey("agents.Artifact", on_delete=models.PROTECT, related_name="+")
    left_config = models.ForeignKey("agents.Configuration", on_delete=models.PROTECT, related_name="+")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    dwell_ms = models.PositiveIntegerField(null=True)
    decision_ms = models.PositiveIntegerField(null=True)
    counted = models.BooleanField(default=True, help_text="dwell reached the study's minimum")
    withdrawn = models.BooleanField(default=False, help_text="an undo record: the vote it supersedes is withdrawn")
    supersedes = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="superseded_by"
    )
    superseded = models.BooleanField(default=False)
    imported = models.BooleanField(default=False)
    purpose = models.CharField(max_length=12, choices=Purpose.choices, default=Purpose.REGULAR)
    # Set by a coordinator's exclusion of the annotator: kept and flagged, left out of every analysis.
    excluded = models.BooleanField(default=False)
    exclusion_reason = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField()
    # What the annotator saw, fixed when the vote was made (a later re-render or re-audit never changes these).
    render_sha256_a = models.CharField(max_length=64, blank=True, default="")
    render_sha256_b = models.CharField(max_length=64, blank=True, default="")
    audit_sha256_a = models.CharField(max_length=64, blank=True, default="")
    audit_sha256_b = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            # A lease yields one original vote; everything after it supersedes.
            models.UniqueConstraint(
                fields=["lease"], condition=models.Q(supersedes__isnull=True), name="one_original_vote_per_lease"
            ),
        ]
        indexes = [models.Index(fields=["study", "superseded", "withdrawn", "counted"])]

    def __str__(self) -> str:
        return self.comparison_id


class AnnotatorExclusion(models.Model):
    """A coordinator's decision to leave an annotator's votes in a study out of the analysis (votes kept, flagged)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="exclusions")
    annotator_name = models.CharField(max_length=150)
    reason = models.CharField(max_length=300)
    decided_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator_name"], name="one_exclusion_per_study_annotator")
        ]

    def __str__(self) -> str:
        return f"{self.annotator_name} excluded from {self.study_id}"


class Adjudication(models.Model):
    """A coordinator's decision on an overlap item where annotators disagree; the votes themselves are not altered."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adjudications")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    label = models.CharField(max_length=12, help_text="x, y, tie_success or tie_failure (relative to the item)")
    note = models.TextField(blank=True)
    decided_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "item"], name="one_adjudication_per_item")]

    def __str__(self) -> str:
        return f"adjudication of item {self.item_id}"


class ArtifactLease(models.Model):
    """One artifact handed to a reviewer or rater of a gate-review / rating study, addressed by an opaque token."""

    class State(models.TextChoices):
        OPEN = "open"
        SUBMITTED = "submitted"
        SKIPPED = "skipped"

    token = models.CharField(max_length=64, unique=True)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="artifact_leases")
    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="artifact_leases")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    skip_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "artifact", "annotator"], name="one_artifact_lease_per_annotator"),
            models.UniqueConstraint(
                fields=["study", "annotator"], condition=models.Q(state="open"), name="one_open_artifact_lease"
            ),
        ]

    def __str__(self) -> str:
        return f"artifact lease {self.pk} ({self.state})"


class GateReview(models.Model):
    """A human reviewer's decision whether an artifact fails the gate (PPTBench's semantic and rendering gates)."""

    class Gate(models.TextChoices):
        NONE = "", "passes"
        SEMANTIC = "semantic"
        RENDERING = "rendering"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="gate_reviews")
    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    reviewer = models.CharField(max_length=150)
    gate_fail = models.BooleanField()
    gate = models.CharField(max_length=10, choices=Gate.choices, blank=True, default="")
    reason = models.TextField(blank=True)
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "artifact", "reviewer"], name="one_gate_review_per_reviewer")
        ]

    def __str__(self) -> str:
        return f"gate review of {self.artifact_id} by {self.reviewer}"


class Rating(models.Model):
    """An ordinal 0–5 rating of one artifact on one axis, by a human or by a judge run (PPTArena)."""

    class RaterKind(models.TextChoices):
        HUMAN = "human"
        JUDGE = "judge"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="ratings")
    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    rater = models.CharField(max_length=150, help_text="username, or the judge model id")
    rater_kind = models.CharField(max_length=5, choices=RaterKind.choices)
    run = models.PositiveIntegerField(default=1, validators=_bounded(1, 1000))
    axis = models.CharField(max_length=60)
    rating = models.PositiveSmallIntegerField(validators=_bounded(quality.RATING_MIN, quality.RATING_MAX))
    category = models.CharField(
        max_length=100, blank=True, default="", help_text="the item's category: the import's, else the figure's field"
    )
    judge_family = models.CharField(
        max_length=100, blank=True, default="", help_text="judge ratings: the judge's model family (optional)"
    )
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "artifact", "rater", "rater_kind", "run", "axis"], name="one_rating_per_rater_run_axis"
            )
        ]

    def __str__(self) -> str:
        return f"{self.axis} {self.rating} for {self.artifact_id} by {self.rater}"


class StudyArtifact(models.Model):
    """One artifact of a gate-review or rating study, when the study names its artifacts: a stratified sample
    (`sampled`: the study hands out its sampled artifacts only), and/or a rating item's task text from the rating
    import — the instruction and the style target shown above the ratings (task text, never configuration identity)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="study_artifacts")
    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="+")
    sampled = models.BooleanField(default=False, help_text="in the study's stratified sample")
    instruction = models.TextField(blank=True, default="")
    style_target = models.TextField(blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "artifact"], name="one_study_artifact")]

    def __str__(self) -> str:
        return f"artifact {self.artifact_id} of study {self.study_id}"


class CalibrationAnswer(models.Model):
    """A calibration item shown to an annotator (opaque token) and their answer: onboarding only, strictly apart from
    the study's votes (never a Comparison, never counted)."""

    token = models.CharField(max_length=64, unique=True)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="calibration_answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="calibration_answers")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    left_is_x = models.BooleanField()
    outcome = models.CharField(max_length=12, blank=True, default="", help_text="as shown: a, b, tie_…")
    correct = models.BooleanField(null=True)
    skipped = models.BooleanField(default=False, help_text="set aside unanswered; never served again")
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "item", "annotator"], name="one_calibration_answer_per_item")
        ]

    def __str__(self) -> str:
        return f"calibration answer {self.pk}"


class ScreeningDecision(models.Model):
    """A screener's decision on one candidate figure of a screening study: accepted, or rejected with the reason, or set
    aside without a decision (skipped, with why). One per screener and figure. An undo deletes the screener's last
    decision; nothing else removes one, so rejected candidates stay on record for audit."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="screening_decisions")
    figure = models.ForeignKey("corpus.Figure", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="screening_decisions"
    )
    accepted = models.BooleanField(null=True, help_text="empty: set aside (skipped) without a decision")
    reason = models.TextField(blank=True, help_text="why: required to reject or skip, optional to accept")
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "figure", "annotator"], name="one_screening_decision_per_annotator"
            )
        ]

    def __str__(self) -> str:
        return f"screening decision on {self.figure_id} by {self.annotator_id}"


class ImportedBattle(models.Model):
    """A vote between two named systems imported from a battles file (issue 30): a votes-only study's vote, with no
    figure, artifact, item or lease behind it. `cluster` (the file's prompt, question or figure; the battle's own id
    when the file has none) is what the Elo cluster bootstrap resamples in place of the source figure."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="imported_battles")
    battle_id = models.CharField(max_length=100, help_text="the file's id of the battle, or one derived from the row")
    cluster = models.CharField(max_length=200)
    system_a = models.ForeignKey("agents.Configuration", on_delete=models.PROTECT, related_name="+")
    system_b = models.ForeignKey("agents.Configuration", on_delete=models.PROTECT, related_name="+")
    outcome = models.CharField(max_length=12, help_text="a, b, tie_success, tie_failure or tie (kind not stated)")
    annotator_name = models.CharField(max_length=150, blank=True, help_text="who voted, as the file names them")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField()
    source = models.CharField(max_length=300, help_text="FILE:LINE the battle was read from")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "battle_id"], name="one_imported_battle_per_id")]

    def __str__(self) -> str:
        return f"imported battle {self.battle_id} of study {self.study_id}"

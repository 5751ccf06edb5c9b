from django.db import models


class JudgeRun(models.Model):
    """One pass of one judge model over the artifacts: (judge, run) is unique."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        PAUSED = "paused"
        DONE = "done"

    judge = models.CharField(max_length=200, help_text="judge model id")
    family = models.CharField(max_length=100)
    run = models.PositiveSmallIntegerField()
    protocol = models.CharField(max_length=20, blank=True, help_text="responses | chat | imported")
    base_url = models.CharField(max_length=300, blank=True)
    reasoning_effort = models.CharField(max_length=20, blank=True)
    temperature = models.FloatField(null=True)
    rubric_version = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["family", "judge", "run"]
        constraints = [models.UniqueConstraint(fields=["judge", "run"], name="one_judge_run_number")]

    def __str__(self) -> str:
        return f"{self.judge} run {self.run}"


class JudgeRecord(models.Model):
    """A judgement of one artifact in one judge run. A failure keeps the raw reply and is never a zero."""

    class Status(models.TextChoices):
        OK = "ok"
        FAILED = "failed"
        RUNNING = "running"  # claimed by a worker calling the judge API (see services.judge_record_claim)

    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="judge_records")
    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="records")
    status = models.CharField(max_length=10, choices=Status.choices)
    score = models.FloatField(null=True)
    text = models.FloatField(null=True)
    semantic_structure = models.FloatField(null=True)
    layout = models.FloatField(null=True)
    editability = models.FloatField(null=True)
    visual_detail = models.FloatField(null=True)
    major_errors = models.JSONField(default=list)
    minor_errors = models.JSONField(default=list)
    editability_assessment = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    raw_reply = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.JSONField(default=list)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(null=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    rubric_version = models.CharField(max_length=40)
    source = models.CharField(max_length=10, default="judged", help_text="judged here or imported")
    claimed_at = models.DateTimeField(null=True, help_text="when a worker last claimed it to call the judge API")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["artifact", "judge_run"], name="one_record_per_artifact_run")]
        # Every cached analysis of the scores asks for the newest update first (scoring.selectors.scores_state): an
        # index lookup, not a scan of every record (tests/benchmarks/test_paper_scale_bench.py).
        indexes = [models.Index(fields=["updated_at"], name="judge_record_updated")]

    def __str__(self) -> str:
        return f"record of artifact {self.artifact_id} in run {self.judge_run_id}"


class PptbenchScore(models.Model):
    """A row of PPTBench's published scores.csv (its tasks are PPTBench's, not this corpus's)."""

    configuration = models.ForeignKey("agents.Configuration", on_delete=models.CASCADE, related_name="pptbench_scores")
    task_id = models.CharField(max_length=64)
    majority_gate = models.BooleanField()
    gate_count = models.PositiveSmallIntegerField()
    layout_score = models.FloatField()
    text_score = models.FloatField()
    local_graphics_score = models.FloatField()
    total_score = models.FloatField()
    issue_count = models.PositiveIntegerField()
    single_round_issue_count = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["configuration", "task_id"], name="one_pptbench_score_per_task")]

    def __str__(self) -> str:
        return f"{self.task_id} ({self.configuration_id})"

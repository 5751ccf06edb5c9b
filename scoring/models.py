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


class JudgeBatch(models.Model):
    """One Batch API job of a judge run. Each id is stored as soon as the API gives it, so a restarted command polls
    the job it already paid for; its artifacts' records stay claimed until the job's output is ingested."""

    class Status(models.TextChoices):
        PREPARED = "prepared"  # lines written, file perhaps uploaded, no batch created yet
        SUBMITTED = "submitted"
        INGESTED = "ingested"
        FAILED = "failed"  # the API ended it without output (failed, expired, cancelled): its artifacts are released

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batches")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PREPARED)
    api_status = models.CharField(max_length=20, blank=True, help_text="the status the API last reported")
    input_file_id = models.CharField(max_length=200, blank=True)
    batch_id = models.CharField(max_length=200, blank=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    requests = models.JSONField(default=dict, help_text="custom id -> [artifact id, prompt hash]")
    cost_usd = models.FloatField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"batch {self.batch_id or self.pk} of {self.judge_run}"


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
    # A judge command's claim lapses at this time unless its heartbeat extends it (a killed command's claims are taken
    # over within a lease); empty for a judge task's claim, which lapses with its time limit.
    lease_until = models.DateTimeField(null=True)
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
    # Empty for a row imported from PPTBench's scores.csv; the PPTBench judge run that scored it otherwise.
    judge_run = models.ForeignKey(
        "scoring.PptbenchJudgeRun", null=True, blank=True, on_delete=models.CASCADE, related_name="scores"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "task_id"],
                condition=models.Q(judge_run__isnull=True),
                name="one_pptbench_score_per_task",
            ),
            models.UniqueConstraint(
                fields=["judge_run", "configuration", "task_id"],
                condition=models.Q(judge_run__isnull=False),
                name="one_pptbench_judged_score_per_task",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} ({self.configuration_id})"


class PptbenchIssueSummary(models.Model):
    """A row of PPTBench's published issue-summary.csv: one issue type's merged findings over every candidate and task
    (paper Table 7)."""

    dimension = models.CharField(max_length=64)
    category = models.CharField(max_length=64)
    issue_type = models.CharField(max_length=64)
    severity = models.CharField(max_length=16)
    case_count = models.PositiveIntegerField()
    mean_max_ratio = models.FloatField(help_text="mean of the largest affected fraction kept when rounds were merged")
    total_penalty = models.FloatField()
    single_round_rate = models.FloatField(help_text="share of the cases reported in one judge round only")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dimension", "category", "issue_type"], name="one_pptbench_issue_type")
        ]

    def __str__(self) -> str:
        return f"{self.dimension}/{self.category}/{self.issue_type}"


class PptbenchGeneration(models.Model):
    """A row of PPTBench's published generation-metrics.csv: one candidate's artifact outcomes, tokens and cost."""

    configuration = models.OneToOneField(
        "agents.Configuration", on_delete=models.CASCADE, related_name="pptbench_generation"
    )
    task_count = models.PositiveIntegerField()
    valid_artifacts = models.PositiveIntegerField()
    invalid_artifacts = models.PositiveIntegerField()
    failed_tasks = models.PositiveIntegerField()
    total_tokens = models.BigIntegerField()
    average_tokens_per_task = models.FloatField()
    total_cost_usd = models.FloatField()
    average_cost_per_task_usd = models.FloatField()
    usage_status = models.CharField(max_length=40, help_text="complete, or why the totals are not")

    def __str__(self) -> str:
        return f"generation metrics of {self.configuration_id}"


class PptbenchGateRepeat(models.Model):
    """One judge's gate decision on one (task, candidate) in one repeat of the same judge round (paper Table 3)."""

    judge = models.CharField(max_length=200)
    configuration = models.ForeignKey(
        "agents.Configuration", on_delete=models.CASCADE, related_name="pptbench_gate_repeats"
    )
    task_id = models.CharField(max_length=64)
    repeat = models.PositiveSmallIntegerField()
    gate = models.BooleanField(help_text="a semantic or rendering gate fired in this repeat")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "configuration", "task_id", "repeat"], name="one_pptbench_gate_repeat"
            )
        ]

    def __str__(self) -> str:
        return f"{self.judge} {self.task_id} ({self.configuration_id}) repeat {self.repeat}"


class PptbenchProcess(models.Model):
    """Review and revision turns of one candidate's agent on one PPTBench task (paper Table 10's correlations)."""

    configuration = models.ForeignKey("agents.Configuration", on_delete=models.CASCADE, related_name="pptbench_process")
    task_id = models.CharField(max_length=64)
    review_turns = models.FloatField()
    revision_turns = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["configuration", "task_id"], name="one_pptbench_process_row")]

    def __str__(self) -> str:
        return f"{self.task_id} ({self.configuration_id})"


class PptbenchTaskDomain(models.Model):
    """The domain of a PPTBench task (paper Table 10's per-domain results)."""

    task_id = models.CharField(max_length=64, unique=True)
    domain = models.CharField(max_length=100)

    def __str__(self) -> str:
        return f"{self.task_id}: {self.domain}"


class PptbenchJudgeRun(models.Model):
    """One pass of the PPTBench judge (scoring.pptbench_judge): three rounds per artifact. Apart from JudgeRun so that
    the rubric's tables never see it; (judge, run) is unique."""

    judge = models.CharField(max_length=200, help_text="judge model id")
    family = models.CharField(max_length=100)
    run = models.PositiveSmallIntegerField()
    api = models.CharField(max_length=20, help_text="responses | chat")
    base_url = models.CharField(max_length=300, blank=True)
    reasoning_effort = models.CharField(max_length=20, blank=True)
    temperature = models.FloatField(null=True)
    protocol_version = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=JudgeRun.Status.choices, default=JudgeRun.Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["family", "judge", "run"]
        constraints = [models.UniqueConstraint(fields=["judge", "run"], name="one_pptbench_judge_run_number")]

    def __str__(self) -> str:
        return f"PPTBench judge {self.judge} run {self.run}"


class PptbenchJudgeRound(models.Model):
    """One round of the PPTBench judge on one artifact: each stage's outcome with its raw reply, attempts and usage
    (``stages``), the gate that fired, and the findings that passed the taxonomy check (bad ones in finding_errors)."""

    class Status(models.TextChoices):
        OK = "ok"
        FAILED = "failed"

    judge_run = models.ForeignKey(PptbenchJudgeRun, on_delete=models.CASCADE, related_name="rounds")
    artifact = models.ForeignKey("agents.Artifact", on_delete=models.CASCADE, related_name="pptbench_rounds")
    round = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices)
    gate = models.CharField(max_length=10, blank=True, help_text="artifact | semantic | render, or empty: none fired")
    stages = models.JSONField(default=dict, help_text="stage → triggered/reason or findings, raw_reply, error, usage")
    findings = models.JSONField(default=list)
    finding_errors = models.JSONField(default=list)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judge_run", "artifact", "round"], name="one_pptbench_round_per_artifact")
        ]

    def __str__(self) -> str:
        return f"round {self.round} of artifact {self.artifact_id} in {self.judge_run_id}"

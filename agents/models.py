from django.db import models

from . import pptx_audit, render

# Why an artifact fails the gate: the audit's reasons and the renderer's, named where they are decided.
GateReason = models.TextChoices(
    "GateReason", [(r.upper(), r) for r in (*pptx_audit.GATE_REASONS, render.REASON_FAILED, render.REASON_TIMEOUT)]
)
RENDER_REASONS = (GateReason.RENDER_FAILED, GateReason.RENDER_TIMEOUT)


class Configuration(models.Model):
    """An agent configuration: (model, harness, workflow, reasoning effort) and any other attributes it varies on."""

    slug = models.SlugField(max_length=80, unique=True)
    model = models.CharField(max_length=120)
    harness = models.CharField(max_length=120)
    workflow = models.CharField(max_length=60)
    reasoning_effort = models.CharField(max_length=40)
    # Where this effort sits among the levels (agents.configurations.EFFORT_ORDER, or the file's effort_order).
    effort_rank = models.PositiveSmallIntegerField(default=0)
    # Whatever else the configuration varies on (a version, a prompt): names to short texts.
    attributes = models.JSONField(default=dict, blank=True)
    label = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0, help_text="order of declaration")
    # "refig" for the agents of this study's run layout; "pptbench" for configurations that only
    # exist in imported PPTBench score tables (they have no artifacts here).
    suite = models.CharField(max_length=20, default="refig", db_index=True)
    # Provenance (agents.configurations.PROVENANCE_FIELDS): recorded and shown to staff, never part of the design.
    prompt = models.TextField(blank=True)
    prompt_sha256 = models.CharField(max_length=64, blank=True)
    harness_version = models.CharField(max_length=200, blank=True)
    cli_version = models.CharField(max_length=200, blank=True)
    runtime_image = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.slug


class RenderEnvironment(models.Model):
    """What made a rendering (agents/render_provenance.py): one row per distinct renderer, shared by its renderings."""

    key = models.CharField(max_length=64, unique=True, help_text="RendererProvenance.key: a digest of the fields below")
    libreoffice_version = models.CharField(max_length=200, blank=True, help_text="soffice --version; blank: unreadable")
    rasteriser_version = models.CharField(max_length=200, blank=True)
    fonts_sha256 = models.CharField(max_length=64)
    font_families = models.JSONField(default=list)
    font_packages = models.JSONField(default=list)
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.libreoffice_version or 'LibreOffice (version unknown)'}, fonts {self.fonts_sha256[:12]}"


class Artifact(models.Model):
    """One configuration's single attempt at one figure, with its gate, audit and rendering."""

    class LogStatus(models.TextChoices):
        ABSENT = "absent"
        RECOVERABLE = "recoverable"
        UNRECOVERABLE = "unrecoverable"

    configuration = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="artifacts")
    figure = models.ForeignKey("corpus.Figure", on_delete=models.CASCADE, related_name="artifacts")

    # Files, stored content-addressed so no agent-chosen name travels on.
    pptx = models.FileField(upload_to="artifacts/", max_length=300, blank=True)
    pptx_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    pptx_size = models.PositiveBigIntegerField(null=True)
    code = models.FileField(upload_to="artifacts/", max_length=300, blank=True)
    code_language = models.CharField(max_length=16, blank=True)
    run_log = models.FileField(upload_to="artifacts/", max_length=300, blank=True)
    error_log = models.FileField(upload_to="artifacts/", max_length=300, blank=True)

    # Gate: g = 1 when the audit passed and the rendering succeeded. NULL until both are known.
    gate_passed = models.BooleanField(null=True)
    gate_reason = models.CharField(max_length=32, blank=True, db_index=True, choices=GateReason.choices)
    gate_detail = models.TextField(blank=True)

    # Object audit (agents/pptx_audit.py), keyed by (pptx_sha256, audit_version).
    audit_version = models.CharField(max_length=16, blank=True)
    audit_passed = models.BooleanField(null=True)
    slides = models.PositiveIntegerField(null=True)
    text_boxes = models.PositiveIntegerField(null=True)
    shapes = models.PositiveIntegerField(null=True)
    lines = models.PositiveIntegerField(null=True)
    connectors = models.PositiveIntegerField(null=True)
    connectors_attached = models.PositiveIntegerField(null=True)
    groups = models.PositiveIntegerField(null=True)
    pictures = models.PositiveIntegerField(null=True)
    tables = models.PositiveIntegerField(null=True)
    charts = models.PositiveIntegerField(null=True)
    smartart = models.PositiveIntegerField(null=True)
    ole_media = models.PositiveIntegerField(null=True)
    alternate_content = models.PositiveIntegerField(null=True)
    external_links = models.PositiveIntegerField(null=True)
    largest_picture_ratio = models.FloatField(null=True)
    picture_area_ratio = models.FloatField(null=True)
    cap = models.PositiveSmallIntegerField(null=True)
    capped = models.BooleanField(null=True)
    audit_summary = models.JSONField(null=True, help_text="compact object summary shown to judge and annotators")

    # Rendering (agents/render.py), keyed by (pptx_sha256, render_version).
    render_version = models.CharField(max_length=16, blank=True)
    render_ok = models.BooleanField(null=True)
    render_png = models.FileField(upload_to="renders/", max_length=300, blank=True)
    render_thumbnail = models.FileField(upload_to="renders/", max_length=300, blank=True)
    render_sha256 = models.CharField(max_length=64, blank=True)
    render_width = models.PositiveIntegerField(null=True)
    render_height = models.PositiveIntegerField(null=True)
    # NULL: rendered before renderers were recorded, or attached from elsewhere without a record (the demo bundle).
    render_environment = models.ForeignKey(
        RenderEnvironment, null=True, blank=True, on_delete=models.PROTECT, related_name="renderings"
    )
    # A render batch holds its artifacts until this moment and renews the hold while it works (services.
    # artifacts_render_claim); a hold that lapses means the worker died, and agents.render_sweep re-enqueues them.
    render_claimed_until = models.DateTimeField(null=True, db_index=True)

    # Run-log economics (agents/runlog.py).
    log_status = models.CharField(max_length=16, choices=LogStatus.choices, default=LogStatus.ABSENT)
    log_problem = models.CharField(max_length=300, blank=True)
    turns = models.PositiveIntegerField(null=True)
    tool_calls = models.PositiveIntegerField(null=True)
    output_tokens = models.PositiveBigIntegerField(null=True)
    total_tokens = models.PositiveBigIntegerField(null=True)
    duration_seconds = models.FloatField(null=True)
    cost_usd = models.FloatField(null=True)

    imported_at = models.DateTimeField(auto_now_add=True)
    audited_at = models.DateTimeField(null=True)
    rendered_at = models.DateTimeField(null=True)
    # Goes up with every write that may change what an annotator sees or the gate (an audit, a rendering, a deck
    # replacing a missing record), so that an annotation pool built from these artifacts can tell it is stale.
    version = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["configuration__position", "figure__task_id"]
        constraints = [
            models.UniqueConstraint(fields=["configuration", "figure"], name="one_artifact_per_configuration_figure")
        ]

    def __str__(self) -> str:
        return f"{self.configuration.slug}/{self.figure.task_id}"

from django.contrib import admin

from .models import Artifact, Configuration


@admin.register(Configuration)
class ConfigurationAdmin(admin.ModelAdmin):
    list_display = ("slug", "label", "model", "harness", "workflow", "reasoning_effort", "position")


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = (
        "figure",
        "configuration",
        "gate_passed",
        "gate_reason",
        "text_boxes",
        "shapes",
        "connectors",
        "pictures",
        "capped",
    )
    list_filter = ("configuration", "gate_passed", "gate_reason", "capped")
    search_fields = ("figure__task_id",)
    readonly_fields = [f.name for f in Artifact._meta.fields]

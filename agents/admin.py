from django.contrib import admin

from .models import Artifact, Configuration, RenderEnvironment


@admin.register(Configuration)
class ConfigurationAdmin(admin.ModelAdmin):
    list_display = ("slug", "label", "model", "harness", "workflow", "reasoning_effort", "position")


@admin.register(RenderEnvironment)
class RenderEnvironmentAdmin(admin.ModelAdmin):
    """Recorded by the renderers themselves (agents.provenance): read-only here."""

    list_display = ("libreoffice_version", "rasteriser_version", "fonts_sha256", "first_seen")
    readonly_fields = [f.name for f in RenderEnvironment._meta.fields]

    def has_add_permission(self, request):
        return False


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

    # Artifacts come only from `manage.py import_artifacts` (verified files, computed facts); an add form here could only
    # save an empty, read-only row.
    def has_add_permission(self, request):
        return False

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            "subtitle": "Artifacts are added by `manage.py import_artifacts`, not here.",
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=extra_context)

from django.contrib import admin

from .models import Comparison, Item, Lease, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "target_per_pair", "overlap_rate", "seed", "min_dwell_ms", "created_at")
    list_filter = ("status",)
    filter_horizontal = ("configurations", "annotators")
    raw_id_fields = ("figures",)


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "figure", "config_x", "config_y", "is_overlap")
    list_filter = ("study", "is_overlap")
    raw_id_fields = ("figure", "artifact_x", "artifact_y")


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "annotator", "state", "left_is_x", "is_overlap", "created_at", "expires_at")
    list_filter = ("study", "state")
    raw_id_fields = ("item",)


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    """Votes are never edited in place: read-only here."""

    list_display = (
        "comparison_id",
        "study",
        "annotator_name",
        "outcome",
        "counted",
        "withdrawn",
        "superseded",
        "created_at",
    )
    list_filter = ("study", "outcome", "counted", "withdrawn", "superseded", "imported")

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Comparison._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

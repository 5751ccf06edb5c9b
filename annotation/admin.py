from django.contrib import admin

from .models import Comparison, Item, Lease, ScreeningDecision, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "target_per_pair", "overlap_rate", "seed", "min_dwell_ms", "created_at")
    list_filter = ("status",)
    filter_horizontal = ("configurations", "annotators")
    raw_id_fields = ("figures",)


# Items and leases are written by annotation.services alone, which keep the pool's counters with them: an edit here
# would leave the counters counting something else, so only an item's known answer (attention, calibration) is edited.
ITEM_EDITABLE = ("expected_label", "explanation")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "figure", "config_x", "config_y", "is_overlap", "open_count", "votes")
    list_filter = ("study", "is_overlap")
    readonly_fields = [f.name for f in Item._meta.concrete_fields if f.name not in ITEM_EDITABLE]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "annotator", "state", "left_is_x", "is_overlap", "created_at", "expires_at")
    list_filter = ("study", "state")
    readonly_fields = [f.name for f in Lease._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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


@admin.register(ScreeningDecision)
class ScreeningDecisionAdmin(admin.ModelAdmin):
    """Screening decisions stay on record for audit, rejections included: read-only here, like votes."""

    list_display = ("study", "figure", "annotator", "accepted", "reason", "decided_at")
    list_filter = ("study", "accepted")

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ScreeningDecision._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

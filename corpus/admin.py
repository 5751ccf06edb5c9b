from django.contrib import admin

from .models import Figure


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin):
    list_display = ("task_id", "arxiv_id", "field", "image_format", "width", "height", "file_size")
    list_filter = ("field", "image_format", "orientation")
    search_fields = ("task_id", "arxiv_id", "title")
    readonly_fields = [f.name for f in Figure._meta.fields]

    # Figures come only from `manage.py import_corpus` (verified files, computed facts); an add form here could only
    # save an empty, read-only row.
    def has_add_permission(self, request):
        return False

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            "subtitle": "Figures are added by `manage.py import_corpus`, not here.",
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=extra_context)

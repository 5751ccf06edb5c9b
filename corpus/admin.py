from django.contrib import admin

from .models import Figure


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin):
    list_display = ("task_id", "arxiv_id", "field", "image_format", "width", "height", "file_size")
    list_filter = ("field", "image_format", "orientation")
    search_fields = ("task_id", "arxiv_id", "title")
    readonly_fields = [f.name for f in Figure._meta.fields]

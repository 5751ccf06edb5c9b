from django.core.files.storage import default_storage
from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.views.generic import DetailView, ListView, TemplateView, View

from core.permissions import RoleRequiredMixin
from core.tables import TABLES, frame_html, table_frame

from . import selectors, services


class FigureListView(RoleRequiredMixin, ListView):
    template_name = "corpus/figure_list.html"
    paginate_by = 48
    context_object_name = "figures"

    def get_queryset(self):
        return selectors.figure_list(field=self.request.GET.get("field"), search=self.request.GET.get("q"))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["fields"] = selectors.figure_fields()
        context["field"] = self.request.GET.get("field", "")
        context["q"] = self.request.GET.get("q", "")
        return context


class FigureDetailView(RoleRequiredMixin, DetailView):
    template_name = "corpus/figure_detail.html"
    context_object_name = "figure"

    def get_object(self):
        return get_object_or_404(selectors.figure_list(), task_id=self.kwargs["task_id"])


class FigureImageView(RoleRequiredMixin, View):
    def get(self, request, task_id: str):
        figure = get_object_or_404(selectors.figure_list(), task_id=task_id)
        if request.GET.get("size") == "thumb":
            return FileResponse(
                default_storage.open(services.figure_thumbnail_ensure(figure=figure), "rb"), content_type="image/png"
            )
        content_type = "image/png" if figure.image_format == "PNG" else "image/jpeg"
        return FileResponse(figure.image.open("rb"), content_type=content_type)


class CorpusStatisticsView(RoleRequiredMixin, TemplateView):
    template_name = "results/tables.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = "Corpus statistics"
        context["tables"] = [
            {"name": name, "title": TABLES[name].title, "html": frame_html(table_frame(name))}
            for name in ("corpus-stats", "corpus-fields")
        ]
        return context

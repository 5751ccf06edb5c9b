from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.views.generic import TemplateView, View

from core.permissions import RoleRequiredMixin
from core.tables import frame_html, table_frame

from . import selectors


class ConfigurationOverviewView(RoleRequiredMixin, TemplateView):
    template_name = "agents/overview.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audit = selectors.artifact_audit_frame()
        rows = []
        for configuration in selectors.configuration_list():
            group = audit[audit["configuration"] == configuration.slug]
            rows.append(
                {
                    "configuration": configuration,
                    "artifacts": len(group),
                    "passed": int((group["gate_passed"] == True).sum()),  # noqa: E712 - pandas element-wise
                    "failed": int((group["gate_passed"] == False).sum()),  # noqa: E712
                    "pending": int(group["gate_passed"].isna().sum()),
                }
            )
        context["rows"] = rows
        context["reasons"] = selectors.gate_reason_counts()
        context["pairs"] = frame_html(selectors.configuration_pairs_frame())
        context["structural"] = frame_html(table_frame("structural-audit"))
        context["economics"] = frame_html(table_frame("economics"), decimals=2)
        return context


class ArtifactListView(RoleRequiredMixin, TemplateView):
    template_name = "agents/artifact_list.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        configuration = get_object_or_404(selectors.configuration_list(), slug=self.kwargs["slug"])
        reason = self.request.GET.get("gate", "")
        page = Paginator(selectors.artifact_list(configuration=configuration.slug, gate_reason=reason), 50).get_page(
            self.request.GET.get("page")
        )
        context.update(
            configuration=configuration,
            page_obj=page,
            artifacts=page.object_list,
            gate=reason,
            reasons=selectors.gate_reason_counts(),
            renderers=selectors.renderer_summary(configuration=configuration.slug),
            renderer_notes=selectors.renderer_mix_notes(
                artifacts=selectors.artifact_list(configuration=configuration.slug)
            ),
        )
        return context


class ArtifactDetailView(RoleRequiredMixin, TemplateView):
    template_name = "agents/artifact_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["artifact"] = get_object_or_404(selectors.artifact_list(), pk=self.kwargs["pk"])
        return context


class ArtifactRenderView(RoleRequiredMixin, View):
    def get(self, request, pk: int, kind: str):
        artifact = get_object_or_404(selectors.artifact_list(), pk=pk)
        field = {"render": artifact.render_png, "thumb": artifact.render_thumbnail, "pptx": artifact.pptx}.get(kind)
        if not field:
            raise Http404("not rendered")
        content_type = (
            "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            if kind == "pptx"
            else "image/png"
        )
        return FileResponse(
            field.open("rb"),
            content_type=content_type,
            as_attachment=kind == "pptx",
            filename=f"{artifact.configuration.slug}-{artifact.figure.task_id}.pptx" if kind == "pptx" else None,
        )

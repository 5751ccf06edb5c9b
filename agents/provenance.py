"""The provenance write of the agents app, beside services.py (kept within its size): the row recording a renderer
(agents/render_provenance.py), made once per distinct renderer and shared by its renderings."""

from __future__ import annotations

from dataclasses import asdict

from .models import RenderEnvironment
from .render_provenance import RendererProvenance


def render_environment_record(*, provenance: RendererProvenance) -> RenderEnvironment:
    """The stored row for this renderer, made on first sight (two workers racing both get the one row)."""
    values = asdict(provenance)
    environment, _ = RenderEnvironment.objects.get_or_create(
        key=provenance.key,
        defaults={
            "libreoffice_version": values["libreoffice"],
            "rasteriser_version": values["rasteriser"],
            "fonts_sha256": values["fonts_sha256"],
            "font_families": list(values["font_families"]),
            "font_packages": list(values["font_packages"]),
        },
    )
    return environment

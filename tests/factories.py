"""Small real data sets in the database: figures with images, configurations, artifacts with renderings.

No LibreOffice here: renderings are real PNGs drawn with Pillow and stored like the renderer's.
"""

from __future__ import annotations

import hashlib
import io

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image, ImageDraw

from agents.models import Artifact, Configuration
from corpus.models import Figure


def png_bytes(size=(320, 180), colour=(240, 240, 240), text: str = "") -> bytes:
    image = Image.new("RGB", size, colour)
    if text:
        ImageDraw.Draw(image).text((10, 10), text, fill=(0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def store(data: bytes, prefix: str, extension: str = ".png") -> tuple[str, str]:
    sha = hashlib.sha256(data).hexdigest()
    name = f"{prefix}/{sha[:2]}/{sha}{extension}"
    if not default_storage.exists(name):
        default_storage.save(name, ContentFile(data))
    return name, sha


def figure_create(task_id: str, *, field: str = "cs.CV", index: int = 0) -> Figure:
    data = png_bytes(colour=(200, 220 - index % 50, 240), text=f"figure {index}")
    name, sha = store(data, "corpus")
    arxiv = f"2401.{10000 + index:05d}"
    return Figure.objects.create(
        task_id=task_id,
        arxiv_id=arxiv,
        arxiv_base_id=arxiv,
        arxiv_version="v1",
        title=f"Paper {task_id}",
        authors=["A. Author"],
        abs_url=f"https://arxiv.org/abs/{arxiv}",
        pdf_url=f"https://arxiv.org/pdf/{arxiv}v1",
        source_url=f"https://arxiv.org/e-print/{arxiv}v1",
        license="CC BY 4.0",
        license_url="",
        caption="",
        label="",
        source_path="fig.png",
        sha256=sha,
        selection_score=1.0,
        selection_evidence=[],
        field=field,
        manifest_image="fig.png",
        image=name,
        image_format="PNG",
        image_mode="RGB",
        width=320,
        height=180,
        megapixels=0.0576,
        orientation="landscape",
        file_size=len(data),
    )


def configuration_create(
    slug: str, *, model: str, harness: str = "codex", workflow: str = "direct", position: int = 0
) -> Configuration:
    return Configuration.objects.create(
        slug=slug,
        model=model,
        harness=harness,
        workflow=workflow,
        reasoning_effort="high",
        label=slug.upper(),
        position=position,
    )


SUMMARY = {
    "text boxes": 4,
    "shapes": 6,
    "lines": 0,
    "connectors": 3,
    "connectors attached": 2,
    "groups": 1,
    "pictures": 0,
    "tables": 0,
    "charts": 0,
    "largest picture share %": 0.0,
    "picture coverage %": 0.0,
}


def artifact_create(
    configuration: Configuration, figure: Figure, *, gate_passed: bool = True, cap: int = 100, reason: str = ""
) -> Artifact:
    values = dict(
        gate_passed=gate_passed,
        audit_passed=gate_passed,
        gate_reason="" if gate_passed else (reason or "corrupt"),
        cap=cap,
        capped=cap == 50,
    )
    if gate_passed:
        data = png_bytes(
            colour=(250, 250, 250 - configuration.position * 10), text=f"render {configuration.position}/{figure.pk}"
        )
        name, sha = store(data, "renders")
        values.update(
            render_ok=True,
            render_png=name,
            render_thumbnail=name,
            render_sha256=sha,
            render_width=320,
            render_height=180,
            audit_summary=SUMMARY,
            text_boxes=4,
            shapes=6,
            lines=0,
            connectors=3,
            connectors_attached=2,
            groups=1,
            pictures=0,
            tables=0,
            charts=0,
            largest_picture_ratio=0.0,
            picture_area_ratio=0.0,
            slides=1,
        )
    return Artifact.objects.create(configuration=configuration, figure=figure, **values)

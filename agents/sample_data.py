"""`make run` demo, first step: the synthetic demo corpus and its ten configurations' artifacts (core/demo_bundle).

The bundle goes through the real importers and the real audit; its renderings (made by LibreOffice when the bundle
was built, see agents/demo_build.py) are attached instead of rendering again, so `make run` needs no LibreOffice.
"""

from __future__ import annotations

from django.conf import settings

from core import demo_bundle


def load_sample_corpus_and_artifacts() -> str:
    from corpus.services import corpus_import

    from . import selectors
    from .services import artifact_audit, artifact_rendering_attach, artifacts_import

    slugs = demo_bundle.configuration_slugs()
    bundle = demo_bundle.bundle_index()
    index = bundle["artifacts"]
    demo_artifacts = selectors.artifact_list().filter(configuration__slug__in=slugs)
    if demo_artifacts.count() == len(index) and not demo_artifacts.filter(gate_passed__isnull=True).exists():
        return "demo corpus and artifacts: already loaded"
    root = demo_bundle.BUNDLE_DIR
    corpus_import(manifest=root / "manifest.jsonl", images_dir=root / "images")
    artifacts_import(run_root=root / "runs", configurations_file=root / "configurations.toml")
    audited = rendered = 0
    for slug in slugs:
        for artifact in selectors.artifact_list(configuration=slug):
            artifact = artifact_audit(artifact=artifact)
            audited += bool(artifact.audit_passed)
            png_path = demo_bundle.render_path(artifact.pptx_sha256) if artifact.pptx_sha256 else None
            entry = index.get(f"{slug}/{artifact.figure.task_id}", {})
            if artifact.audit_passed and artifact.render_ok is None and png_path and png_path.is_file():
                if entry.get("pptx_sha256") != artifact.pptx_sha256:
                    continue  # not the bundled deck: leave it to audit_artifacts
                png = png_path.read_bytes()
                thumbnail, width, height = demo_bundle.thumbnail_png(png, settings.REFIG["THUMBNAIL_LONG_EDGE"])
                artifact_rendering_attach(artifact=artifact, png=png, thumbnail=thumbnail, width=width, height=height)
                rendered += 1
    return (
        f"demo corpus: {bundle['figures']} synthetic figures, {len(slugs)} configurations, {len(index)} artifacts "
        f"({audited} pass the audit, {rendered} bundled renderings attached)"
    )


# The one table that never holds demo data: PPTBench's own published results.
TABLES_WITHOUT_DEMO = frozenset({"pptbench-leaderboard"})


def demo_table_note(name: str, params: dict) -> str | None:
    """Exports that can include the demo's data say it is synthetic (core.tables notes)."""
    from . import selectors

    if name in TABLES_WITHOUT_DEMO or params.get("study") not in (None, "", demo_bundle.DEMO_STUDY):
        return None
    if not selectors.configurations_by_slugs(slugs=demo_bundle.configuration_slugs()[:1]):
        return None
    return demo_bundle.SYNTHETIC_NOTE

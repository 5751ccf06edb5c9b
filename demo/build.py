"""Build the bundled demo (demo/bundle) with the app's own pipeline: generate, audit, render. Pure: no Django.

`build_demo_bundle(out_dir, renderer=...)` runs demo.generator, audits every deck with agents.pptx_audit and
renders the ones that pass with agents.render (LibreOffice), then writes the renderings and bundle.json beside the
generator's files. The same seed and the same LibreOffice give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agents import pptx_audit, render

from . import bundled
from .generator.configurations import CONFIGURATIONS, DEFAULT_FIGURES, DEFAULT_SEED
from .generator.writer import generate_demo


@dataclass(frozen=True)
class BuiltBundle:
    out_dir: Path
    artifacts: int
    audited_ok: int
    rendered: int
    total_bytes: int


def artifact_hashes(root: Path, task_ids, *, renderings: dict[str, bytes] | None = None) -> dict[str, dict]:
    """Per "slug/task_id": the deck's SHA-256, whether it passes the audit and the audit's SHA-256 ('' if no deck)."""
    out = {}
    for configuration in CONFIGURATIONS:
        for task_id in task_ids:
            deck = root / "runs" / configuration.slug / task_id / "output.pptx"
            entry = {"pptx_sha256": "", "audit_passed": False, "audit_sha256": "", "render_sha256": ""}
            if deck.is_file():
                audit = pptx_audit.audit_pptx(deck)
                entry["pptx_sha256"] = hashlib.sha256(deck.read_bytes()).hexdigest()
                entry["audit_passed"] = bool(audit.gate_passed)
                entry["audit_sha256"] = bundled.audit_sha256(audit.summary())
            out[f"{configuration.slug}/{task_id}"] = entry
    return out


def build_demo_bundle(
    out_dir: Path,
    *,
    renderer: render.LibreOfficeRenderer,
    seed: int = DEFAULT_SEED,
    figures: int = DEFAULT_FIGURES,
) -> BuiltBundle:
    """Regenerate the bundle under out_dir (everything in it is replaced)."""
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="refig-demo-build-") as tmp:
        staging = Path(tmp) / "bundle"
        summary = generate_demo(staging, seed=seed, figures=figures)
        artifacts = artifact_hashes(staging, summary.task_ids)
        passing = [key for key, entry in artifacts.items() if entry["audit_passed"]]
        decks = [staging / "runs" / key / "output.pptx" for key in passing]
        out_dirs = [Path(tmp) / "render" / str(i) for i in range(len(decks))]
        results = renderer.render_many(decks, out_dirs=out_dirs)
        rendered = 0
        for key, result in zip(passing, results):
            if not result.ok:
                artifacts[key]["render_failed"] = f"{result.reason}: {result.detail}"
                continue
            png = bundled.bundle_png(result.png_path.read_bytes())
            target = bundled.render_path(artifacts[key]["pptx_sha256"], staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(png)
            artifacts[key]["render_sha256"] = hashlib.sha256(png).hexdigest()
            rendered += 1
        index = {
            "synthetic": True,
            "note": bundled.SYNTHETIC_NOTE,
            "seed": seed,
            "figures": figures,
            "study": bundled.DEMO_STUDY,
            "render": {
                "long_edge": bundled.RENDER_LONG_EDGE,
                "colours": bundled.RENDER_COLOURS,
                "render_version": render.RENDER_VERSION,
            },
            "files": bundled.file_hashes(staging),
            "artifacts": artifacts,
        }
        (staging / bundled.INDEX_NAME).write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        out_dir.mkdir(parents=True, exist_ok=True)
        for child in out_dir.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        for child in staging.iterdir():
            shutil.move(str(child), out_dir / child.name)
    total = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
    return BuiltBundle(
        out_dir=out_dir,
        artifacts=len(artifacts),
        audited_ok=len(passing),
        rendered=rendered,
        total_bytes=total,
    )

"""A study's public release: one versioned folder (and a zip of it) with the datasheet, provenance, the images a
release may carry, the artifacts' audits and renderings, the judge records with raw replies, the votes, every table
that applies to the study, and SHA256SUMS.

Annotators appear only by their keyed pseudonym (core.pseudonyms). A figure is redistributed only when its recorded
licence is on the allow-list (corpus.licences) or named in `include_licences`; otherwise it is listed in
withheld.jsonl with its provenance, and fetch_withheld.py (written, never run) retrieves it from its recorded URLs.
Renderings are reconstructions of their source figure, so those of withheld figures are withheld too.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from django.core.files.storage import default_storage
from django.utils.text import slugify

from agents import selectors as agent_selectors
from agents.configurations import PROVENANCE_FIELDS
from annotation import selectors as annotation_selectors
from core.errors import AppError
from core.pseudonyms import pseudonymise_frame
from core.tables import TABLES, render_table, table_frame
from corpus import selectors as corpus_selectors
from corpus.licences import Licence, licence_classify
from corpus.manifest import MANIFEST_FIELDS
from scoring import selectors as scoring_selectors

DEFAULT_LICENCE = "CC-BY-4.0"  # the release's own licence for metadata and annotations
SUMS = "SHA256SUMS"
PPTBENCH_TABLES = ("pptbench-leaderboard",)
PPTBENCH_ATTRIBUTION = (
    'PPTBench result tables: Xiaoqiu Wang et al., "PPTBench: Can Coding Agents Reconstruct the Visual World through '
    'Structured, Editable Slides", arXiv:2609.29718 (2026), https://github.com/Einsia/PPTBench, licensed CC BY 4.0 '
    "(https://creativecommons.org/licenses/by/4.0/). Scores as published."
)
STEPS = ("figures", "configurations", "artifacts", "judge records", "votes", "tables", "datasheet", "checksums")


@dataclass
class Release:
    path: Path
    counts: dict[str, int] = field(default_factory=dict)
    withheld_by_licence: dict[str, int] = field(default_factory=dict)
    tables_skipped: dict[str, str] = field(default_factory=dict)
    renderer_notes: list[str] = field(default_factory=list)  # a mix of LibreOffice versions among the renderings


def release_build(
    *,
    study: str,
    out_dir: Path,
    licence: str = DEFAULT_LICENCE,
    include_licences: tuple[str, ...] = (),
    version: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Release:
    """Write a new release of `study` into out_dir/<study>-release-<version or next number>/."""
    resolved = annotation_selectors.study_resolve(study=study)
    release = Release(path=_release_folder(out_dir, resolved.name, version))
    release.path.mkdir(parents=True)
    step = progress or (lambda _name: None)
    try:
        withheld_ids = _figures_write(release, resolved, include_licences)
        step("figures")
        configurations = _configurations_write(release, resolved)
        step("configurations")
        artifact_ids = _artifacts_write(release, resolved, configurations, withheld_ids)
        step("artifacts")
        _judge_records_write(release, artifact_ids)
        step("judge records")
        _votes_write(release, resolved)
        step("votes")
        _tables_write(release, resolved)
        step("tables")
        (release.path / "fetch_withheld.py").write_text(FETCH_SCRIPT, encoding="utf-8")
        (release.path / "README.md").write_text(_datasheet(release, resolved, licence, include_licences), "utf-8")
        step("datasheet")
        _sums_write(release.path)
        step("checksums")
    except BaseException:
        shutil.rmtree(release.path, ignore_errors=True)  # never leave half a release that looks whole
        raise
    return release


def release_zip(release_path: Path) -> Path:
    """<folder>.zip beside the folder (the folder's own files, SHA256SUMS included, under its name)."""
    archive = shutil.make_archive(str(release_path), "zip", root_dir=release_path.parent, base_dir=release_path.name)
    return Path(archive)


def _release_numbers(out_dir: Path, stem: str) -> list[int]:
    pattern = re.compile(rf"^{re.escape(stem)}-release-(\d+)$")
    if not out_dir.is_dir():
        return []
    return [int(m.group(1)) for p in out_dir.iterdir() if p.is_dir() and (m := pattern.match(p.name))]


def _release_folder(out_dir: Path, study: str, version: str | None) -> Path:
    stem = slugify(study) or "study"
    if version:
        path = out_dir / f"{stem}-release-{slugify(version) or 'v'}"
        if path.exists():
            raise AppError(f"{path}: a release of that version exists; give another --version")
        return path
    return out_dir / f"{stem}-release-{max(_release_numbers(out_dir, stem), default=0) + 1}"


def _study_figures(study):
    figures = corpus_selectors.figure_list().order_by("task_id")
    chosen = list(study.figures.values_list("pk", flat=True))
    return figures.filter(pk__in=chosen) if chosen else figures


def _figures_write(release: Release, study, include_licences) -> set[int]:
    images = release.path / "images"
    withheld_ids: set[int] = set()
    shown = withheld = 0
    with (
        open(release.path / "figures.jsonl", "w", encoding="utf-8") as every,
        open(release.path / "withheld.jsonl", "w", encoding="utf-8") as kept_back,
    ):
        for figure in _study_figures(study):
            verdict: Licence = licence_classify(figure.license, figure.license_url, include=include_licences)
            row = {name: getattr(figure, name) for name in MANIFEST_FIELDS if name != "image"}
            row["licence_canonical"] = verdict.name
            row["redistributed"] = verdict.redistributable
            if verdict.redistributable:
                row["image"] = f"images/{figure.task_id}{Path(figure.image.name).suffix}"
                _copy(figure.image.name, release.path / row["image"])
                shown += 1
            else:
                row["image"] = None
                withheld_ids.add(figure.pk)
                release.withheld_by_licence[verdict.name] = release.withheld_by_licence.get(verdict.name, 0) + 1
                kept_back.write(json.dumps(row, ensure_ascii=False) + "\n")
                withheld += 1
            every.write(json.dumps(row, ensure_ascii=False) + "\n")
    if not shown:
        images.mkdir(exist_ok=True)
    release.counts.update(figures=shown + withheld, figures_redistributed=shown, figures_withheld=withheld)
    return withheld_ids


def _configurations_write(release: Release, study) -> list:
    configurations = list(study.configurations.order_by("position", "slug"))
    rows = [
        {
            "slug": c.slug,
            "label": c.label,
            "model": c.model,
            "harness": c.harness,
            "workflow": c.workflow,
            "reasoning_effort": c.reasoning_effort,
            "attributes": c.attributes,
            "suite": c.suite,
            "position": c.position,
            **{name: getattr(c, name) for name in PROVENANCE_FIELDS},
        }
        for c in configurations
    ]
    _json_write(release.path / "configurations.json", {"study": study.name, "configurations": rows})
    release.counts["configurations"] = len(rows)
    return configurations


def _artifacts_write(release: Release, study, configurations, withheld_ids: set[int]) -> list[int]:
    slugs = {c.slug for c in configurations}
    figure_ids = set(_study_figures(study).values_list("pk", flat=True))
    audit = agent_selectors.artifact_audit_frame()
    audit = audit[audit["configuration"].isin(slugs)].set_index(["configuration", "task_id"])
    ids, renderings = [], 0
    with open(release.path / "artifacts.jsonl", "w", encoding="utf-8") as out:
        for artifact in agent_selectors.artifact_list().filter(configuration__slug__in=slugs, figure_id__in=figure_ids):
            key = (artifact.configuration.slug, artifact.figure.task_id)
            row = {"task_id": key[1], "configuration": key[0]}
            if key in audit.index:
                row.update(_plain(audit.loc[key].to_dict()))
            row.update(pptx_sha256=artifact.pptx_sha256, render_sha256=artifact.render_sha256, rendering=None)
            if artifact.render_png and artifact.figure_id not in withheld_ids:
                row["rendering"] = f"renderings/{key[0]}/{key[1]}.png"
                _copy(artifact.render_png.name, release.path / row["rendering"])
                renderings += 1
            row["rendering_withheld"] = bool(artifact.render_png) and artifact.figure_id in withheld_ids
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            ids.append(artifact.pk)
    (release.path / "renderings").mkdir(exist_ok=True)
    released = agent_selectors.artifact_list().filter(pk__in=ids)
    made = released.filter(render_ok=True).count()
    release.counts.update(artifacts=len(ids), renderings=renderings, renderings_made=made)
    _json_write(release.path / "renderers.json", {"renderers": agent_selectors.render_environments(artifact_ids=ids)})
    release.renderer_notes = agent_selectors.renderer_mix_notes(artifacts=released)
    return ids


def _judge_records_write(release: Release, artifact_ids: list[int]) -> None:
    count = 0
    with open(release.path / "judge_records.jsonl", "w", encoding="utf-8") as out:
        for row in scoring_selectors.judge_record_rows(artifact_ids=artifact_ids):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    release.counts["judge_records"] = count


def _votes_write(release: Release, study) -> None:
    battles = pseudonymise_frame(
        annotation_selectors.comparisons_frame(study=study.name)[annotation_selectors.BATTLE_COLUMNS]
    )
    battles.to_csv(release.path / "comparisons.csv", index=False)
    people = set(battles["annotator"].dropna())
    reviewers = list(study.gate_reviews.values_list("reviewer", flat=True)) if study.kind == "gate_review" else []
    if reviewers:
        people |= set(pseudonymise_frame(pd.DataFrame({"reviewer": reviewers}))["reviewer"])
    release.counts.update(votes=len(battles), annotators=len(people))


def _tables_write(release: Release, study) -> None:
    folder = release.path / "tables"
    folder.mkdir()
    names = [n for n in sorted(TABLES) if "study" in TABLES[n].parameters]
    if scoring_selectors.pptbench_frame().shape[0]:
        names += list(PPTBENCH_TABLES)
    written = 0
    for name in names:
        params = {"study": study.name} if "study" in TABLES[name].parameters else {}
        try:
            frame = table_frame(name, **params)
        except AppError as error:  # a table of another study kind, or one the data cannot fill: said in README
            release.tables_skipped[name] = error.detail
            continue
        (folder / f"{name}.csv").write_text(render_table(frame, "csv", name=name), encoding="utf-8")
        written += 1
    release.counts["tables"] = written


def _sums_write(root: Path) -> None:
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != SUMS):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        lines.append(f"{digest.hexdigest()}  {path.relative_to(root).as_posix()}\n")
    (root / SUMS).write_text("".join(lines), encoding="utf-8")


def _copy(name: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(name, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _json_write(path: Path, document) -> None:
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _plain(row: dict) -> dict:
    """Pandas / numpy scalars and missing values as JSON values."""
    out = {}
    for key, value in row.items():
        if hasattr(value, "item"):
            value = value.item()
        try:
            missing = value != value or value is None or str(value) == "<NA>"
        except (TypeError, ValueError):
            missing = False
        out[key] = None if missing else value
    return out


def _datasheet(release: Release, study, licence: str, include_licences) -> str:
    c = release.counts
    withheld = (
        "".join(f"| {name} | {n} |\n" for name, n in sorted(release.withheld_by_licence.items())) or "| – | 0 |\n"
    )
    skipped = "".join(f"  - `{n}`: {why}\n" for n, why in sorted(release.tables_skipped.items())) or "  - none\n"
    sources = []
    for line in (release.path / "figures.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        authors = ", ".join(row.get("authors") or []) or "unknown authors"
        state = "image included" if row["redistributed"] else "withheld"
        sources.append(
            f'- `{row["task_id"]}`: {authors}. "{row["title"]}". arXiv:{row["arxiv_id"]}, {row["abs_url"]} '
            f"— licence {row['licence_canonical']} ({state})\n"
        )
    licences = Counter(json.loads(line)["licence_canonical"] for line in (release.path / "figures.jsonl").open())
    licence_rows = "".join(f"| {name} | {n} |\n" for name, n in sorted(licences.items()))
    pptbench = (
        f"\n## PPTBench data\n\n{PPTBENCH_ATTRIBUTION}\n"
        if (release.path / "tables" / "pptbench-leaderboard.csv").exists()
        else ""
    )
    included = f" Also included on request: {', '.join(include_licences)}." if include_licences else ""
    renderers = json.loads((release.path / "renderers.json").read_text(encoding="utf-8"))["renderers"]
    renderer_rows = (
        "".join(
            f"| {r['libreoffice_version'] or 'unreadable'} | {r['rasteriser_version']} | `{r['fonts_sha256'][:12]}` "
            f"| {r['renderings']} |\n"
            for r in renderers
        )
        or "| – | – | – | 0 |\n"
    )
    unrecorded = c["renderings_made"] - sum(r["renderings"] for r in renderers)
    renderer_warnings = "".join(f"- **{note}**\n" for note in release.renderer_notes)
    return f"""# {study.name} — release `{release.path.name}`

A public release of the {study.kind} study **{study.name}** run with refig-study: source scientific overview figures,
agents' one-slide PPTX reconstructions of them, automated judge records, and human judgements.
{study.description or ""}

## How it was collected

Figures come from arXiv papers with the provenance recorded at import (ORBIT fields, SHA-256 verified). Each
configuration (model, harness, workflow, reasoning effort) produced one PPTX per figure; every PPTX was gated,
audited object by object and rendered. Annotators compared two anonymous renderings of one source figure in a blinded,
keyboard-first screen (A / B / tie: shared success or shared failure) with a short reason; attention checks and
swapped repeats measure their quality. Judge models scored the same artifacts with the rubric (raw replies included).

## Counts

| what | n |
|---|---:|
| figures | {c["figures"]} |
| figures redistributed (images/) | {c["figures_redistributed"]} |
| figures withheld (withheld.jsonl) | {c["figures_withheld"]} |
| configurations | {c["configurations"]} |
| artifacts (artifacts.jsonl) | {c["artifacts"]} |
| renderings (renderings/) | {c["renderings"]} |
| judge records | {c["judge_records"]} |
| votes (comparisons.csv) | {c["votes"]} |
| annotators | {c["annotators"]} |
| tables (tables/) | {c["tables"]} |

## Files

`figures.jsonl` (provenance of every figure and its licence verdict), `images/` (redistributable figures only),
`withheld.jsonl` and `fetch_withheld.py` (run `python fetch_withheld.py` to download the withheld figures' sources from
their recorded URLs yourself), `configurations.json`, `artifacts.jsonl` (gate and object audit, hashes),
`renderings/<configuration>/<task_id>.png`, `renderers.json` (what made the renderings: LibreOffice, the PDF
rasteriser, the fonts), `judge_records.jsonl` (raw replies, prompt hashes), `comparisons.csv`
(battle rows), `tables/*.csv`, `SHA256SUMS` (`sha256sum -c SHA256SUMS`).

## Renderers

Slides were rendered with LibreOffice (PPTX to PDF) and rasterised to PNG; renderings made with different LibreOffice
versions or fonts are not comparable. Renderers of the artifacts' current renderings ({unrecorded} without a record):

| LibreOffice | PDF rasteriser | fonts (SHA-256) | renderings |
|---|---|---|---:|
{renderer_rows}
{renderer_warnings}
## Licences

This release's metadata, annotations, tables and judge records: **{licence}**. Each figure keeps its own licence.
A figure image is redistributed only under CC0, CC BY (any version), CC BY-SA or the Public Domain Mark; NC, ND,
arXiv's non-exclusive distribution licence and unrecognised licences are withheld.{included}

| figure licence | figures |
|---|---:|
{licence_rows}
Withheld:

| licence | figures withheld |
|---|---:|
{withheld}
## How to cite the sources

Cite each source paper whose figure you use (`figures.jsonl` has the full record):

{"".join(sources)}{pptbench}
## Known limitations

- Annotators appear as keyed pseudonyms (`annotator-xxxxxxxx`), stable across this installation's releases; the key
  stays with the installation. Free-text reasons are published as written.
- Renderings of withheld figures are withheld with them (a reconstruction reproduces its source).
- Votes are the counted ones: superseded, withdrawn and excluded annotators' votes are left out.
- Tables not written for this study:
{skipped}"""


FETCH_SCRIPT = '''"""Download the source of every figure this release withholds (see withheld.jsonl) from its recorded URLs.

Usage: python fetch_withheld.py [OUT_DIR]   (default: withheld/). Standard library only; you are responsible for
respecting each source's licence.
"""

import json
import sys
import urllib.request
from pathlib import Path

here = Path(__file__).resolve().parent
out = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "withheld"
for line in (here / "withheld.jsonl").read_text(encoding="utf-8").splitlines():
    figure = json.loads(line)
    for field in ("source_url", "pdf_url"):
        url = figure.get(field)
        if not url:
            continue
        target = out / figure["task_id"] / (field + "_" + url.rstrip("/").rsplit("/", 1)[-1])
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(target, "wb") as dst:
                dst.write(response.read())
            print(figure["task_id"], "->", target)
        except OSError as error:
            print(figure["task_id"], field, url, "failed:", error, file=sys.stderr)
'''

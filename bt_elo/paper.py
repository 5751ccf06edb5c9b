"""A paper's reproduction bundle: every table of its evaluation section the app has (CSV + booktabs LaTeX), every
figure the data supports (PDF), and REPRODUCTION.md saying what each file is, from which inputs, and the command that
remakes it. What a paper contains is declared in its own module (bt_elo.paper_refigbench, bt_elo.paper_pptarena, ...),
gathered in PAPERS below; a table or figure the study's data cannot support is listed with the sentence why, never a
crash. The same figures are drawn at /results/plot/<name>.<png|svg|pdf> (figure_draw).

Django-free at import: tables come through core.tables (the registry), the other inputs through `Inputs`, whose
methods import the selectors they read when called.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core.errors import AppError
from core.tables import TABLES, render_table, table_frame, table_notes

from .paper_items import SEED_NONE, FigureItem, Paper, TableItem  # noqa: F401  (re-exported: a paper's vocabulary)
from .paper_pptarena import PPTARENA
from .paper_pptbench import PPTBENCH, PptbenchFigures
from .paper_refigbench import REFIGBENCH

PAPERS: dict[str, Paper] = {"refigbench": REFIGBENCH, "pptarena": PPTARENA, "pptbench": PPTBENCH}
FIGURE_FORMATS = ("pdf", "png", "svg")  # the bundle writes PDF unless asked for more


class Unsupported(Exception):
    """What the study's data cannot give a table or figure, in a sentence."""


# ---------------------------------------------------------------------------------------------------------- inputs
class Inputs:
    """Where the bundle's frames come from: registered tables, plus the few non-table sources the figures draw."""

    def study_kind(self, study: str | None) -> str | None:
        from annotation.selectors import study_kind

        return study_kind(study=study) if study else None

    def first_judge(self) -> str | None:
        """The judge whose first run was made first: the paper's primary judge (a second family rescoring comes
        later), the default of a figure that draws one judge."""
        from scoring.selectors import judge_run_list

        runs = judge_run_list()
        return min(runs, key=lambda r: (r.created_at, r.pk)).judge if runs else None

    def frame(self, name: str, **params) -> pd.DataFrame:
        if name in TABLES:
            return table_frame(name, **params)
        return getattr(self, "source_" + name.replace("-", "_"))(**params)

    def source_corpus_images(self, **params) -> pd.DataFrame:
        from corpus.selectors import image_frame

        return image_frame()

    def source_gate_reviews(self, *, study=None, **params) -> pd.DataFrame:
        """One row per human gate review with an automated verdict: human_fail, automated_fail."""
        from agents.selectors import artifact_audit_frame, artifact_ids_by_key
        from annotation.selectors import gate_reviews_frame, study_of_kind

        reviews = gate_reviews_frame(study=study_of_kind(study=study, kind="gate_review"))
        audit = artifact_audit_frame()
        ids = artifact_ids_by_key()
        automated = {
            ids[key]: not bool(passed)
            for key, passed in zip(zip(audit["configuration"], audit["task_id"]), audit["gate_passed"])
            if key in ids and pd.notna(passed)
        }
        reviews = reviews[reviews["artifact"].isin(automated)]
        return pd.DataFrame(
            {"human_fail": reviews["gate_fail"].astype(bool), "automated_fail": reviews["artifact"].map(automated)}
        )


class Figures(PptbenchFigures):
    """Draw functions by FigureItem.draw, each taking the loaded input frames in order and the format (pdf, png or
    svg); the figure's bytes out. Matplotlib is imported when a figure is drawn, not with this module."""

    @staticmethod
    def elo(elo, configurations, fmt="pdf"):
        from . import plots

        return plots.elo_plot(elo, configurations, fmt)

    @staticmethod
    def agreement(margin, iaa, fmt="pdf"):
        from . import plots

        baseline = float(iaa["raw_agreement"].iloc[0]) if len(iaa) and "raw_agreement" in iaa else None
        return plots.agreement_plot(margin, baseline, fmt)

    @staticmethod
    def coverage(coverage, fmt="pdf"):
        from . import plots

        return plots.coverage_plot(coverage, fmt)

    @staticmethod
    def judge_runs(runs, fmt="pdf"):
        from . import plots

        return plots.judge_runs_plot(runs, fmt)

    @staticmethod
    def score_distribution(scores, fmt="pdf"):
        from . import plots

        return plots.score_distribution_plot(scores, fmt)

    @staticmethod
    def corpus_fields(fields, fmt="pdf"):
        from . import paper_figures

        return paper_figures.corpus_fields_plot(fields, fmt)

    @staticmethod
    def file_size(images, fmt="pdf"):
        from . import paper_figures

        return paper_figures.file_size_plot(images, fmt)

    @staticmethod
    def area_percentiles(images, fmt="pdf"):
        from . import paper_figures

        return paper_figures.area_percentile_plot(images, fmt)

    @staticmethod
    def workflow_effect(effects, fmt="pdf"):
        from . import paper_figures

        return paper_figures.workflow_effect_plot(effects, fmt)

    @staticmethod
    def rubric_means(means, fmt="pdf"):
        from . import paper_figures_scores

        return paper_figures_scores.rubric_means_plot(means, fmt)

    @staticmethod
    def gate_confusion(reviews, fmt="pdf"):
        from . import paper_figures

        return paper_figures.gate_confusion_plot(reviews, fmt)

    @staticmethod
    def rating_agreement(agreement, consistency, fmt="pdf"):
        from . import paper_figures

        return paper_figures.rating_agreement_plot(agreement, consistency, fmt)

    @staticmethod
    def rating_categories(means, fmt="pdf"):
        from . import paper_figures_ratings

        return paper_figures_ratings.rating_categories_plot(means, fmt)


# ---------------------------------------------------------------------------------------------------------- output
@dataclass
class Entry:
    kind: str  # "table" or "figure"
    name: str
    caption: str
    inputs: dict
    files: list[str] = field(default_factory=list)
    command: str = ""
    reason: str = ""  # set when the data cannot support it
    notes: list[str] = field(default_factory=list)
    presentation: str = ""


@dataclass(frozen=True)
class Bundle:
    paper: str
    study: str | None
    out_dir: Path
    entries: tuple[Entry, ...]

    @property
    def files(self) -> list[str]:
        return ["REPRODUCTION.md", *(f for e in self.entries for f in e.files)]


_LATEX_TEXT = {"−": "-", "–": "-", "—": "-", "→": "to", "·": "/", "≥": ">=", "κ": "kappa", "ρ": "rho", "Δ": "Delta"}
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_"}
_LATEX_SPECIAL |= {"{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_text(text: str) -> str:
    """Plain text for a caption: LaTeX specials escaped, the few non-ASCII symbols the titles use spelled out."""
    for symbol, word in _LATEX_TEXT.items():
        text = text.replace(symbol, word)
    text = "".join(_LATEX_SPECIAL.get(char, char) for char in text)
    return text.encode("ascii", "replace").decode("ascii")


def present(frame: pd.DataFrame, item: TableItem) -> pd.DataFrame:
    """The frame as the paper prints it: its columns, shares in percent with one decimal, cells in plain ASCII."""
    shown = frame[[c for c in item.columns if c in frame]] if item.columns else frame.copy()
    shown = shown.copy()
    shown.attrs = {}  # its notes go above the float, once
    for column in item.percent:
        if column in shown:
            shown[column] = [("--" if pd.isna(v) else f"{100 * float(v):.1f}") for v in shown[column]]
    for column in shown.columns:
        if column not in item.percent and pd.api.types.is_float_dtype(shown[column]):
            decimals = _decimals(shown[column])
            shown[column] = [("--" if pd.isna(v) else f"{v:.{decimals}f}") for v in shown[column]]
    for column in shown.columns:
        if shown[column].dtype == object:
            shown[column] = [
                v.translate(str.maketrans(_LATEX_TEXT)) if isinstance(v, str) else v for v in shown[column]
            ]
    return shown


def _decimals(values: pd.Series, most: int = 3) -> int:
    """The decimals a column needs, at most `most`: a table already rounded to the paper's precision (28.18, 5,723.9)
    prints as the paper does, anything finer at `most` decimals as before."""
    finite = values.dropna()
    if finite.empty:
        return 0
    for decimals in range(most):
        if (finite.round(decimals) - finite).abs().max() < 1e-9:
            return decimals
    return most


def latex_table(frame: pd.DataFrame, item: TableItem, *, notes: list[str], label: str) -> str:
    """A booktabs table float (\\toprule / \\midrule / \\bottomrule) with its caption and label; notes as % lines."""
    tabular = render_table(present(frame, item), "latex", name=item.table, notes=[])
    comments = "".join(f"% {latex_text(' '.join(note.split()))}\n" for note in notes)
    return (
        f"{comments}\\begin{{table}}[htbp]\n\\centering\n\\caption{{{latex_text(item.caption)}}}\n"
        f"\\label{{tab:{label}}}\n\\resizebox{{\\textwidth}}{{!}}{{%\n{tabular}}}\n\\end{{table}}\n"
    )


def _command(name: str, params: dict, fmt: str, out: str) -> str:
    options = "".join(f" --{k.replace('_', '-')} {v}" for k, v in params.items())
    return f"python manage.py export {name} --format {fmt}{options} --out {out}"


def _params_for(name: str, *, study, judge, run) -> dict:
    taken = TABLES[name].parameters if name in TABLES else ("study", "judge", "run")
    given = {"study": study, "judge": judge, "run": run}
    return {k: v for k, v in given.items() if v not in (None, "") and k in taken}


def _kind_check(kinds: tuple[str, ...], study: str | None, study_kind: str | None) -> None:
    if not kinds:
        return
    if not study:
        raise Unsupported(f"applies to a {' or '.join(kinds)} study; name one with --study")
    if study_kind not in kinds:
        raise Unsupported(f"applies to a {' or '.join(kinds)} study; study {study!r} is a {study_kind} study")


def _table_entry(item: TableItem, *, study, judge, study_kind, out_dir: Path, inputs: Inputs) -> Entry:
    params = _params_for(item.table, study=study, judge=judge, run=item.run)
    taken = TABLES[item.table].parameters if item.table in TABLES else ()
    entry = Entry(
        "table",
        item.table,
        item.caption,
        {
            "study": params.get("study", "all (not per study)" if "study" not in taken else "—"),
            "judge": params.get("judge", "every judge" if "judge" in taken else "—"),
            "run": params.get("run", "every run" if "run" in taken else "—"),
            "seed": item.seed,
        },
    )
    entry.command = _command(item.table, params, "latex", f"{item.table}.tex")
    try:
        if item.table not in TABLES:
            raise Unsupported(f"this app has no table {item.table!r}")
        _kind_check(item.kinds, study, study_kind)
        frame = inputs.frame(item.table, **params)
    except (Unsupported, AppError) as error:
        entry.reason = str(error)
        return entry
    entry.notes = [*frame.attrs.get("notes", []), *table_notes(item.table, **params)]
    if frame.empty:
        entry.reason = "no rows for this study's data" + (": " + " ".join(entry.notes) if entry.notes else "")
        return entry
    (out_dir / f"{item.table}.csv").write_text(render_table(frame, "csv", name=item.table), encoding="utf-8")
    (out_dir / f"{item.table}.tex").write_text(
        latex_table(frame, item, notes=entry.notes, label=item.table), encoding="utf-8"
    )
    entry.files = [f"{item.table}.csv", f"{item.table}.tex"]
    shown = []
    if item.columns:
        shown.append(f"the LaTeX prints {', '.join(item.columns)} (the CSV has every column)")
    if item.percent:
        shown.append(f"{', '.join(item.percent)} in percent with one decimal (the export prints fractions)")
    entry.presentation = "; ".join(shown)
    return entry


def _figure_frames(item: FigureItem, *, study, judge, study_kind, inputs: Inputs) -> tuple[list, str | None]:
    """The figure's input frames (one judge's rows where it draws one judge) and the judge chosen by default (None
    when --judge chose, or the figure draws every judge); Unsupported when the data cannot give the figure."""
    _kind_check(item.kinds, study, study_kind)
    params = {"study": study, "judge": judge, "run": item.run}
    frames = [inputs.frame(name, **_params_for(name, **params)) for name in item.inputs]
    chosen = None
    if item.one_judge and not judge and len(frames[0]) and "judge" in frames[0]:
        judges = sorted(frames[0]["judge"].astype(str).unique())
        first = inputs.first_judge()
        chosen = first if first in judges else judges[0]
    if item.one_judge and (judge or chosen) and "judge" in frames[0]:
        frames[0] = frames[0][frames[0]["judge"].astype(str) == (judge or chosen)]
    if frames[0].empty:
        notes = " ".join(frames[0].attrs.get("notes", []))
        raise Unsupported(
            f"its input {item.inputs[0]!r} has no rows for this study's data" + (f": {notes}" if notes else "")
        )
    return frames, chosen


def _figure_entry(
    item: FigureItem, *, paper, study, judge, study_kind, out_dir: Path, inputs: Inputs, formats=("pdf",)
) -> Entry:
    entry = Entry("figure", item.name, item.caption, {})
    params = {"study": study, "judge": judge, "run": item.run}
    entry.inputs = {
        "study": study
        if study and (item.kinds or any("study" in _params_for(n, **params) for n in item.inputs))
        else "all (not per study)",
        "judge": judge or "every judge",
        "run": item.run or "every run",
        "seed": item.seed,
    }
    entry.command = f"python manage.py paper {paper}" + (f" --study {study}" if study else "")
    entry.command += (f" --judge {judge}" if judge else "") + f" --only {item.name}"
    entry.command += "".join(f" --figure-format {fmt}" for fmt in formats if tuple(formats) != ("pdf",))
    entry.command += " --out DIR"
    try:
        frames, chosen = _figure_frames(item, study=study, judge=judge, study_kind=study_kind, inputs=inputs)
        bodies = {fmt: getattr(Figures, item.draw)(*frames, fmt=fmt) for fmt in formats}
    except (Unsupported, AppError) as error:
        entry.reason = str(error)
        return entry
    if chosen:
        entry.inputs["judge"] = chosen + " (the judge that ran first; choose another with --judge)"
    elif item.one_judge and judge:
        entry.inputs["judge"] = judge
    for fmt, body in bodies.items():
        (out_dir / f"{item.name}.{fmt}").write_bytes(body)
        entry.files.append(f"{item.name}.{fmt}")
    return entry


def figure_item(name: str) -> FigureItem | None:
    """The figure of that name (the first paper declaring it), or None."""
    return next((f for paper in PAPERS.values() for f in paper.figures if f.name == name), None)


def figure_draw(name: str, *, fmt: str, study: str | None = None, judge: str | None = None, inputs=None) -> bytes:
    """A paper's figure as the bundle draws it, in `fmt` (FIGURE_FORMATS), for /results/plot/. LookupError when no
    paper has a figure of that name or the format is not one of them; Unsupported (a sentence) when the data cannot
    give it."""
    item = figure_item(name)
    if item is None or fmt not in FIGURE_FORMATS:
        raise LookupError(f"no paper figure {name!r} in {fmt!r}")
    inputs = inputs or Inputs()
    study_kind = inputs.study_kind(study)
    frames, _ = _figure_frames(item, study=study, judge=judge, study_kind=study_kind, inputs=inputs)
    return getattr(Figures, item.draw)(*frames, fmt=fmt)


def reproduction_markdown(bundle: Bundle) -> str:
    paper = PAPERS[bundle.paper]
    lines = [
        f"# {paper.title}: reproduction bundle",
        "",
        f"Study: `{bundle.study or '(none named)'}`. Remake the whole bundle with "
        f"`python manage.py paper {bundle.paper}"
        + (f" --study {bundle.study}" if bundle.study else "")
        + " --out DIR`.",
        "Tables are CSV (every column, full precision, as `export --format csv` writes them) and LaTeX (booktabs; "
        "needs `\\usepackage{booktabs}` and `\\usepackage{graphicx}`); figures are PDF (PNG and SVG with "
        "`--figure-format`, or from `/results/plot/<figure>.<png|svg|pdf>?study=...`).",
        "",
    ]
    for kind, heading in (("table", "Tables"), ("figure", "Figures")):
        lines += [f"## {heading}", ""]
        for entry in (e for e in bundle.entries if e.kind == kind):
            lines.append(f"### {entry.name}")
            lines.append("")
            lines.append(f"- Caption: {entry.caption}")
            if entry.files:
                lines.append(f"- Files: {', '.join(f'`{f}`' for f in entry.files)}")
            else:
                lines.append(f"- Not in this bundle: {entry.reason}")
            i = entry.inputs
            lines.append(f"- Inputs: study {i['study']}; judge {i['judge']}; run {i['run']}; seed {i['seed']}")
            lines.append(f"- Command: `{entry.command}`")
            if entry.presentation:
                lines.append(f"- Presentation: {entry.presentation}")
            for note in entry.notes:
                lines.append(f"- Note: {' '.join(note.split())}")
            lines.append("")
    return "\n".join(lines)


def build_bundle(
    paper: str,
    *,
    study: str | None,
    out_dir: Path,
    judge: str | None = None,
    only: tuple[str, ...] = (),
    inputs: Inputs | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    figure_formats: tuple[str, ...] = ("pdf",),
) -> Bundle:
    """Write the paper's bundle into out_dir (created if missing) and return what it holds. `only` limits it to the
    named tables / figures (REPRODUCTION.md then lists just those); each figure is written in every format of
    `figure_formats` (FIGURE_FORMATS)."""
    if paper not in PAPERS:
        raise Unsupported(f"unknown paper {paper!r}; one of {', '.join(PAPERS)}")
    if not figure_formats or set(figure_formats) - set(FIGURE_FORMATS):
        raise Unsupported(f"figure formats are {', '.join(FIGURE_FORMATS)}, not {', '.join(figure_formats) or 'none'}")
    inputs = inputs or Inputs()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = PAPERS[paper]
    study_kind = inputs.study_kind(study)
    if study and study_kind is None:
        from core.errors import NotFound

        raise NotFound(f"no study named {study!r}")
    items = [
        i for i in (*spec.tables, *spec.figures) if not only or getattr(i, "table", getattr(i, "name", "")) in only
    ]
    entries = []
    for index, item in enumerate(items, start=1):
        common = {"study": study, "judge": judge, "study_kind": study_kind, "out_dir": out_dir, "inputs": inputs}
        if isinstance(item, TableItem):
            entry = _table_entry(item, **common)
        else:
            entry = _figure_entry(item, paper=paper, formats=tuple(dict.fromkeys(figure_formats)), **common)
        entries.append(entry)
        if progress:
            progress(index, len(items), f"{entry.kind} {entry.name}: " + (", ".join(entry.files) or "not supported"))
    bundle = Bundle(paper=paper, study=study, out_dir=out_dir, entries=tuple(entries))
    (out_dir / "REPRODUCTION.md").write_text(reproduction_markdown(bundle), encoding="utf-8")
    return bundle


def bundle_zip(bundle: Bundle) -> bytes:
    """The bundle's files as one .zip, in a folder named after paper and study."""
    folder = f"{bundle.paper}-{bundle.study}" if bundle.study else bundle.paper
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in bundle.files:
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (bundle.out_dir / name).read_bytes())
    return buffer.getvalue()

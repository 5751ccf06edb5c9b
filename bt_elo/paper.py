"""A paper's reproduction bundle: every table of its evaluation section the app has (CSV + booktabs LaTeX), every
figure the data supports (PDF), and REPRODUCTION.md saying what each file is, from which inputs, and the command that
remakes it. What a paper contains is the declarative PAPERS table below; a table or figure the study's data cannot
support is listed with the sentence why, never a crash.

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

# Protocol seeds, as the tables state them (REFERENCE 4, 6, 7); REPRODUCTION.md names the one each item rests on.
SEED_SCORES = "seed 7, 5,000 bootstrap resamples over tasks"
SEED_ELO = "seed 20260720, 2,000 cluster-bootstrap refits over source figures"
SEED_AGREEMENT = "seed 20260721, 5,000 cluster-bootstrap resamples over source figures"
SEED_NONE = "none (no resampling)"

ANY_KIND: tuple[str, ...] = ()
PAIRWISE = ("pairwise",)
RATING = ("rating",)
GATE_REVIEW = ("gate_review",)


@dataclass(frozen=True)
class TableItem:
    table: str  # a name in core.tables.TABLES
    caption: str
    run: str | None = None  # the judge run the paper fixes (None: every run, as the table gives them)
    seed: str = SEED_NONE
    kinds: tuple[str, ...] = ANY_KIND  # the study kinds it applies to (empty: any, or not about a study)
    percent: tuple[str, ...] = ()  # shares printed in percent with one decimal (REFERENCE 10)
    columns: tuple[str, ...] = ()  # the columns the LaTeX prints (empty: all); the CSV keeps every column


@dataclass(frozen=True)
class FigureItem:
    name: str  # the PDF's stem
    caption: str
    draw: str  # a function of Figures, called with the loaded inputs
    inputs: tuple[str, ...]  # tables (core.tables) or Inputs sources it draws
    run: str | None = None
    seed: str = SEED_NONE
    kinds: tuple[str, ...] = ANY_KIND
    one_judge: bool = False  # draws one judge's rows (the --judge given, else the first judge in its input)


@dataclass(frozen=True)
class Paper:
    title: str
    tables: tuple[TableItem, ...]
    figures: tuple[FigureItem, ...] = ()


STRUCTURAL_SHARES = (
    "share_any_picture",
    "share_largest_ge_85",
    "share_no_connector",
    "share_s_lt_15",
    "share_final_lt_50",
)

PAPERS: dict[str, Paper] = {
    "refigbench": Paper(
        title="ReFigBench",
        tables=(
            TableItem("corpus-stats", "Corpus image statistics (Tables 1, 9)"),
            TableItem("corpus-fields", "Tasks and file sizes per source field (Tables 1, 10)", percent=("share",)),
            TableItem(
                "config-scores",
                "Final score per configuration: mean with 95% CI, quartiles, shares, rubric means (Tables 2, 12)",
                seed=SEED_SCORES,
                percent=("share_ge_80", "share_lt_50"),
            ),
            TableItem("paired-effects", "Paired workflow effect, specialized - direct (Table 13)", seed=SEED_SCORES),
            TableItem("harness-effects", "Harness effect within each workflow", seed=SEED_SCORES),
            TableItem("domain-scores", "Scores per source field (Table 14)"),
            TableItem("effort-sweep", "Effort sweeps with the paired change from the effort below", seed=SEED_SCORES),
            TableItem(
                "structural-audit",
                "Structural audit per configuration, judge run 1 (Tables 3, 15)",
                run="1",
                percent=STRUCTURAL_SHARES,
            ),
            TableItem(
                "weight-sensitivity", "Rubric-weight sensitivity, judge run 1 (Table 21)", run="1", seed=SEED_SCORES
            ),
            TableItem(
                "weight-sensitivity-effects",
                "Paired effects under each weight vector, judge run 1 (Table 21)",
                run="1",
                seed=SEED_SCORES,
            ),
            TableItem("economics", "Run-log effort and cost per configuration (Tables 22, 23)"),
            TableItem(
                "workflow-economics",
                "Workflow economics per model and harness, direct to specialized (Table 4)",
                seed=SEED_SCORES,
            ),
            TableItem(
                "elo",
                "Bradley-Terry Elo with 95% cluster-bootstrap CIs (Table 16)",
                seed=SEED_ELO,
                kinds=PAIRWISE,
                columns=("configuration", "elo", "ci_low", "ci_high", "wins", "losses", "ties", "n"),
            ),
            TableItem(
                "agreement-margin",
                "Judge-human direction agreement by |margin| (Tables 6, 17, 19)",
                seed=SEED_AGREEMENT,
                kinds=PAIRWISE,
            ),
            TableItem("agreement-3class", "Three-class agreement and Cohen's kappa (Appendix K)", kinds=PAIRWISE),
            TableItem(
                "agreement-matchup",
                "Agreement on within- vs across-pair comparisons",
                seed=SEED_AGREEMENT,
                kinds=PAIRWISE,
            ),
            TableItem("iaa", "Human-human agreement on overlap items", kinds=PAIRWISE),
            TableItem("judge-runs", "Judge repeatability across runs (Table 18)"),
            TableItem("judge-families", "Configuration means under each judge family (Table 20)"),
        ),
        figures=(
            FigureItem(
                "elo",
                "Human preference Elo by configuration with 95% cluster-bootstrap CIs (Fig. 5)",
                draw="elo",
                inputs=("elo", "configurations"),
                seed=SEED_ELO,
                kinds=PAIRWISE,
            ),
            FigureItem(
                "corpus-fields",
                "Corpus: tasks per source field with their share",
                draw="corpus_fields",
                inputs=("corpus-fields",),
            ),
            FigureItem(
                "corpus-file-size",
                "Corpus: image file size by source field, median (line) and mean (diamond) marked",
                draw="file_size",
                inputs=("corpus-images",),
            ),
            FigureItem(
                "workflow-effect",
                "Paired workflow effect (specialized - direct) overall and by rubric component, judge run 1",
                draw="workflow_effect",
                inputs=("paired-effects",),
                run="1",
                seed=SEED_SCORES,
                one_judge=True,
            ),
            FigureItem(
                "agreement-margin",
                "Judge-human direction agreement by |margin|, every judge and run, human-human baseline dashed",
                draw="agreement",
                inputs=("agreement-margin", "iaa"),
                seed=SEED_AGREEMENT,
                kinds=PAIRWISE,
            ),
            FigureItem(
                "coverage",
                "Counted comparisons per configuration pair",
                draw="coverage",
                inputs=("coverage",),
                kinds=PAIRWISE,
            ),
            FigureItem(
                "judge-runs",
                "Configuration means per judge run with ICC(2,1)",
                draw="judge_runs",
                inputs=("judge-runs",),
            ),
        ),
    ),
    "pptarena": Paper(
        title="PPTArena",
        tables=(
            TableItem(
                "rating-agreement",
                "Human-judge correlation of 0-5 ratings per axis (Table 8)",
                kinds=RATING,
            ),
            TableItem(
                "rating-consistency",
                "Judge consistency over repeated runs: majority agreement and SD (% of the scale)",
                kinds=RATING,
                percent=("majority_agreement",),
                columns=("axis", "judge", "n", "runs", "majority_agreement", "sd_pct"),
            ),
            TableItem(
                "rating-table8",
                "Human-judge correlation, judge majority agreement and SD (%) per axis (Table 8)",
                kinds=RATING,
                percent=("majority_agreement",),
            ),
            TableItem(
                "rating-system-means",
                "Mean 0-5 rating per system, human and judge, overall and per category",
                kinds=RATING,
            ),
            TableItem(
                "rating-cross-judge",
                "Cross-judge ranking check: Kendall tau between judge families' system orders",
                kinds=RATING,
            ),
            TableItem(
                "gate-review-agreement",
                "Human gate review: pairwise agreement and Cohen's kappa, Fleiss' kappa",
                kinds=GATE_REVIEW,
            ),
            TableItem(
                "gate-review-vs-automated",
                "Human gate review against the automated gate per reviewer",
                kinds=GATE_REVIEW,
            ),
        ),
        figures=(
            FigureItem(
                "rating-agreement",
                "Ratings: human-judge correlation and judge majority agreement per axis",
                draw="rating_agreement",
                inputs=("rating-agreement", "rating-consistency"),
                kinds=RATING,
            ),
            FigureItem(
                "gate-confusion",
                "Human gate review against the automated gate: confusion matrix over every review",
                draw="gate_confusion",
                inputs=("gate-reviews",),
                kinds=GATE_REVIEW,
            ),
        ),
    ),
}


class Unsupported(Exception):
    """What the study's data cannot give a table or figure, in a sentence."""


# ---------------------------------------------------------------------------------------------------------- inputs
class Inputs:
    """Where the bundle's frames come from: registered tables, plus the few non-table sources the figures draw."""

    def study_kind(self, study: str | None) -> str | None:
        from annotation.selectors import study_kind

        return study_kind(study=study) if study else None

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


class Figures:
    """Draw functions by FigureItem.draw, each taking the loaded input frames in order; PDF bytes out."""

    @staticmethod
    def elo(elo, configurations):
        from . import plots

        return plots.elo_plot(elo, configurations, "pdf")

    @staticmethod
    def agreement(margin, iaa):
        from . import plots

        baseline = float(iaa["raw_agreement"].iloc[0]) if len(iaa) and "raw_agreement" in iaa else None
        return plots.agreement_plot(margin, baseline, "pdf")

    @staticmethod
    def coverage(coverage):
        from . import plots

        return plots.coverage_plot(coverage, "pdf")

    @staticmethod
    def judge_runs(runs):
        from . import plots

        return plots.judge_runs_plot(runs, "pdf")

    @staticmethod
    def corpus_fields(fields):
        from . import paper_figures

        return paper_figures.corpus_fields_plot(fields)

    @staticmethod
    def file_size(images):
        from . import paper_figures

        return paper_figures.file_size_plot(images)

    @staticmethod
    def workflow_effect(effects):
        from . import paper_figures

        return paper_figures.workflow_effect_plot(effects)

    @staticmethod
    def gate_confusion(reviews):
        from . import paper_figures

        return paper_figures.gate_confusion_plot(reviews)

    @staticmethod
    def rating_agreement(agreement, consistency):
        from . import paper_figures

        return paper_figures.rating_agreement_plot(agreement, consistency)


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
        if shown[column].dtype == object:
            shown[column] = [
                v.translate(str.maketrans(_LATEX_TEXT)) if isinstance(v, str) else v for v in shown[column]
            ]
    return shown


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


def _figure_entry(item: FigureItem, *, paper, study, judge, study_kind, out_dir: Path, inputs: Inputs) -> Entry:
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
    entry.command += (f" --judge {judge}" if judge else "") + f" --only {item.name} --out DIR"
    try:
        _kind_check(item.kinds, study, study_kind)
        frames = [inputs.frame(name, **_params_for(name, **params)) for name in item.inputs]
        if item.one_judge and len(frames[0]) and "judge" in frames[0]:
            chosen = judge or sorted(frames[0]["judge"].astype(str).unique())[0]
            frames[0] = frames[0][frames[0]["judge"].astype(str) == chosen]
            entry.inputs["judge"] = chosen + ("" if judge else " (the first judge; choose another with --judge)")
        if frames[0].empty:
            notes = " ".join(frames[0].attrs.get("notes", []))
            raise Unsupported(
                f"its input {item.inputs[0]!r} has no rows for this study's data" + (f": {notes}" if notes else "")
            )
        body = getattr(Figures, item.draw)(*frames)
    except (Unsupported, AppError) as error:
        entry.reason = str(error)
        return entry
    (out_dir / f"{item.name}.pdf").write_bytes(body)
    entry.files = [f"{item.name}.pdf"]
    return entry


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
        "needs `\\usepackage{booktabs}` and `\\usepackage{graphicx}`); figures are PDF.",
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
) -> Bundle:
    """Write the paper's bundle into out_dir (created if missing) and return what it holds. `only` limits it to the
    named tables / figures (REPRODUCTION.md then lists just those)."""
    if paper not in PAPERS:
        raise Unsupported(f"unknown paper {paper!r}; one of {', '.join(PAPERS)}")
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
            entry = _figure_entry(item, paper=paper, **common)
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

"""The vocabulary a paper's declaration is written in (bt_elo.paper_refigbench, bt_elo.paper_pptarena, ...): its
tables and figures as frozen dataclasses, the protocol seeds REPRODUCTION.md names, and the study kinds an item
applies to. Pure: no Django."""

from __future__ import annotations

from dataclasses import dataclass

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
    name: str  # the file's stem, and its name at /results/plot/<name>.<png|svg|pdf>
    caption: str
    draw: str  # a method of bt_elo.paper.Figures, called with the loaded inputs and the format
    inputs: tuple[str, ...]  # tables (core.tables) or Inputs sources it draws
    run: str | None = None
    seed: str = SEED_NONE
    kinds: tuple[str, ...] = ANY_KIND
    one_judge: bool = False  # draws one judge's rows (the --judge given, else the judge that ran first)


@dataclass(frozen=True)
class Paper:
    title: str
    tables: tuple[TableItem, ...]
    figures: tuple[FigureItem, ...] = ()

"""The single registry of exportable tables.

Each app declares its tables in `<app>/tables.py` (`TABLES`: name, selector path, title, parameters; `NOTES`: note
providers); `collect_tables()` gathers them once apps are ready. `manage.py export`, `/api/tables/<name>/`, the
results pages, the paper bundles and releases all read from here.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

import numpy as np
import pandas as pd
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string, module_has_submodule

from .errors import Invalid, NotFound
from .pseudonyms import pseudonymise_frame

FORMATS: tuple[str, ...] = ("csv", "json", "latex")


@dataclass(frozen=True)
class Table:
    name: str
    selector_path: str  # "app.module.function": imported when the table is first computed, never at app loading
    title: str
    parameters: tuple[str, ...] = ()  # which of study / judge / run the selector accepts

    def frame(self, **params) -> pd.DataFrame:
        return import_string(self.selector_path)(**params)


TABLES: dict[str, Table] = {}
# Notes that travel with an export (e.g. "synthetic demo data"): provider(name, params) -> a note or None.
NOTE_PROVIDERS: list[Callable[[str, dict], str | None]] = []


class TableError(NotFound):
    """An unknown table name."""


def collect_tables() -> None:
    """Every installed app's `tables` module: its TABLES into the registry, its NOTES (provider paths) among the note
    providers. Called from CoreConfig.ready(); a name declared twice is a programming error."""
    for app in apps.get_app_configs():
        if app.name == __package__ or not module_has_submodule(app.module, "tables"):
            continue  # this module is core's own: the registry, not a declaration
        module = import_module(f"{app.name}.tables")
        for table in getattr(module, "TABLES", ()):
            if table.name in TABLES and TABLES[table.name] != table:
                raise ImproperlyConfigured(f"table {table.name!r} is declared twice ({app.name}.tables)")
            TABLES[table.name] = table
        for path in getattr(module, "NOTES", ()):
            provider = import_string(path)
            if provider not in NOTE_PROVIDERS:
                NOTE_PROVIDERS.append(provider)


def _table(name: str) -> Table:
    table = TABLES.get(name)
    if table is None:
        raise TableError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}")
    return table


def table_frame(name: str, **params) -> pd.DataFrame:
    """The table's frame. Lenient: parameters the table does not take are dropped, so the pages can pass the same
    study / judge / run to every table; where user input enters (API, export command), table_parameters_check first."""
    table = _table(name)
    accepted = {k: v for k, v in params.items() if v not in (None, "") and k in table.parameters}
    return table.frame(**accepted)


def table_parameters_check(name: str, given: dict) -> dict:
    """The parameters a user gave for table `name` (empty ones dropped), refused with a sentence when the table does not
    take one, or when `run` is neither a judge run number nor "mean". Unknown tables raise TableError."""
    table = _table(name)
    given = {k: v for k, v in given.items() if v not in (None, "")}
    refused = sorted(set(given) - set(table.parameters))
    if refused:
        takes = f"it takes {', '.join(table.parameters)}" if table.parameters else "it takes no parameters"
        raise Invalid(f"table {name!r} does not take {', '.join(refused)}; {takes}")
    run = str(given.get("run", "mean"))
    if run != "mean" and not (run.isdigit() and int(run) >= 1):
        raise Invalid(f"run must be a judge run number (1, 2, ...) or 'mean', not {run!r}")
    return given


def table_notes(name: str, **params) -> list[str]:
    """What an export of this table should say about its data (JSON: "notes"; LaTeX: % comments; CSV: nothing)."""
    return [note for provider in NOTE_PROVIDERS if (note := provider(name, params))]


def _json_ready(frame: pd.DataFrame) -> list[dict]:
    cleaned = frame.astype(object).where(pd.notna(frame), None)
    records = cleaned.to_dict(orient="records")
    for record in records:
        for key, value in record.items():
            if isinstance(value, np.generic):
                record[key] = value.item()
            if isinstance(record[key], float) and not np.isfinite(record[key]):
                record[key] = None
    return records


def render_table(frame: pd.DataFrame, fmt: str, *, name: str = "", notes: tuple[str, ...] | list[str] = ()) -> str:
    # What the table includes and excludes, and why: notes the selectors set, then those registered for the table.
    notes = [*frame.attrs.get("notes", []), *(notes or [])]
    # Everything rendered here leaves the app (API, `manage.py export`, releases): annotators by pseudonym only.
    frame = pseudonymise_frame(frame)
    if fmt == "csv":  # kept clean: any CSV reader must read it as is
        return frame.to_csv(index=False)
    if fmt == "json":
        document = {"table": name, "columns": list(frame.columns), "rows": _json_ready(frame)}
        if notes:
            document["notes"] = notes
        return json.dumps(document, indent=1)
    if fmt == "latex":
        buffer = io.StringIO()
        for note in notes:
            buffer.write(f"% {' '.join(note.split())}\n")
        frame.to_latex(buffer, index=False, float_format="%.3f", na_rep="--", escape=True)
        return buffer.getvalue()
    raise TableError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def frame_html(frame: pd.DataFrame, *, decimals: int = 3) -> str:
    """A table for the pages: floats rounded, missing values as an en dash."""
    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        # Counts that became floats (joins, missing rows) print as integers: 3, not 3.000.
        if pd.api.types.is_float_dtype(values) and values.notna().any():
            finite = values.dropna()
            if np.isfinite(finite).all() and (finite == finite.round()).all():
                shown[column] = [("–" if pd.isna(v) else str(int(v))) for v in values]
    html = shown.to_html(
        index=False, classes="data", float_format=lambda v: f"{v:.{decimals}f}", na_rep="–", escape=True
    )
    # pandas right-aligns the header with a style attribute; refig.css does it (the pages allow no inline style).
    return html.replace(' style="text-align: right;"', "")

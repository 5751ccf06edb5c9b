"""The table registry is declarative: every app's `tables.py` lists its tables, gathered once when apps are ready."""

import importlib
import importlib.machinery
import sys
import types

import pytest
from django.core.exceptions import ImproperlyConfigured

from core import tables
from core.tables import TABLES, Table


def test_every_declared_table_is_registered_with_an_importable_selector():
    from django.utils.module_loading import import_string

    declared = [
        t
        for app in ("corpus", "agents", "scoring", "annotation", "bt_elo")
        for t in importlib.import_module(f"{app}.tables").TABLES
    ]
    assert len({t.name for t in declared}) == len(declared) == len(TABLES)
    for table in declared:
        assert TABLES[table.name] is table
        assert callable(import_string(table.selector_path)), table.name


def test_a_name_declared_twice_is_refused(monkeypatch):
    clash = types.ModuleType("corpus.tables")
    clash.__spec__ = importlib.machinery.ModuleSpec("corpus.tables", None)
    clash.TABLES = (Table("elo", "corpus.selectors.corpus_stats", title="another elo"),)
    monkeypatch.setitem(sys.modules, "corpus.tables", clash)
    monkeypatch.setattr(tables, "TABLES", dict(TABLES))
    with pytest.raises(ImproperlyConfigured, match="'elo' is declared twice"):
        tables.collect_tables()

"""Reads about the synthetic demo: whether it is loaded, and the note its tables carry (issue 13)."""

from __future__ import annotations

from agents import selectors as agent_selectors

from . import bundled

# The one table that never holds demo data: PPTBench's own published results.
TABLES_WITHOUT_DEMO = frozenset({"pptbench-leaderboard"})


def demo_loaded() -> bool:
    """Whether the demo's configurations are in the database (its first configuration stands for all)."""
    return bool(agent_selectors.configurations_by_slugs(slugs=bundled.configuration_slugs()[:1]))


def demo_table_note(name: str, params: dict) -> str | None:
    """Exports that can include the demo's data say it is synthetic (a core.tables note provider)."""
    if name in TABLES_WITHOUT_DEMO or params.get("study") not in (None, "", bundled.DEMO_STUDY):
        return None
    if not demo_loaded():
        return None
    return bundled.SYNTHETIC_NOTE

"""Corpus tables (declared here, gathered by core.tables.collect_tables)."""

from core.tables import Table

TABLES = (
    Table("corpus-stats", "corpus.selectors.corpus_stats", title="Corpus image statistics (Tables 1, 9)"),
    Table("corpus-fields", "corpus.selectors.corpus_fields", title="Tasks and file sizes per field (Tables 1, 10)"),
)

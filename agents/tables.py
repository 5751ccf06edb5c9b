"""Configuration, artifact and run-log tables (declared here, gathered by core.tables.collect_tables)."""

from core.tables import Table

TABLES = (
    Table("configurations", "agents.selectors.configurations_table", title="Agent configurations"),
    Table(
        "configuration-pairs",
        "agents.selectors.configuration_pairs_frame",
        title="Configuration pairs (within / across)",
    ),
    Table("artifact-audit", "agents.selectors.artifact_audit_frame", title="Gate and object audit per artifact"),
    Table(
        "economics",
        "agents.selectors.economics_frame",
        title="Run-log economics (Tables 22–23): effort over recovered logs; cost recorded, or priced from tokens "
        "(price_input / price_output, USD per million tokens) as an upper bound",
        parameters=("price_input", "price_output"),
    ),
)

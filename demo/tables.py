"""The demo's note on every table computed from it ("synthetic demo data"), declared for core.tables."""

NOTES = ("demo.selectors.demo_table_note",)

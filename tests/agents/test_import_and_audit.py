"""import_artifacts + audit_artifacts end to end: real PPTX files, real LibreOffice, stored facts."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from agents.models import Artifact
from core.services import user_create_with_role
from core.tables import table_frame
from tests.agents.decks import multi_slide_deck, one_slide_deck
from tests.factories import figure_create

pytestmark = pytest.mark.django_db

CONFIGURATIONS = """
[[configurations]]
slug = "m1-direct"
model = "m1"
harness = "codex"
workflow = "direct"
reasoning_effort = "high"
label = "M1 direct"

[[configurations]]
slug = "m1-specialized"
model = "m1"
harness = "codex"
workflow = "specialized"
reasoning_effort = "high"
label = "M1 specialized"
"""


@pytest.fixture
def run_root(tmp_path):
    for index in range(3):
        figure_create(f"t{index}", index=index)
    root = tmp_path / "runs"
    one_slide_deck(root / "m1-direct" / "t0" / "output.pptx", boxes=3)
    (root / "m1-direct" / "t0" / "output.py").write_text("from pptx import Presentation\n")
    multi_slide_deck(root / "m1-direct" / "t1" / "output.pptx", slides=3)
    (root / "m1-direct" / "t2").mkdir(parents=True)  # a task folder without output.pptx: fails the gate as missing
    (root / "m1-specialized" / "t0").mkdir(parents=True)
    (root / "m1-specialized" / "t0" / "output.pptx").write_bytes(b"this is not a zip file")
    one_slide_deck(root / "m1-specialized" / "t1" / "output.pptx", boxes=2)
    events = [
        {"type": "assistant", "message": {"content": [{"type": "tool_use"}], "usage": {"output_tokens": 5}}},
        {
            "type": "result",
            "num_turns": 3,
            "duration_ms": 2000,
            "total_cost_usd": 0.25,
            "usage": {"input_tokens": 100, "output_tokens": 50},
        },
    ]
    (root / "m1-specialized" / "t1" / "output.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    (root / "m1-specialized" / "t2").mkdir()
    (root / "m1-specialized" / "t2" / "error.log").write_text("agent crashed")
    (root / "m1-specialized" / "t2" / "output.jsonl").write_text('{"type": "result", "num_tu')
    (root / "m1-specialized" / "t999").mkdir()
    (root / "ghost").mkdir()
    (tmp_path / "configurations.toml").write_text(CONFIGURATIONS)
    return root


def import_run(run_root):
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(
            "import_artifacts",
            run_root=run_root,
            configurations=run_root.parent / "configurations.toml",
            no_progress=True,
            stdout=out,
            stderr=err,
        )
        failed = None
    except CommandError as error:
        failed = error
    return out.getvalue(), err.getvalue(), failed


def test_import_gives_every_configuration_figure_a_row_and_reports_unknowns(run_root):
    out, err, failed = import_run(run_root)
    assert failed is None  # the unknown task folder is reported; the good rows are stored, so the exit is 0
    assert "t999" in err and "is not in the corpus" in err and "ghost" in err
    assert (
        "7 artifacts: 6 imported, 0 already stored, 1 rejected, 1 warnings" in out
        and "2 artifacts without output.pptx" in out
    )
    assert Artifact.objects.count() == 6
    missing = Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t2")
    assert (missing.gate_passed, missing.gate_reason) == (False, "missing")
    code = Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t0")
    assert code.code_language == "python" and "output" not in code.pptx.name
    economics = table_frame("economics").set_index("configuration")
    assert (
        economics.loc["m1-specialized", "logs_present"] == 2
        and economics.loc["m1-specialized", "logs_recoverable"] == 1
    )
    assert (
        economics.loc["m1-specialized", "mean_turns"] == 3 and economics.loc["m1-specialized", "mean_cost_usd"] == 0.25
    )
    assert economics.loc["m1-specialized", "mean_total_tokens"] == 150
    assert economics.loc["m1-direct", "logs_present"] == 0

    before = list(Artifact.objects.order_by("pk").values())
    out, _, _ = import_run(run_root)
    assert "artifacts: 0 imported, 6 already stored" in out
    assert list(Artifact.objects.order_by("pk").values()) == before


@pytest.mark.libreoffice
def test_audit_and_render_fill_the_gate_and_the_audit_table(run_root):
    import_run(run_root)
    call_command("audit_artifacts", no_progress=True, stdout=io.StringIO())
    audit = table_frame("artifact-audit").set_index(["configuration", "task_id"])
    assert list(table_frame("artifact-audit").columns[:17]) == [
        "task_id",
        "configuration",
        "gate_passed",
        "gate_reason",
        "slides",
        "text_boxes",
        "shapes",
        "lines",
        "connectors",
        "connectors_attached",
        "groups",
        "pictures",
        "tables",
        "charts",
        "largest_picture_ratio",
        "picture_area_ratio",
        "capped",
    ]
    good = audit.loc[("m1-direct", "t0")]
    # The deck: a title text box, three rounded rectangles carrying text, two attached connectors.
    assert bool(good["gate_passed"]) and good["gate_reason"] == ""
    assert (
        good["slides"],
        good["text_boxes"],
        good["shapes"],
        good["connectors"],
        good["connectors_attached"],
        good["pictures"],
    ) == (1, 4, 3, 2, 2, 0)
    assert not good["capped"]
    assert audit.loc[("m1-direct", "t1"), "gate_reason"] == "multiple_slides"
    assert audit.loc[("m1-specialized", "t0"), "gate_reason"] == "not_a_zip"
    assert audit.loc[("m1-direct", "t2"), "gate_reason"] == "missing"
    assert bool(audit.loc[("m1-specialized", "t1"), "gate_passed"])
    rendered = Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t0")
    assert (
        rendered.render_ok
        and rendered.render_width == 1600
        and rendered.render_png.name.endswith(f"{rendered.render_sha256}.png")
    )

    stamp = rendered.rendered_at
    call_command("audit_artifacts", no_progress=True, stdout=io.StringIO())
    rendered.refresh_from_db()
    assert rendered.rendered_at == stamp  # idempotent: nothing re-rendered

    user_create_with_role(username="coord", password="pw-long-enough-1", role="coordinator")
    client = Client()
    client.login(username="coord", password="pw-long-enough-1")
    page = client.get("/artifacts/m1-direct/?gate=multiple_slides")
    assert (
        page.status_code == 200
        and b"multiple_slides" in page.content
        and b">t1<" in page.content
        and b">t0<" not in page.content
    )
    assert client.get(f"/artifacts/item/{rendered.pk}/render")["Content-Type"] == "image/png"
    api = client.get("/api/artifacts/?configuration=m1-specialized&gate_reason=not_a_zip").json()
    assert api["count"] == 1 and api["results"][0]["task_id"] == "t0"
    assert b"Structural audit" in client.get("/artifacts/").content

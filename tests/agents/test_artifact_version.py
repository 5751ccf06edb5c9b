"""An artifact's version goes up with every write of agents.services that may change what an annotator sees or the
gate (an audit, a rendering, a deck replacing a missing record), and with nothing else: the annotation pool's
fingerprint reads it (agents.selectors.artifact_state_expression)."""

import json

import pytest

from agents import render_holds, services
from agents.models import Artifact
from tests.agents.decks import one_slide_deck
from tests.factories import figure_create, png_bytes

pytestmark = pytest.mark.django_db


def _imported(tmp_path, tasks: str = "t0\n"):
    (tmp_path / "configurations.json").write_text(
        json.dumps(
            {
                "configurations": [
                    {
                        "slug": "alpha-direct",
                        "model": "alpha",
                        "harness": "codex",
                        "workflow": "direct",
                        "reasoning_effort": "high",
                        "label": "Alpha",
                    }
                ]
            }
        )
    )
    (tmp_path / "tasks.txt").write_text(tasks)
    return services.artifacts_import(
        run_root=tmp_path / "runs",
        configurations_file=tmp_path / "configurations.json",
        tasks_file=tmp_path / "tasks.txt",
    )


def _version(pk: int) -> int:
    return Artifact.objects.values_list("version", flat=True).get(pk=pk)


def test_audit_and_rendering_each_add_one_and_a_render_hold_adds_none(tmp_path):
    figure_create("t0")
    one_slide_deck(tmp_path / "runs" / "alpha-direct" / "t0" / "output.pptx")
    _imported(tmp_path)
    artifact = Artifact.objects.get()
    assert artifact.version == 0

    [audited] = services.artifacts_audit(artifacts=[artifact])
    assert audited.audit_passed and audited.gate_passed is None
    assert audited.version == _version(artifact.pk) == 1
    services.artifacts_audit(artifacts=[Artifact.objects.get()], force=True)
    assert _version(artifact.pk) == 2

    with render_holds.artifacts_render_claim(artifact_ids=[artifact.pk]) as held:
        assert held == [artifact.pk]
    assert _version(artifact.pk) == 2

    image = png_bytes(text="rendered")
    rendered = services.artifact_rendering_attach(
        artifact=Artifact.objects.get(), png=image, thumbnail=image, width=320, height=180
    )
    assert rendered.gate_passed is True
    assert rendered.version == _version(artifact.pk) == 3


def test_a_deck_replacing_a_missing_record_adds_one_and_never_resets_it(tmp_path):
    figure_create("t0")
    (tmp_path / "runs" / "alpha-direct").mkdir(parents=True)
    _imported(tmp_path)  # listed, no folder: a missing record
    missing = Artifact.objects.get()
    assert (missing.gate_reason, missing.version) == ("missing", 0)
    Artifact.objects.filter(pk=missing.pk).update(version=4)  # as if audited and rendered before

    one_slide_deck(tmp_path / "runs" / "alpha-direct" / "t0" / "output.pptx")
    report = _imported(tmp_path)
    assert not report.rejected
    replaced = Artifact.objects.get()
    assert replaced.pk == missing.pk and replaced.gate_passed is None and replaced.pptx_sha256
    assert replaced.version == 5

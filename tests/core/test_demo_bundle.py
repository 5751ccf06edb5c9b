"""The bundled demo (demo/bundle) is what the generator and the app's pipeline produce, and `make run`'s loader
turns it into a populated `demo` study: every table the issue names is non-empty, the Elo order is the stated one."""

import hashlib
import io
import json
import shutil

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings
from PIL import Image

from agents import render
from demo import bundled as demo_bundle
from demo.build import artifact_hashes
from demo.generator.writer import generate_demo

INDEX = demo_bundle.bundle_index()


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo-regenerated")
    return out, generate_demo(out, seed=INDEX["seed"], figures=INDEX["figures"])


def test_bundle_files_are_what_the_generator_writes(regenerated):
    out, _ = regenerated
    assert demo_bundle.file_hashes(out) == INDEX["files"]
    # and the files in the repository are the ones the index names (nothing edited by hand or by a formatter)
    assert demo_bundle.file_hashes(demo_bundle.BUNDLE_DIR) == INDEX["files"]


def test_pptx_and_audit_hashes_match_a_fresh_audit(regenerated):
    out, summary = regenerated
    fresh = artifact_hashes(out, summary.task_ids)
    for key, entry in INDEX["artifacts"].items():
        for name in ("pptx_sha256", "audit_passed", "audit_sha256"):
            assert fresh[key][name] == entry[name], (key, name)
    # the gate failures the generator injected are the ones the audit finds (missing decks have no hash)
    failed = {key for key, entry in INDEX["artifacts"].items() if not entry["audit_passed"]}
    injected = {
        f"{slug}/{task}" for kind in ("missing", "corrupt", "multi_slide") for slug, task in summary.gate_failures[kind]
    }
    assert failed == injected


def test_every_passing_deck_has_its_bundled_rendering():
    for entry in INDEX["artifacts"].values():
        if entry["audit_passed"]:
            png = demo_bundle.render_path(entry["pptx_sha256"]).read_bytes()
            assert hashlib.sha256(png).hexdigest() == entry["render_sha256"]
            with Image.open(io.BytesIO(png)) as image:
                assert max(image.size) == demo_bundle.RENDER_LONG_EDGE


def test_bundle_stays_small():
    total = sum(p.stat().st_size for p in demo_bundle.BUNDLE_DIR.rglob("*") if p.is_file())
    print(f"demo bundle: {total / 1e6:.2f} MB")
    assert total < 8_000_000


@pytest.mark.libreoffice
def test_renderings_match_libreoffice_now():
    """A few decks rendered again by LibreOffice here look like the bundled renderings (same size, near-equal pixels:
    font hinting may differ between LibreOffice builds, so bytes are not compared)."""
    if not shutil.which("soffice"):
        pytest.skip("needs LibreOffice (soffice)")
    keys = sorted(k for k, e in INDEX["artifacts"].items() if e["audit_passed"])[::40]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp, render.LibreOfficeRenderer(long_edge=demo_bundle.RENDER_LONG_EDGE) as r:
        decks = [demo_bundle.BUNDLE_DIR / "runs" / key / "output.pptx" for key in keys]
        results = r.render_many(decks, out_dirs=[Path(tmp) / str(i) for i in range(len(decks))])
        for key, result in zip(keys, results):
            assert result.ok, key
            fresh = Image.open(io.BytesIO(demo_bundle.bundle_png(result.png_path.read_bytes()))).convert("L")
            bundled = Image.open(demo_bundle.render_path(INDEX["artifacts"][key]["pptx_sha256"])).convert("L")
            assert fresh.size == bundled.size
            difference = np.abs(np.asarray(fresh, dtype=float) - np.asarray(bundled, dtype=float)).mean()
            assert difference < 3.0, (key, difference)


# --- loading the demo (make run) ----------------------------------------------------------------------------

STRENGTHS = dict(demo_bundle.stated_strengths())


@pytest.fixture(scope="module")
def loaded_once(django_db_setup, django_db_blocker, tmp_path_factory):
    """`make run`'s load, once for this module's tests (each rolls back its own changes); flushed afterwards."""
    root = tmp_path_factory.mktemp("demo-load")
    with (
        override_settings(MEDIA_ROOT=root / "media"),
        pytest.MonkeyPatch.context() as patch,
        django_db_blocker.unblock(),
    ):
        patch.setenv("REFIG_PPTBENCH_SCORES", str(root / "absent.csv"))
        out = io.StringIO()
        call_command("load_sample_data", stdout=out)
        yield root, out.getvalue()
        call_command("flush", interactive=False, stdout=io.StringIO())


@pytest.fixture
def loaded(loaded_once, db, settings, monkeypatch):
    root, output = loaded_once
    settings.MEDIA_ROOT = root / "media"
    monkeypatch.setenv("REFIG_PPTBENCH_SCORES", str(root / "absent.csv"))
    return output


def _export(name: str) -> dict:
    import contextlib

    from core.tables import TABLES

    out = io.StringIO()
    study = ["--study", "demo"] if "study" in TABLES[name].parameters else []  # a table refuses what it does not take
    with contextlib.redirect_stdout(out):
        call_command("export", name, *study, "--format", "json")
    return json.loads(out.getvalue())


def test_make_run_loads_a_populated_demo(loaded):
    from agents.models import Artifact
    from annotation.models import Comparison, Study

    assert "demo corpus: 30 synthetic figures, 10 configurations, 300 artifacts" in loaded
    passing = sum(e["audit_passed"] for e in INDEX["artifacts"].values())
    assert Artifact.objects.filter(gate_passed=True).count() == passing
    assert Artifact.objects.filter(gate_passed=True, render_sha256="").count() == 0
    study = Study.objects.get(name="demo")
    assert "synthetic" in study.description
    assert list(study.annotators.values_list("username", flat=True)) == ["annotator"]
    votes = sum(1 for _ in (demo_bundle.BUNDLE_DIR / "battles.csv").open()) - 1
    assert Comparison.objects.filter(study=study).count() == votes
    assert "annotator, coordinator, researcher, admin" in loaded

    coverage = _export("coverage")
    assert len(coverage["rows"]) == 45 and all(r["n"] > 0 for r in coverage["rows"])
    assert all(r["target"] > r["n"] for r in coverage["rows"])  # items left to vote on
    assert coverage["notes"] == [
        "nothing excluded",
        demo_bundle.SYNTHETIC_NOTE,
    ]  # the human table says what it left out

    elo = _export("elo")
    fitted = [r["configuration"] for r in sorted(elo["rows"], key=lambda r: -r["elo"])]
    assert len(fitted) == 10 and fitted == [slug for slug, _ in demo_bundle.stated_strengths()]

    families = {r["judge"] for r in _export("config-scores")["rows"]}
    assert len(families) == 2
    assert _export("agreement-margin")["rows"] and _export("iaa")["rows"]


def test_the_annotator_has_items_to_vote_on(loaded):
    from django.contrib.auth import get_user_model

    from annotation.models import Study
    from annotation.services import item_next

    served = item_next(
        study=Study.objects.get(name="demo"), annotator=get_user_model().objects.get(username="annotator")
    )
    assert served is not None


def test_api_tables_say_synthetic(loaded, client):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="researcher"))
    body = client.get("/api/tables/iaa/", {"study": "demo", "format": "json"}).json()
    assert body["rows"] and demo_bundle.SYNTHETIC_NOTE in body["notes"]
    csv_text = client.get("/api/tables/coverage/", {"study": "demo", "format": "csv"}).content.decode()
    assert csv_text.splitlines()[0].startswith("config_x,config_y,n,target") and len(csv_text.splitlines()) == 46
    latex = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(latex):
        call_command("export", "iaa", "--study", "demo", "--format", "latex")
    assert latex.getvalue().startswith("% synthetic demo data")


def test_loading_twice_changes_nothing(loaded):
    from agents.models import Artifact
    from annotation.models import Comparison

    before = (Artifact.objects.count(), Comparison.objects.count())
    again = io.StringIO()
    call_command("load_sample_data", stdout=again)
    assert "demo corpus and artifacts: already loaded" in again.getvalue()
    assert "demo study 'demo': already created" in again.getvalue()
    assert (Artifact.objects.count(), Comparison.objects.count()) == before

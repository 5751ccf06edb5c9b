"""Provenance recorded as it happens (issue 30): each rendering records its renderer (LibreOffice's own version string,
the PDF rasteriser's, the fonts), configurations their prompt, harness and CLI versions and runtime image; the staff
pages, tables, exports and releases show them, annotators never see them, and tables warn when renderings of different
LibreOffice versions are mixed. Judge records travel with their raw replies and prompt hashes."""

import hashlib
import io
import json
import shutil
import subprocess

import pytest
from django.core.management import call_command
from django.test import Client

from agents import selectors, services
from agents.configurations import PROVENANCE_FIELDS, ConfigurationFileError, parse_configurations, provenance_merge
from agents.models import Artifact, Configuration, RenderEnvironment
from agents.provenance import render_environment_record
from agents.render_provenance import renderer_provenance
from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from bt_elo.release import release_build
from core.services import user_create_with_role
from core.tables import table_frame
from scoring import exchange as scoring_exchange
from scoring import services as scoring_services
from scoring.models import JudgeRecord
from scoring.rubric import load_rubric, validate_reply
from tests.agents.decks import one_slide_deck
from tests.annotation.data import PASSWORD, annotator, build_corpus, next_lease, submit_vote
from tests.data.paths import PPTX_REAL, needs_shared
from tests.factories import figure_create

PROMPT = "Rebuild the figure as one editable slide.\n  Keep every label.\n"
CONFIGURATIONS = f'''
[[configurations]]
slug = "m1-direct"
model = "m1"
harness = "codex"
workflow = "direct"
reasoning_effort = "high"
label = "M1 direct"
prompt = """{PROMPT}"""
harness_version = "codex-cli 0.46.0"
cli_version = "node 22.3.0"
runtime_image = "ghcr.io/example/agent@sha256:{"ab" * 32}"
'''


def soffice_version() -> str:
    """LibreOffice's own answer, asked independently of the code under test."""
    out = subprocess.run(["soffice", "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    return out.strip().splitlines()[0]


# -- pure --------------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice")
def test_renderer_provenance_is_libreoffice_own_version_asked_once_per_process():
    renderer_provenance.cache_clear()
    found = renderer_provenance("soffice")
    assert found.libreoffice == soffice_version() and found.libreoffice.startswith("LibreOffice ")
    assert renderer_provenance("soffice") is found  # cached: one `soffice --version` per process and binary
    import pypdfium2.version

    assert found.rasteriser == (
        f"pypdfium2 {pypdfium2.version.PYPDFIUM_INFO.version} / PDFium {pypdfium2.version.PDFIUM_INFO.version}"
    )
    families = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=True).stdout
    assert found.font_families and set(found.font_families) <= {
        name.strip() for line in families.splitlines() for name in line.split(",")
    }
    assert len(found.fonts_sha256) == 64 and len(found.key) == 64
    if shutil.which("dpkg-query"):
        assert any(p.startswith("fonts-") for p in found.font_packages)
    missing = renderer_provenance("/nonexistent/soffice")
    assert missing.libreoffice == "" and missing.key != found.key  # unreadable is recorded as such, never guessed


def test_configuration_provenance_is_read_and_checked(tmp_path):
    path = tmp_path / "configurations.toml"
    path.write_text(CONFIGURATIONS)
    (spec,) = parse_configurations(path)
    assert spec.prompt == PROMPT  # whitespace kept: it is what was sent
    assert spec.prompt_sha256 == hashlib.sha256(PROMPT.encode()).hexdigest()
    assert (spec.harness_version, spec.cli_version) == ("codex-cli 0.46.0", "node 22.3.0")
    assert spec.runtime_image.endswith("ab" * 32)

    bad = {
        "configurations": [
            {
                "slug": "x",
                "model": "m",
                "harness": "h",
                "workflow": "direct",
                "reasoning_effort": "high",
                "label": "X",
                "prompt": "hello",
                "prompt_sha256": "0" * 64,
                "harness_version": 3,
                "cli_version": "1.0\n2.0",
            },
            {
                "slug": "y",
                "model": "m",
                "harness": "h",
                "workflow": "direct",
                "reasoning_effort": "high",
                "label": "Y",
                "prompt_sha256": "not-a-hash",
                "runtime_image": "i" * 301,
            },
        ]
    }
    wrong = tmp_path / "bad.json"
    wrong.write_text(json.dumps(bad))
    with pytest.raises(ConfigurationFileError) as error:
        parse_configurations(wrong)
    lines = str(error.value).splitlines()
    assert f"{wrong}: configuration 1 harness_version: expected a string" in lines
    assert f"{wrong}: configuration 1 cli_version: expected one line of text" in lines
    assert any(
        line.startswith(f"{wrong}: configuration 1 prompt_sha256: {'0' * 64} is not the SHA-256") for line in lines
    )
    assert any(line.startswith(f"{wrong}: configuration 2 prompt_sha256: expected 64 hexadecimal") for line in lines)
    assert f"{wrong}: configuration 2 runtime_image: longer than 300 characters" in lines
    assert len(lines) == 5  # every problem of the file at once


def test_a_later_declaration_fills_blank_provenance_and_never_changes_it():
    merged, clashes = provenance_merge(
        stored={"harness_version": "1.0", "cli_version": ""}, declared={"harness_version": "1.0", "cli_version": "2.0"}
    )
    assert merged == {"harness_version": "1.0", "cli_version": "2.0"} and clashes == []
    _, clashes = provenance_merge(stored={"harness_version": "1.0"}, declared={"harness_version": "1.1"})
    assert clashes == ["harness_version: declared as '1.1', recorded otherwise; recorded provenance is kept for good"]


# -- rendering with the real LibreOffice ---------------------------------------------------------------------------


@pytest.mark.libreoffice
@pytest.mark.django_db
@needs_shared(PPTX_REAL)
def test_renderings_record_libreoffice_version_and_the_staff_pages_show_it(tmp_path):
    figure_create("t0")
    figure_create("t1", index=1)
    root = tmp_path / "runs"
    one_slide_deck(root / "m1-direct" / "t0" / "output.pptx", boxes=3)
    (root / "m1-direct" / "t1").mkdir(parents=True)
    shutil.copy(PPTX_REAL / "python-pptx" / "shp-groupshape.pptx", root / "m1-direct" / "t1" / "output.pptx")
    (tmp_path / "configurations.toml").write_text(CONFIGURATIONS)
    call_command(
        "import_artifacts",
        run_root=root,
        configurations=tmp_path / "configurations.toml",
        no_progress=True,
        stdout=io.StringIO(),
    )
    call_command("audit_artifacts", no_progress=True, stdout=io.StringIO())  # one LibreOffice batch for both decks

    rendered = Artifact.objects.select_related("render_environment").get(figure__task_id="t0")
    version = soffice_version()
    assert rendered.render_ok and rendered.render_environment.libreoffice_version == version
    assert RenderEnvironment.objects.count() == 1  # one renderer, one row, shared by its renderings
    assert Artifact.objects.filter(render_environment=rendered.render_environment).count() == 2

    audit = table_frame("artifact-audit").set_index("task_id")
    assert audit.loc["t0", "libreoffice_version"] == version and audit.loc["t0", "fonts_sha256"]
    assert audit.attrs["notes"] == []  # one version: nothing to warn about
    configurations = table_frame("configurations").set_index("configuration")
    assert configurations.loc["m1-direct", "prompt_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest()
    assert configurations.loc["m1-direct", "harness_version"] == "codex-cli 0.46.0"

    client = Client()
    client.force_login(annotator("ann-one"))  # an annotator is refused the staff pages
    assert client.get(f"/artifacts/item/{rendered.pk}/").status_code == 403
    staff, _ = user_create_with_role(username="coord", password=PASSWORD, role="coordinator")
    client.force_login(staff)
    page = client.get(f"/artifacts/item/{rendered.pk}/").content.decode()
    assert version in page and "PDFium" in page and "codex-cli 0.46.0" in page and "node 22.3.0" in page
    assert client.get(f"/api/artifacts/{rendered.pk}/").json()["renderer"]["libreoffice_version"] == version
    api = {c["slug"]: c for c in client.get("/api/configurations/").json()}
    assert api["m1-direct"]["runtime_image"].startswith("ghcr.io/example/agent@sha256:")
    configuration_page = client.get("/artifacts/m1-direct/").content.decode()
    assert version in configuration_page and "Keep every label." in configuration_page

    # A second LibreOffice version among the renderings: the audit table and the configuration page warn.
    other = RenderEnvironment.objects.create(
        key="1" * 64, libreoffice_version="LibreOffice 24.2.0.3 420(Build:3)", fonts_sha256="2" * 64
    )
    Artifact.objects.filter(figure__task_id="t1").update(render_environment=other)
    note = table_frame("artifact-audit").attrs["notes"][0]
    assert "2 LibreOffice versions are mixed" in note and "LibreOffice 24.2.0.3 420(Build:3) (1)" in note
    assert f"{version} (1)" in note
    assert "are mixed" in client.get("/artifacts/m1-direct/").content.decode()


# -- votes, blinding, exports and the release (no rendering: the factory's stored PNGs) ------------------------------

VERSIONS = ("LibreOffice 7.4.7.2 40(Build:2)", "LibreOffice 24.8.1.2 480(Build:2)")
BRIEF_SHA = hashlib.sha256(b"be brief").hexdigest()
DISTINCT = {"harness_version": "hv-zebracorn-9", "cli_version": "cli-quokkaflux-3", "runtime_image": "img-narwhalite"}


@pytest.fixture
def study_with_votes():
    figures, configurations, artifacts = build_corpus(figures=2, configurations=("cfg-a-direct", "cfg-b-direct"))
    Configuration.objects.filter(slug="cfg-a-direct").update(**DISTINCT, prompt="be brief", prompt_sha256=BRIEF_SHA)
    environments = [
        RenderEnvironment.objects.create(key=str(i) * 64, libreoffice_version=v, fonts_sha256="f" * 64)
        for i, v in enumerate(VERSIONS)
    ]
    for artifact in artifacts:  # configuration b's renderings made by another LibreOffice version
        artifact.render_environment = environments[artifact.configuration.slug == "cfg-b-direct"]
        artifact.save(update_fields=["render_environment"])
    study = annotation_services.study_create(
        name="prov", configurations=["cfg-a-direct", "cfg-b-direct"], min_dwell_ms=0, overlap_rate=0
    )
    user = annotator("ann-prov")
    study.annotators.add(user)
    lease = next_lease(study=study, annotator=user)
    submit_vote(token=lease.token, annotator=user, outcome="a", reason="clearer", dwell_ms=4000)
    return {"study": study, "user": user, "artifacts": artifacts}


@pytest.mark.django_db
def test_tables_on_votes_warn_when_renderings_mix_libreoffice_versions(study_with_votes):
    for name in ("coverage", "comparisons", "elo"):
        notes = table_frame(name, study="prov").attrs["notes"]
        mixed = [n for n in notes if "LibreOffice versions are mixed" in n]
        assert len(mixed) == 1, (name, notes)
        assert f"{VERSIONS[0]} (1)" in mixed[0] and f"{VERSIONS[1]} (1)" in mixed[0]  # the two renderings shown
    assert annotation_selectors.renderer_notes(study=study_with_votes["study"])


@pytest.mark.django_db
def test_annotators_never_see_provenance(study_with_votes):
    client = Client()
    assert client.login(username="ann-prov", password=PASSWORD)
    next_lease(study=study_with_votes["study"], annotator=study_with_votes["user"])
    shown = client.get("/annotate/", {"study": "prov"}).content.decode()
    shown += client.get("/api/annotate/next/", {"study": "prov"}).content.decode()
    assert "prov" in shown  # the screen itself was served
    for secret in (*DISTINCT.values(), BRIEF_SHA, "be brief", *VERSIONS, "LibreOffice"):
        assert secret not in shown


@pytest.mark.django_db
def test_exports_and_the_release_carry_provenance_and_raw_replies(study_with_votes, tmp_path):
    artifact = study_with_votes["artifacts"][0]
    reply = {
        "score": 80,
        "subscores": {"text": 16, "semantic_structure": 24, "layout": 12, "editability": 20, "visual_detail": 8},
        "major_errors": [],
        "minor_errors": ["one arrow is loose"],
        "editability_assessment": "native shapes",
        "reason": "close",
    }
    raw = "  " + json.dumps(reply, indent=2)  # as the judge wrote it: not the canonical dump of its fields
    record = {
        "task_id": artifact.figure.task_id,
        "configuration": artifact.configuration.slug,
        "judge": "judge-x",
        "judge_family": "family-x",
        "run": 1,
        **reply,
        "raw_reply": raw,
        "prompt_hash": "d" * 64,
    }
    bad = {**record, "task_id": study_with_votes["artifacts"][1].figure.task_id, "prompt_hash": "D" * 63}
    judge_file = tmp_path / "judge.jsonl"
    judge_file.write_text(json.dumps(record) + "\n" + json.dumps(bad) + "\n")
    report = scoring_services.judge_records_import(path=judge_file)
    assert report.created == 1 and report.rejected == [
        f"{judge_file}:2 prompt_hash: expected a SHA-256 as 64 lower-case hexadecimal digits"
    ]
    assert JudgeRecord.objects.get().raw_reply == raw

    # The study export's judge.jsonl keeps them, and a released score is recomputed from its raw reply.
    scoring_exchange.judge_records_export(study="prov", out_dir=tmp_path)
    (exported,) = [json.loads(line) for line in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert (exported["raw_reply"], exported["prompt_hash"]) == (raw, "d" * 64)
    release = release_build(study="prov", out_dir=tmp_path / "releases")
    (released,) = [json.loads(line) for line in (release.path / "judge_records.jsonl").read_text().splitlines()]
    assert validate_reply(released["raw_reply"], load_rubric("refig-v1")).score == released["score"] == 80
    assert released["prompt_hash"] == "d" * 64

    configurations = {
        c["slug"]: c for c in json.loads((release.path / "configurations.json").read_text())["configurations"]
    }
    assert configurations["cfg-a-direct"]["runtime_image"] == "img-narwhalite"
    assert configurations["cfg-a-direct"]["prompt"] == "be brief"
    assert configurations["cfg-b-direct"]["harness_version"] == ""
    renderers = json.loads((release.path / "renderers.json").read_text())["renderers"]
    assert sorted((r["libreoffice_version"], r["renderings"]) for r in renderers) == sorted((v, 2) for v in VERSIONS)
    artifacts = [json.loads(line) for line in (release.path / "artifacts.jsonl").read_text().splitlines()]
    assert {a["configuration"]: a["libreoffice_version"] for a in artifacts} == dict(
        zip(("cfg-a-direct", "cfg-b-direct"), VERSIONS)
    )
    datasheet = (release.path / "README.md").read_text()
    assert "## Renderers" in datasheet and f"| {VERSIONS[1]} |" in datasheet
    assert "2 LibreOffice versions are mixed" in datasheet

    configurations_table = table_frame("configurations").set_index("configuration")
    assert configurations_table.loc["cfg-a-direct", "cli_version"] == "cli-quokkaflux-3"
    assert "prompt" not in configurations_table.columns  # by its hash only; the text is in the exports

    # The study export's configurations.json carries provenance, and importing it back keeps it.
    from agents.exchange import artifacts_export

    artifacts_export(study="prov", out_dir=tmp_path)
    declared = json.loads((tmp_path / "configurations.json").read_text())["configurations"]
    assert {k: declared[0][k] for k in DISTINCT} == DISTINCT and declared[0]["prompt"] == "be brief"
    assert "runtime_image" not in declared[1]  # blank provenance is left out
    recorded = ("slug", *PROVENANCE_FIELDS)
    before = list(Configuration.objects.order_by("pk").values(*recorded))
    services.configurations_declare(specs=parse_configurations(tmp_path / "configurations.json"))
    assert list(Configuration.objects.order_by("pk").values(*recorded)) == before
    declared[1]["cli_version"] = "filled in later"
    declared[0]["runtime_image"] = "img-other"
    (tmp_path / "changed.json").write_text(json.dumps({"configurations": declared}))
    with pytest.raises(services.ConfigurationConflict, match="runtime_image: declared as 'img-other'"):
        services.configurations_declare(specs=parse_configurations(tmp_path / "changed.json"))
    declared[0]["runtime_image"] = "img-narwhalite"
    (tmp_path / "changed.json").write_text(json.dumps({"configurations": declared}))
    services.configurations_declare(specs=parse_configurations(tmp_path / "changed.json"))
    assert Configuration.objects.get(slug="cfg-b-direct").cli_version == "filled in later"


def test_renderer_environment_records_are_shared(db):
    first = render_environment_record(provenance=renderer_provenance("/nonexistent/soffice"))
    again = render_environment_record(provenance=renderer_provenance("/nonexistent/soffice"))
    assert first.pk == again.pk and first.libreoffice_version == "" and first.fonts_sha256
    assert selectors.renderer_mix_notes() == []  # nothing rendered yet

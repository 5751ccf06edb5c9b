"""export command, tables API, figures API, roles."""

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from core.services import user_create_with_role
from tests.corpus.images import make_corpus_images, manifest_row, sha256_of, write_manifest

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(tmp_path):
    images = tmp_path / "images"
    make_corpus_images(images)
    rows = [
        manifest_row("t0001", "2301.00001", "photo.jpg", sha256_of(images / "photo.jpg"), field="cs.CL"),
        manifest_row("t0002", "2302.00002", "gray.png", sha256_of(images / "gray.png"), field="cs.AI"),
    ]
    call_command(
        "import_corpus",
        manifest=write_manifest(tmp_path / "m.jsonl", rows),
        images=images,
        no_progress=True,
        stdout=io.StringIO(),
    )
    return images


def client_for(role):
    user_create_with_role(username=f"u-{role}", password="pw-long-enough-1", role=role)
    client = Client()
    assert client.login(username=f"u-{role}", password="pw-long-enough-1")
    return client


def test_export_corpus_fields_in_three_formats(corpus, tmp_path):
    out = tmp_path / "fields.csv"
    call_command("export", "corpus-fields", format="csv", out=out, stderr=io.StringIO())
    lines = out.read_text().splitlines()
    assert lines[0] == "field,tasks,share,total_bytes,mean_bytes,p25_bytes,p50_bytes,p75_bytes"
    assert lines[1].startswith("cs.AI,1,0.5,") and lines[3].startswith("all,2,1.0,")
    call_command("export", "corpus-stats", format="json", out=tmp_path / "s.json", stderr=io.StringIO())
    payload = json.loads((tmp_path / "s.json").read_text())
    assert payload["columns"] == ["statistic", "value"]
    assert {"statistic": "figures", "value": 2} in payload["rows"]
    call_command("export", "corpus-stats", format="latex", out=tmp_path / "s.tex", stderr=io.StringIO())
    assert "\\begin{tabular}" in (tmp_path / "s.tex").read_text()


def test_export_unknown_table_is_a_clear_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown table 'nope'"):
        call_command("export", "nope")


def test_tables_api_csv_and_json_for_researchers_only(corpus):
    researcher = client_for("researcher")
    response = researcher.get("/api/tables/corpus-fields/?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response.content.decode().splitlines()[0].startswith("field,tasks,share")
    response = researcher.get("/api/tables/corpus-stats/?format=json")
    assert response.json()["rows"][0] == {"statistic": "figures", "value": 2}
    assert researcher.get("/api/tables/nope/").status_code == 404
    assert client_for("annotator").get("/api/tables/corpus-stats/").status_code == 403
    assert Client().get("/api/tables/corpus-stats/").status_code in (401, 403)


def test_figures_api_lists_filters_and_shows_provenance(corpus):
    coordinator = client_for("coordinator")
    listing = coordinator.get("/api/figures/?field=cs.CL").json()
    assert listing["count"] == 1 and listing["results"][0]["task_id"] == "t0001"
    detail = coordinator.get("/api/figures/t0002/").json()
    assert detail["abs_url"] == "https://arxiv.org/abs/2302.00002" and detail["image_mode"] == "LA"
    image = coordinator.get("/api/figures/t0002/image/")
    assert image.status_code == 200 and b"".join(image.streaming_content) == (corpus / "gray.png").read_bytes()
    assert client_for("annotator").get("/api/figures/").status_code == 403


def test_schema_and_pages(corpus):
    researcher = client_for("researcher")
    schema = researcher.get("/api/schema/?format=json")
    assert schema.status_code == 200 and "/api/figures/" in schema.json()["paths"]
    page = researcher.get("/corpus/?field=cs.AI")
    assert page.status_code == 200 and b"t0002" in page.content and b"t0001" not in page.content
    detail = researcher.get("/corpus/t0001/")
    assert b"https://arxiv.org/abs/2301.00001" in detail.content
    thumb = researcher.get("/corpus/t0001/image?size=thumb")
    assert thumb.status_code == 200
    assert b"corpus-fields" in researcher.get("/corpus/statistics/").content
    assert client_for("annotator").get("/corpus/").status_code == 403


def test_schema_and_docs_for_coordinators_researchers_and_staff_only():
    from django.contrib.auth.models import User

    User.objects.create_user("u-staff", password="pw-long-enough-1", is_staff=True)
    staff = Client()
    assert staff.login(username="u-staff", password="pw-long-enough-1")
    allowed = {"researcher": client_for("researcher"), "coordinator": client_for("coordinator"), "staff": staff}
    annotator, anonymous = client_for("annotator"), Client()
    for url in ("/api/schema/", "/api/schema/?format=json", "/api/docs/"):
        for who, client in allowed.items():
            assert client.get(url).status_code == 200, (url, who)
        assert annotator.get(url).status_code == 403, url
        response = anonymous.get(url)
        assert response.status_code in (401, 403) or (
            response.status_code == 302 and "/accounts/login/" in response["Location"]
        ), url
        assert b"/api/annotate/" not in response.content and b"/api/annotate/" not in annotator.get(url).content


def test_role_commands_create_users_in_their_groups():
    for role in ("annotator", "coordinator", "researcher"):
        call_command(f"create{role}", f"x-{role}", password="pw-long-enough-1", stdout=io.StringIO())
    from django.contrib.auth.models import User

    assert list(User.objects.get(username="x-coordinator").groups.values_list("name", flat=True)) == ["coordinator"]
    assert User.objects.get(username="x-annotator").check_password("pw-long-enough-1")

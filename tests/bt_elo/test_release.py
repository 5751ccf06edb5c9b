"""`manage.py release` and the table API on the demo, with two figures under licences a release may not carry and
every person renamed to a distinctive username: the images withheld and listed with provenance, the checksums valid,
no username anywhere in the release, the same pseudonyms in a second release, and pseudonyms in the API's CSV."""

import io
import json
import subprocess
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings

from annotation.models import Comparison, GateReview
from corpus.models import Figure

WITHHELD = {  # task id → (licence text, licence URL) as recorded
    "demo-004": ("CC BY-NC 4.0", "https://creativecommons.org/licenses/by-nc/4.0/"),
    "demo-007": ("arXiv.org perpetual, non-exclusive license", "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"),
}


def _renamed(name: str) -> str:
    return f"zq{name}xylophone"


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo loaded once (≈20 s), people renamed, two licences changed; two releases and the API's CSV made once."""
    root = tmp_path_factory.mktemp("release")
    with (
        override_settings(MEDIA_ROOT=root / "media", VAR_DIR=root / "var", REFIG_PSEUDONYM_KEY=""),
        django_db_blocker.unblock(),
    ):
        call_command("load_sample_data", stdout=io.StringIO())
        names = set(Comparison.objects.values_list("annotator_name", flat=True))
        names |= set(GateReview.objects.values_list("reviewer", flat=True))
        for user in get_user_model().objects.all():
            names.add(user.username)
            user.username = _renamed(user.username)
            user.save(update_fields=["username"])
        for name in names:
            Comparison.objects.filter(annotator_name=name).update(annotator_name=_renamed(name))
            GateReview.objects.filter(reviewer=name).update(reviewer=_renamed(name))
        for task_id, (text, url) in WITHHELD.items():
            Figure.objects.filter(task_id=task_id).update(license=text, license_url=url)
        out = root / "releases"
        for _ in range(2):
            call_command("release", study="demo", out=out, stdout=io.StringIO(), stderr=io.StringIO())
        client = Client()
        client.force_login(get_user_model().objects.get(username=_renamed("researcher")))
        api = client.get("/api/tables/comparisons/", {"format": "csv", "study": "demo"})
        download = client.get("/results/release/demo.zip")
        yield {
            "first": out / "demo-release-1",
            "second": out / "demo-release-2",
            "usernames": {_renamed(n) for n in names},
            "api": api,
            "download": download,
            "key_file": root / "var" / "pseudonym.key",
        }
        call_command("flush", interactive=False, stdout=io.StringIO())


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.django_db
def test_withheld_figures_are_listed_with_provenance_and_their_images_absent(demo):
    release = demo["first"]
    withheld = {row["task_id"]: row for row in _jsonl(release / "withheld.jsonl")}
    assert set(withheld) == set(WITHHELD)
    assert withheld["demo-004"]["licence_canonical"] == "CC-BY-NC-4.0"
    assert withheld["demo-007"]["licence_canonical"] == "arXiv-nonexclusive-distrib-1.0"
    for row in withheld.values():
        assert row["abs_url"] and row["source_url"] and row["sha256"] and row["authors"]
    images = {p.stem for p in (release / "images").iterdir()}
    figures = _jsonl(release / "figures.jsonl")
    assert images == {f["task_id"] for f in figures} - set(WITHHELD)
    assert len(figures) == 30
    renderings = {p.stem for p in (release / "renderings").rglob("*.png")}
    assert renderings and not renderings & set(WITHHELD)  # a reconstruction of a withheld figure is withheld too
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert "| CC-BY-NC-4.0 | 1 |" in readme and "| arXiv-nonexclusive-distrib-1.0 | 1 |" in readme
    assert "CC BY 4.0" in readme  # the PPTBench attribution (its data is loaded with the demo)
    assert (release / "fetch_withheld.py").read_text().startswith('"""Download the source')


@pytest.mark.django_db
def test_release_contents_and_checksums(demo):
    release = demo["first"]
    for name in ("configurations.json", "artifacts.jsonl", "judge_records.jsonl", "comparisons.csv", "tables/elo.csv"):
        assert (release / name).is_file(), name
    records = _jsonl(release / "judge_records.jsonl")
    assert records and {"raw_reply", "prompt_hash"} <= set(records[0])
    assert len(pd.read_csv(release / "comparisons.csv")) == 806
    result = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=release, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    listed = {line.split("  ", 1)[1] for line in (release / "SHA256SUMS").read_text().splitlines()}
    on_disk = {p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == on_disk


@pytest.mark.django_db
def test_no_username_appears_anywhere_in_the_release(demo):
    usernames = demo["usernames"]
    assert len(usernames) >= 4
    for release in (demo["first"], demo["second"]):
        for path in release.rglob("*"):
            if path.is_file():
                text = path.read_bytes().decode("utf-8", errors="ignore")
                found = [name for name in usernames if name in text]
                assert not found, f"{path.relative_to(release)} names {found}"


@pytest.mark.django_db
def test_a_second_release_gives_everyone_the_same_pseudonym(demo):
    first = pd.read_csv(demo["first"] / "comparisons.csv")
    second = pd.read_csv(demo["second"] / "comparisons.csv")
    assert first["annotator"].str.fullmatch(r"annotator-[0-9a-f]{8}").all()
    assert first["annotator"].nunique() == 4
    pairs = first.merge(second, on="comparison_id")[["annotator_x", "annotator_y"]]
    assert (pairs["annotator_x"] == pairs["annotator_y"]).all()
    assert demo["key_file"].stat().st_mode & 0o777 == 0o600


@pytest.mark.django_db
def test_the_table_api_csv_names_annotators_by_pseudonym(demo):
    response = demo["api"]
    assert response.status_code == 200
    frame = pd.read_csv(io.StringIO(response.content.decode()))
    release_pseudonyms = set(pd.read_csv(demo["first"] / "comparisons.csv")["annotator"])
    assert set(frame["annotator"]) == release_pseudonyms
    assert not set(frame["annotator"]) & demo["usernames"]


@pytest.mark.django_db
def test_the_release_downloads_as_a_zip(demo):
    response = demo["download"]
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = archive.namelist()
    # The first download builds the first release under the var dir; later downloads serve the newest one.
    assert "demo-release-1/SHA256SUMS" in names and "demo-release-1/withheld.jsonl" in names

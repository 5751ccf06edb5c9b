"""`manage.py paper` and /results/paper/<paper>.zip on the real demo data: every table the paper has as CSV + booktabs
LaTeX, every figure as a PDF that opens, REPRODUCTION.md naming exactly the bundle's files, and the study kinds'
tables that do not apply listed with the reason instead of a crash."""

import io
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pandas as pd
import pypdfium2
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from bt_elo.paper import PAPERS, TableItem, latex_table, present

BUNDLES = {  # paper, study → what the demo's data must give
    ("refigbench", "demo"): {
        "elo.pdf",
        "corpus-file-size.pdf",
        "corpus-area.pdf",
        "score-distribution.pdf",
        "rubric-means.pdf",
        "rubric-means.csv",
        "workflow-effect.pdf",
        "structural-audit.tex",
    },
    ("pptarena", "demo-ratings"): {
        "rating-agreement.csv",
        "rating-consistency.tex",
        "rating-agreement.pdf",
        "rating-categories.pdf",
    },
    ("pptarena", "demo-gate-review"): {"gate-confusion.pdf", "gate-review-agreement.tex"},
}


@pytest.fixture(scope="module")
def bundles(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo loaded once for the module (≈20 s) and each bundle written once; flushed afterwards."""
    root = tmp_path_factory.mktemp("paper")
    with override_settings(MEDIA_ROOT=root / "media"), django_db_blocker.unblock():
        call_command("load_sample_data", stdout=io.StringIO())
        out = {}
        for paper, study in BUNDLES:
            out[paper, study] = root / f"{paper}-{study}"
            call_command("paper", paper, study=study, out=out[paper, study], stdout=io.StringIO(), stderr=io.StringIO())
        yield out
        call_command("flush", interactive=False, stdout=io.StringIO())


def _named_files(directory: Path) -> set[str]:
    text = (directory / "REPRODUCTION.md").read_text(encoding="utf-8")
    return set(re.findall(r"`([\w.-]+\.(?:csv|tex|pdf|png|svg))`", text))


@pytest.mark.django_db
@pytest.mark.parametrize("key", list(BUNDLES))
def test_bundle_files_match_reproduction_md(bundles, key):
    directory = bundles[key]
    on_disk = {p.name for p in directory.iterdir()}
    assert BUNDLES[key] <= on_disk
    assert _named_files(directory) == on_disk - {"REPRODUCTION.md"}  # every file named, every named file there


@pytest.mark.django_db
def test_unsupported_items_are_listed_with_their_reason(bundles):
    text = (bundles["pptarena", "demo-ratings"] / "REPRODUCTION.md").read_text(encoding="utf-8")
    section = text.split("### gate-review-agreement", 1)[1].split("###", 1)[0]
    assert "Not in this bundle: applies to a gate_review study; study 'demo-ratings' is a rating study" in section
    assert "`python manage.py export gate-review-agreement --format latex --study demo-ratings" in section
    refig = (bundles["refigbench", "demo"] / "REPRODUCTION.md").read_text(encoding="utf-8")
    effort = refig.split("### effort-sweep", 1)[1].split("###", 1)[0]
    assert "Not in this bundle" in effort and "one effort only" in effort  # the table's own note says why


@pytest.mark.django_db
def test_reproduction_md_gives_inputs_and_command(bundles):
    text = (bundles["refigbench", "demo"] / "REPRODUCTION.md").read_text(encoding="utf-8")
    audit = text.split("### structural-audit", 1)[1].split("###", 1)[0]
    assert "`python manage.py export structural-audit --format latex --run 1 --out structural-audit.tex`" in audit
    assert "run 1" in audit
    elo = text.split("### elo", 1)[1].split("###", 1)[0]
    assert "study demo" in elo and "seed 20260720" in elo
    assert "--study demo" in elo


@pytest.mark.django_db
@pytest.mark.parametrize("key", list(BUNDLES))
def test_every_pdf_opens(bundles, key):
    pdfs = sorted(bundles[key].glob("*.pdf"))
    assert pdfs
    for pdf in pdfs:
        document = pypdfium2.PdfDocument(pdf)
        assert len(document) >= 1, pdf.name
        document.close()


@pytest.mark.django_db
def test_tables_are_booktabs_and_csv_reads(bundles):
    for directory in bundles.values():
        for tex in directory.glob("*.tex"):
            text = tex.read_text(encoding="utf-8")
            assert all(rule in text for rule in ("\\toprule", "\\midrule", "\\bottomrule")), tex.name
            assert text.isascii(), tex.name
            csv = pd.read_csv(tex.with_suffix(".csv"))
            assert len(csv) >= 1


@pytest.mark.django_db
def test_structural_audit_prints_shares_in_percent_one_decimal(bundles):
    directory = bundles["refigbench", "demo"]
    csv = pd.read_csv(directory / "structural-audit.csv")
    tex = (directory / "structural-audit.tex").read_text(encoding="utf-8")
    first = csv.iloc[0]
    row = next(line for line in tex.splitlines() if line.startswith(first["configuration"] + " &"))
    cells = [c.strip() for c in row.rstrip("\\ ").split("&")]
    assert cells[5] == f"{100 * first['share_no_connector']:.1f}"


@pytest.mark.django_db
@pytest.mark.skipif(not shutil.which("pdflatex"), reason="no pdflatex on this machine: LaTeX tables not compiled")
def test_every_latex_table_compiles(bundles, tmp_path):
    tables = [tex for directory in bundles.values() for tex in sorted(directory.glob("*.tex"))]
    body = "\n".join(f"\\input{{{tex.as_posix()}}}\n\\clearpage" for tex in tables)
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
        f"{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert len(pypdfium2.PdfDocument(tmp_path / "doc.pdf")) >= len(tables)


@pytest.mark.django_db
def test_zip_downloads_for_a_researcher(bundles, client):
    client.force_login(get_user_model().objects.get(username="researcher"))
    response = client.get("/results/paper/pptarena.zip", {"study": "demo-ratings"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert 'filename="pptarena-demo-ratings.zip"' in response["Content-Disposition"]
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    expected = {p.name for p in bundles["pptarena", "demo-ratings"].iterdir()}
    assert {name.split("/", 1)[1] for name in names} == expected


@pytest.mark.django_db
def test_zip_refuses_annotators_and_unknown_papers(bundles, client):
    client.force_login(get_user_model().objects.get(username="annotator"))
    assert client.get("/results/paper/refigbench.zip", {"study": "demo"}).status_code == 403
    client.force_login(get_user_model().objects.get(username="researcher"))
    assert client.get("/results/paper/nopaper.zip").status_code == 404
    assert client.get("/results/paper/refigbench.zip", {"study": "no-such-study"}).status_code == 404


@pytest.mark.django_db
def test_results_page_links_the_bundles(bundles, client):
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get("/results/", {"study": "demo"}).content.decode()
    assert "/results/paper/refigbench.zip?study=demo" in page


def test_papers_name_registered_tables_and_drawable_figures():
    """Pure: the declarative PAPERS table names only registered tables and Figures methods."""
    from bt_elo.paper import Figures
    from core.tables import TABLES

    for paper in PAPERS.values():
        assert {t.table for t in paper.tables} <= set(TABLES)
        assert all(hasattr(Figures, f.draw) for f in paper.figures)


def test_latex_table_escapes_and_rounds():
    frame = pd.DataFrame(
        {"name_x": ["a_b & c", "d"], "share": [0.12345, 0.5], "value": [1.5, 2.25], "fine": [1 / 3, 2.0]}
    )
    frame.attrs["notes"] = ["κ − note"]
    item = TableItem("t", "Δ caption 50%", percent=("share",))
    text = latex_table(frame, item, notes=frame.attrs["notes"], label="t")
    assert "\\caption{Delta caption 50\\%}" in text
    # shares in percent with one decimal; other columns at the precision their values carry, at most three decimals
    assert "a\\_b \\& c & 12.3 & 1.50 & 0.333" in text and "d & 50.0 & 2.25 & 2.000" in text
    assert text.count("kappa - note") == 1 and text.isascii()
    assert list(present(frame, item).columns) == ["name_x", "share", "value", "fine"]


@pytest.mark.django_db
def test_one_judge_figures_draw_the_judge_that_ran_first(bundles):
    """The demo's pinned judge ran before the second family's open-weight judge: the one-judge figures draw it."""
    text = (bundles["refigbench", "demo"] / "REPRODUCTION.md").read_text(encoding="utf-8")
    section = text.split("### rubric-means", 2)[2].split("###", 1)[0]  # the figure's (the table's comes first)
    assert "judge synthetic-judge-pinned-2026-06 (the judge that ran first" in section and "run mean" in section


@pytest.mark.django_db
def test_rubric_means_are_the_demo_subscores_averaged_by_hand(bundles):
    """The rubric-means figure's input (its CSV in the bundle) against the judge records averaged here: each task's
    mean over the judge's runs, then the mean over tasks."""
    from scoring.selectors import scores_frame

    csv = pd.read_csv(bundles["refigbench", "demo"] / "rubric-means.csv")
    row = csv[(csv["run"].astype(str) == "mean") & (csv["axis"] == "semantic_structure")].iloc[0]
    scores = scores_frame(judge=row["judge"])
    scores = scores[scores["configuration"] == row["configuration"]]
    per_task = scores.groupby("task_id")["semantic_structure"].mean().dropna()
    assert row["n"] == len(per_task)
    assert row["mean"] == pytest.approx(per_task.mean())
    assert row["ci_low"] <= row["mean"] <= row["ci_high"]


@pytest.mark.django_db
def test_paper_figures_download_as_png_svg_and_pdf(bundles, client):
    client.force_login(get_user_model().objects.get(username="researcher"))
    pdf = client.get("/results/plot/corpus-area.pdf", {"download": 1})
    assert pdf["Content-Type"] == "application/pdf" and len(pypdfium2.PdfDocument(pdf.content)) == 1
    assert 'filename="corpus-area.pdf"' in pdf["Content-Disposition"]
    svg = client.get("/results/plot/corpus-fields.svg", {"study": "demo"})
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    png = client.get("/results/plot/rating-agreement.png", {"study": "demo-ratings"})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    wrong_kind = client.get("/results/plot/gate-confusion.png", {"study": "demo"})  # a pairwise study
    assert wrong_kind.status_code == 200 and wrong_kind.content.startswith(b"\x89PNG")  # the reason, drawn
    assert client.get("/results/plot/no-such-figure.pdf").status_code == 404
    assert client.get("/results/plot/corpus-area.gif").status_code == 404


@pytest.mark.django_db
def test_figure_formats_from_the_command(bundles, tmp_path):
    out = tmp_path / "formats"
    call_command(
        "paper",
        "refigbench",
        only=["corpus-area"],
        figure_formats=["png", "svg"],
        out=out,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert {p.name for p in out.iterdir()} == {"REPRODUCTION.md", "corpus-area.png", "corpus-area.svg"}
    assert _named_files(out) == {"corpus-area.png", "corpus-area.svg"}
    text = (out / "REPRODUCTION.md").read_text(encoding="utf-8")
    assert "--only corpus-area --figure-format png --figure-format svg --out DIR" in text

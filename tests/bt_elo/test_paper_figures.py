"""The papers' figures the bundle draws, on hand-sized frames: the plotted data equals a hand computation, and each
figure is a valid PDF, PNG and SVG. Pure: no database."""

import inspect
import io
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pypdfium2
import pytest

from annotation.quality import HUMAN_SOURCE, OVERALL
from bt_elo import paper_figures, paper_figures_ratings, paper_figures_scores
from bt_elo.paper import FIGURE_FORMATS, PAPERS, Figures


def assert_valid(body: bytes, fmt: str) -> None:
    if fmt == "pdf":
        document = pypdfium2.PdfDocument(body)
        assert len(document) == 1
        document.close()
    elif fmt == "png":
        assert body.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert ET.parse(io.BytesIO(body)).getroot().tag.endswith("svg")


def test_every_declared_figure_draws_in_every_format():
    """Each FigureItem names a Figures method taking its inputs in order and the format."""
    for paper in PAPERS.values():
        for item in paper.figures:
            parameters = list(inspect.signature(getattr(Figures, item.draw)).parameters)
            assert parameters[-1] == "fmt" and len(parameters) == len(item.inputs) + 1, item.name


# --- decoded-area percentile curve ---------------------------------------------------------------------------------
IMAGES = pd.DataFrame({"task_id": list("abcde"), "field": ["cs.CV"] * 5, "megapixels": [4.0, 1.0, 5.0, 2.0, 3.0]})


def test_area_percentiles_by_hand():
    curve = paper_figures.area_percentiles(IMAGES).set_index("percentile")["megapixels"]
    assert len(curve) == 101
    # sorted 1..5, linear interpolation at (n - 1) * q = 4q: P0 = 1, P25 = 2, P50 = 3, P95 = 4 + 0.8, P100 = 5
    assert [curve[0], curve[25], curve[50], curve[95], curve[100]] == pytest.approx([1, 2, 3, 4.8, 5])
    assert curve[10] == pytest.approx(1.4)


@pytest.mark.parametrize("fmt", FIGURE_FORMATS)
def test_area_plot_is_a_valid_file(fmt):
    assert_valid(paper_figures.area_percentile_plot(IMAGES, fmt), fmt)


# --- rubric means per model and harness ----------------------------------------------------------------------------
def _means(efforts=("high", "high")) -> pd.DataFrame:
    rows = []
    for model, effort in zip(("alpha", "beta"), efforts):
        for workflow, base in (("direct", 5.0), ("specialized", 8.0)):
            for k, (axis, maximum) in enumerate((("text", 20), ("semantic_structure", 30), ("layout", 15))):
                mean = base + k + (model == "beta")
                rows.append(
                    {
                        "configuration": f"{model}-{workflow}",
                        "model": model,
                        "harness": "cli",
                        "workflow": workflow,
                        "reasoning_effort": effort,
                        "judge": "j",
                        "run": "mean",
                        "axis": axis,
                        "maximum": maximum,
                        "n": 3,
                        "mean": mean,
                        "ci_low": mean - 1,
                        "ci_high": mean + 1,
                    }
                )
    return pd.DataFrame(rows)


def test_rubric_means_data_sets_workflows_side_by_side_per_design():
    data = paper_figures_scores.rubric_means_data(_means())
    assert list(dict.fromkeys(data["design"])) == ["alpha · cli", "beta · cli"]  # one effort: not named
    row = data[(data["design"] == "beta · cli") & (data["workflow"] == "specialized") & (data["axis"] == "layout")]
    assert row[["mean", "ci_low", "ci_high", "maximum"]].iloc[0].tolist() == [11.0, 10.0, 12.0, 15]
    assert len(data) == 2 * 2 * 3


def test_rubric_means_data_names_the_effort_where_efforts_differ():
    data = paper_figures_scores.rubric_means_data(_means(efforts=("high", "low")))
    assert set(data["design"]) == {"alpha · cli · high", "beta · cli · low"}
    twins = _means()
    twins["model"] = "alpha"  # two configurations sharing model, harness and workflow: shown under their own names
    assert set(paper_figures_scores.rubric_means_data(twins)["design"]) == {"alpha-direct", "beta-direct"} | {
        "alpha-specialized",
        "beta-specialized",
    }


@pytest.mark.parametrize("fmt", FIGURE_FORMATS)
def test_rubric_means_plot_is_a_valid_file(fmt):
    assert_valid(paper_figures_scores.rubric_means_plot(_means(), fmt), fmt)


# --- PPTArena: per system and per category -------------------------------------------------------------------------
def _system_means() -> pd.DataFrame:
    rows = [
        ("visual_quality", HUMAN_SOURCE, OVERALL, "sys-a", 4, 3.5),
        ("visual_quality", HUMAN_SOURCE, "cs.CV", "sys-a", 2, 4.0),
        ("visual_quality", HUMAN_SOURCE, "cs.AI", "sys-a", 2, 3.0),
        ("visual_quality", HUMAN_SOURCE, OVERALL, "sys-b", 2, 2.0),
        ("visual_quality", HUMAN_SOURCE, "cs.AI", "sys-b", 2, 2.0),
        ("visual_quality", "judge-family", OVERALL, "sys-a", 4, 4.25),
        ("instruction_following", HUMAN_SOURCE, OVERALL, "sys-a", 4, 5.0),
    ]
    return pd.DataFrame(rows, columns=["axis", "source", "category", "configuration", "n", "mean"])


def test_category_grid_is_the_system_by_category_means():
    grid = paper_figures_ratings.rating_category_grid(_system_means(), axis="visual_quality", source=HUMAN_SOURCE)
    assert list(grid.columns) == [OVERALL, "cs.AI", "cs.CV"]  # overall first, then the categories in order
    assert list(grid.index) == ["sys-a", "sys-b"]
    assert grid.loc["sys-a"].tolist() == [3.5, 3.0, 4.0]
    assert grid.loc["sys-b", OVERALL] == 2.0 and np.isnan(grid.loc["sys-b", "cs.CV"])


@pytest.mark.parametrize("fmt", FIGURE_FORMATS)
def test_category_plot_is_a_valid_file(fmt):
    assert_valid(paper_figures_ratings.rating_categories_plot(_system_means(), fmt), fmt)


@pytest.mark.parametrize("draw", [paper_figures.area_percentile_plot, paper_figures_scores.rubric_means_plot])
def test_no_data_is_a_message_not_a_crash(draw):
    assert_valid(draw(pd.DataFrame(), "png"), "png")

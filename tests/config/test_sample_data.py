"""`make run`'s sample data loads through the real importers, audit and renderer, and is idempotent."""

import io

import pytest
from django.core.management import call_command

from agents.models import Artifact
from core.tables import table_frame
from corpus.models import Figure

pytestmark = [pytest.mark.django_db, pytest.mark.libreoffice]


def test_load_sample_data_twice(monkeypatch, tmp_path):
    monkeypatch.setenv("REFIG_PPTBENCH_SCORES", str(tmp_path / "absent.csv"))
    out = io.StringIO()
    call_command("load_sample_data", stdout=out)
    assert "6 figures, 24 artifacts of 4 configurations (23 rendered)" in out.getvalue()
    assert Figure.objects.count() == 6 and Artifact.objects.filter(gate_passed=True).count() == 23
    structural = table_frame("structural-audit").set_index("configuration")
    # Model 2 · direct pasted the source raster on figures 0 and 3: both capped.
    assert structural.loc["sample-m2-direct", "capped"] == 2
    # a study over the sample agents, the sample annotator assigned: /annotate/ works at once
    from annotation.models import Study

    study = Study.objects.get(name="sample")
    assert list(study.annotators.values_list("username", flat=True)) == ["annotator"]
    assert study.items.filter(in_pool=True).count() == 6 * 6  # 6 pairs of 4 configurations x 6 figures
    again = io.StringIO()
    call_command("load_sample_data", stdout=again)
    assert "already loaded" in again.getvalue() and Artifact.objects.count() == 24
    assert "sample study 'sample': already created" in again.getvalue() and Study.objects.count() == 1

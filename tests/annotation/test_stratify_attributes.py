"""A rating or gate-review study's stratified sample by any categorical figure attribute (here the orientation and the
licence), from the web and the command line: the strata keep the population's shares (largest remainder, by hand)."""

import io
import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.test import Client

from agents.models import Artifact
from annotation import selectors
from annotation.models import Study, StudyKind
from annotation.services import artifact_studies
from corpus.models import Figure
from tests.annotation.data import coordinator
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db

CONFIGS = ("cfg-one", "cfg-two")


def _corpus():
    """12 figures (9 landscape, 3 portrait; licences 6 / 6), each with an artifact of both configurations: 24
    artifacts, 18 / 6 by orientation and 12 / 12 by licence."""
    figures = [figure_create(f"task-{i:02d}", index=i) for i in range(12)]
    for i, figure in enumerate(figures):
        Figure.objects.filter(pk=figure.pk).update(
            orientation="portrait" if i >= 9 else "landscape", license="CC0-1.0" if i % 2 else "CC BY 4.0"
        )
    for position, slug in enumerate(CONFIGS):
        config = configuration_create(slug, model=f"model-{slug}", workflow="direct", position=position)
        for figure in figures:
            artifact_create(config, figure, gate_passed=True)


def _strata(name: str, path: str) -> Counter:
    ids = selectors.study_artifact_ids(study=Study.objects.get(name=name))
    return Counter(Artifact.objects.filter(pk__in=ids).values_list(path, flat=True))


def test_every_stratum_is_a_figure_attribute_or_the_configuration():
    assert set(artifact_studies.STRATA) == {"field", "orientation", "image_format", "license", "configuration"}


def test_stratified_by_orientation_from_the_command_line():
    _corpus()
    call_command(
        "study",
        "create",
        "by-orientation",
        "--kind",
        "rating",
        "--configurations",
        *CONFIGS,
        "--sample",
        "8",
        "--stratify",
        "orientation",
        stdout=io.StringIO(),
    )
    assert _strata("by-orientation", "figure__orientation") == {"landscape": 6, "portrait": 2}  # 8 x 18/24, 8 x 6/24


def test_stratified_by_licence_from_the_web():
    _corpus()
    client = Client(enforce_csrf_checks=True)
    client.force_login(coordinator())
    page = client.get("/coordinate/").content.decode()
    assert '<option value="license">' in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = {
        "csrfmiddlewaretoken": token,
        "action": "artifact-study",
        "name": "by-licence",
        "kind": StudyKind.GATE_REVIEW,
        "configurations": list(CONFIGS),
        "figure_sample": 5,
        "stratify": "license",
        "seed": 3,
    }
    assert client.post("/coordinate/", form).status_code == 302
    # 5 x 12/24 = 2.5 each: the remainder goes to one stratum, so 3 / 2 either way
    assert sorted(_strata("by-licence", "figure__license").values()) == [2, 3]

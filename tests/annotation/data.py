"""A small study: distinctive names so the blinding crawl can search for them."""

from __future__ import annotations

from core.services import user_create_with_role
from tests.factories import artifact_create, configuration_create, figure_create

PASSWORD = "pw-long-enough-1"
SLUGS = ("cfg-alpha-direct", "cfg-alpha-specialized", "cfg-bravo-direct", "cfg-charlie-direct")
MODELS = {
    "cfg-alpha-direct": "model-alphaone",
    "cfg-alpha-specialized": "model-alphaone",
    "cfg-bravo-direct": "model-bravotwo",
    "cfg-charlie-direct": "model-charliethree",
}


def build_corpus(*, figures: int = 6, configurations=SLUGS, failed: tuple[tuple[str, int], ...] = ()):
    """Figures task-fig-000N, one artifact per (configuration, figure); `failed` lists gate failures."""
    figs = [figure_create(f"task-fig-{i:04d}", index=i) for i in range(figures)]
    configs = []
    for position, slug in enumerate(configurations):
        workflow = "specialized" if slug.endswith("specialized") else "direct"
        configs.append(
            configuration_create(slug, model=MODELS.get(slug, f"model-{slug}"), workflow=workflow, position=position)
        )
    artifacts = []
    for c in configs:
        for i, f in enumerate(figs):
            artifacts.append(artifact_create(c, f, gate_passed=(c.slug, i) not in failed))
    return figs, configs, artifacts


def annotator(name: str = "ann-one"):
    user, _ = user_create_with_role(username=name, password=PASSWORD, role="annotator")
    return user


def coordinator(name: str = "coord-one"):
    user, _ = user_create_with_role(username=name, password=PASSWORD, role="coordinator")
    return user


def next_lease(*, study, annotator):
    """The lease item_next serves (None when nothing is served)."""
    from annotation import services

    served = services.item_next(study=study, annotator=annotator)
    return served.lease if served is not None else None


def submit_vote(**kwargs):
    """comparison_submit's stored vote."""
    from annotation import services

    return services.comparison_submit(**kwargs).comparison

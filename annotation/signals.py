"""Keep Study.links_version (part of the pool signature) in step with the configurations and figures linked to the
study: m2m_changed is sent by every related-manager change (services, the admin, a shell)."""

from django.db.models import F
from django.db.models.signals import m2m_changed

from .models import Study

LINK_CHANGES = ("post_add", "post_remove", "post_clear")


def _bump(study_ids) -> None:
    Study.objects.filter(pk__in=list(study_ids)).update(links_version=F("links_version") + 1)


def _links_changed(sender, instance, action, reverse, pk_set, **_kwargs) -> None:
    if action not in LINK_CHANGES:
        return
    if not reverse:
        _bump([instance.pk])
    elif action == "post_clear":
        # From the other side (configuration.studies.clear()): the studies it was in are not known any more.
        _bump(Study.objects.values_list("pk", flat=True))
    else:
        _bump(pk_set or ())


def connect() -> None:
    m2m_changed.connect(_links_changed, sender=Study.configurations.through, dispatch_uid="study-configurations")
    m2m_changed.connect(_links_changed, sender=Study.figures.through, dispatch_uid="study-figures")

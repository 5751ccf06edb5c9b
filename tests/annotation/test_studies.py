"""Studies: creation and its checks, figure choice, assignment and invitations (annotation/services/studies.py)."""

import pytest

from annotation import selectors, services
from annotation.models import Study
from core.errors import AppError
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import make_study, vote


def test_study_create_validates_configurations():
    build_corpus(figures=1)
    with pytest.raises(AppError, match="unknown configurations: nope"):
        services.study_create(name="s", configurations=["cfg-alpha-direct", "nope"])
    with pytest.raises(AppError, match="at least two"):
        services.study_create(name="s", configurations=["cfg-alpha-direct"])
    study = services.study_create(name="s", configurations=SLUGS, target_per_pair=7)
    assert [c.slug for c in selectors.study_configurations(study)] == list(SLUGS)
    with pytest.raises(AppError, match="exists already"):
        services.study_create(name="s", configurations=SLUGS)


def test_study_resolve():
    with pytest.raises(AppError, match="no study yet"):
        selectors.study_resolve(study=None)
    study, *_ = make_study()
    assert selectors.study_resolve(study=None) == study
    with pytest.raises(AppError, match="no study named 'x'"):
        selectors.study_resolve(study="x")
    Study.objects.create(name="second")
    with pytest.raises(AppError, match="several studies"):
        selectors.study_resolve(study=None)


def test_study_figures_by_task_ids_field_and_seeded_sample():
    from annotation.models import Study as StudyModel
    from tests.factories import figure_create

    build_corpus(figures=6)  # cs.CV figures task-fig-0000 .. 0005
    nlp = [figure_create(f"task-nlp-{i}", field="cs.CL", index=10 + i) for i in range(3)]
    assert services.study_figures_choose() is None  # nothing narrows: the study follows the corpus
    assert services.study_figures_choose(fields=["cs.CL"]) == sorted(f.task_id for f in nlp)
    assert services.study_figures_choose(task_ids=["task-fig-0001", "task-nlp-0"], fields=["cs.CL"]) == ["task-nlp-0"]
    with pytest.raises(AppError, match="unknown figures: task-nope"):
        services.study_figures_choose(task_ids=["task-fig-0001", "task-nope"])
    with pytest.raises(AppError, match=r"no figures in field\(s\): cs.RO"):
        services.study_figures_choose(fields=["cs.RO"])
    with pytest.raises(AppError, match="no figure matches"):
        services.study_figures_choose(task_ids=["task-fig-0001"], fields=["cs.CL"])

    pilot = services.study_create(
        name="pilot-cv", configurations=SLUGS, figure_fields=["cs.CV"], figure_sample=3, seed=5
    )
    chosen = set(pilot.figures.values_list("task_id", flat=True))
    assert len(chosen) == 3 and all(t.startswith("task-fig-") for t in chosen)
    # the pool holds exactly those figures: 6 pairs x 3 figures
    assert set(pilot.items.filter(in_pool=True).values_list("figure__task_id", flat=True)) == chosen
    assert pilot.items.filter(in_pool=True).count() == 6 * 3
    again = services.study_create(
        name="pilot-cv-again", configurations=SLUGS, figure_fields=["cs.CV"], figure_sample=3, seed=5
    )
    assert set(again.figures.values_list("task_id", flat=True)) == chosen
    whole = services.study_create(name="whole", configurations=SLUGS)
    assert (
        not whole.figures.exists() and whole.items.filter(in_pool=True).count() == 6 * 6
    )  # the NLP figures have no artifacts
    with pytest.raises(AppError, match="unknown figures"):
        services.study_create(name="bad", configurations=SLUGS, figures=["task-nope"])
    assert not StudyModel.objects.filter(name="bad").exists()


def test_invited_annotator_chooses_a_password_through_a_one_time_link():
    from django.test import Client

    from tests.annotation.data import coordinator

    study, *_ = make_study()
    coord = Client()
    coord.force_login(coordinator())
    response = coord.post(
        f"/coordinate/{study.name}/",
        {"action": "invite", "username": "new-annotator", "email": "n@example.org"},
        follow=True,
    )
    message = next(str(m) for m in response.context["messages"])
    assert "one-time link" in message
    link = message.split("password: ", 1)[1]
    assert link.startswith("http://testserver/accounts/set-password/")
    from django.contrib.auth import get_user_model

    invited = get_user_model().objects.get(username="new-annotator")
    assert not invited.has_usable_password() and study.annotators.filter(pk=invited.pk).exists()
    assert invited.groups.filter(name="annotator").exists()

    guest = Client()
    form_page = guest.get(link, follow=True)  # Django moves the token into the session and redirects
    assert (
        form_page.status_code == 200
        and b"Choose a password" in form_page.content
        and b"new-annotator" in form_page.content
    )
    done = guest.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a-long-pass-phrase-7", "new_password2": "a-long-pass-phrase-7"},
    )
    assert done.status_code == 302 and done["Location"] == "/accounts/set-password/done/"
    assert Client().login(username="new-annotator", password="a-long-pass-phrase-7")
    # the link is spent
    assert b"not valid any more" in Client().get(link, follow=True).content
    # an account that has a password is only assigned, no link
    existing = annotator("ann-existing")
    response = coord.post(
        f"/coordinate/{study.name}/", {"action": "invite", "username": existing.username}, follow=True
    )
    assert "already has an account" in next(str(m) for m in response.context["messages"])
    assert study.annotators.filter(pk=existing.pk).exists()
    bad = coord.post(f"/coordinate/{study.name}/", {"action": "invite", "username": "no spaces allowed!"}, follow=True)
    assert "Invite: username" in next(str(m) for m in bad.context["messages"])


def test_unassigned_annotator_loses_the_open_item_and_closed_studies_refuse_undo():
    from django.test import Client

    study, *_ = make_study()
    one, two = annotator("ann-one"), annotator("ann-two")
    services.study_annotators_set(study=study, users=[one, two])
    lease = next_lease(study=study, annotator=one)
    browser = Client()
    browser.force_login(one)
    assert browser.get(f"/annotate/img/{lease.token}/a").status_code == 200
    services.study_annotators_set(study=study, users=[two])
    lease.refresh_from_db()
    assert lease.state == "released"
    assert browser.get(f"/annotate/img/{lease.token}/a").status_code == 404
    with pytest.raises(services.LeaseClosed):
        submit_vote(token=lease.token, annotator=one, outcome="a", dwell_ms=5000)
    from annotation.models import Item

    assert Item.objects.get(pk=lease.item_id).open_count == 0  # back in the pool
    vote(study, two)
    services.study_status_set(study=study, status="closed")
    with pytest.raises(services.StudyUnavailable, match="closed"):
        services.comparison_undo(study=study, annotator=two)

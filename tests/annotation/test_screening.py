"""Corpus screening, a study kind of its own: the majority rule and the screeners' agreement (pure, by hand), the
screeners' decisions, skips and undo, the screening tables, seeding a study from the accepted figures, the command
line, and the coordinator's and annotator's pages and API. Known answers are computed by hand."""

import io
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation import screening, selectors, services
from annotation.errors import LeaseClosed, StudyUnavailable
from annotation.models import Item, ScreeningDecision, Study, StudyKind
from annotation.selectors.screening import screening_token
from annotation.services import screening as screening_services
from core.errors import Invalid, NotFound
from core.tables import TABLES, table_frame
from tests.annotation.data import SLUGS, annotator, build_corpus, coordinator

ROOT = Path(__file__).resolve().parent.parent.parent


# --- the rules (pure, no database) ------------------------------------------------------------------------------------
def test_majority_status_ties_are_undecided():
    assert screening.majority_status(2, 1) == "accepted"
    assert screening.majority_status(1, 2) == "rejected"
    assert screening.majority_status(1, 1) == "undecided"
    assert screening.majority_status(0, 0) == "undecided"


def test_summary_counts_each_candidate_in_order_by_hand():
    decisions = pd.DataFrame(
        [("f1", "a", True), ("f1", "b", True), ("f1", "c", False), ("f2", "a", True), ("f2", "b", False)],
        columns=screening.DECISION_COLUMNS,
    )
    summary = screening.screening_summary(decisions, ["f2", "f1", "f3"])
    assert summary.values.tolist() == [
        ["f2", 1, 1, "undecided"],  # a tie
        ["f1", 2, 1, "accepted"],
        ["f3", 0, 0, "undecided"],  # nobody decided yet
    ]


def test_kappa_and_agreement_by_hand():
    # a = T T T F F, b = T T F F T: p_o = 3/5; both accept 3 of 5, so p_e = .6·.6 + .4·.4 = .52; κ = .08 / .48 = 1/6
    a, b = [True, True, True, False, False], [True, True, False, False, True]
    assert screening.decisions_kappa(a, b) == pytest.approx(1 / 6)
    # always opposite: p_o = 0, p_e = 1·0 + 0·1 = 0, κ = 0; one same decision throughout: p_e = 1, κ undefined
    assert screening.decisions_kappa([True, True], [False, False]) == 0
    assert math.isnan(screening.decisions_kappa([True, True], [True, True]))
    assert math.isnan(screening.decisions_kappa([], []))
    rows = [(f"f{i}", "ann-a", x) for i, x in enumerate(a)] + [(f"f{i}", "ann-b", x) for i, x in enumerate(b)]
    rows.append(("f9", "ann-c", True))  # ann-c shares no figure with anyone: no row of theirs
    frame = screening.screening_agreement(pd.DataFrame(rows, columns=screening.DECISION_COLUMNS))
    assert frame.columns.tolist() == ["annotator_a", "annotator_b", "n", "agreement", "kappa"]
    assert frame[["annotator_a", "annotator_b", "n"]].values.tolist() == [["ann-a", "ann-b", 5]]
    assert frame.loc[0, "agreement"] == pytest.approx(0.6) and frame.loc[0, "kappa"] == pytest.approx(1 / 6)


# --- the services -----------------------------------------------------------------------------------------------------
def _screening(name="screen", figures=5, users=()):
    figs, _, _ = build_corpus(figures=figures, configurations=SLUGS[:2])
    study = services.study_create(
        name=name, kind=StudyKind.SCREENING, figures=[f.task_id for f in figs], annotators=list(users)
    )
    return study, figs


def _decide(study, figure, user, accepted, reason=""):
    token = screening_token(study=study, figure_id=figure.pk, user=user)
    if accepted is None:
        return screening_services.screening_skip(token=token, annotator=user, reason=reason)
    return screening_services.screening_decide(token=token, annotator=user, accepted=accepted, reason=reason)


@pytest.mark.django_db
def test_decide_skip_and_undo():
    worker, other = annotator("ann-screen"), annotator("ann-other")
    study, figs = _screening(figures=3, users=[worker])
    assert study.kind == StudyKind.SCREENING and study.configurations.count() == 0
    first = selectors.screening_next_figure(study=study, user=worker)
    token = screening_token(study=study, figure_id=first, user=worker)
    with pytest.raises(Invalid, match="a rejection needs a short reason"):
        screening_services.screening_decide(token=token, annotator=worker, accepted=False, reason="  ")
    screening_services.screening_decide(token=token, annotator=worker, accepted=True)  # a reason is optional
    with pytest.raises(LeaseClosed, match="already decided"):  # one per screener and figure
        screening_services.screening_decide(token=token, annotator=worker, accepted=False, reason="changed my mind")
    with pytest.raises(NotFound):  # a token is its screener's only
        screening_services.screening_decide(token=token, annotator=other, accepted=True)
    with pytest.raises(NotFound):
        screening_services.screening_decide(token=token + "x", annotator=worker, accepted=True)
    second = selectors.screening_next_figure(study=study, user=worker)
    assert second != first
    rejected = _decide(study, next(f for f in figs if f.pk == second), worker, False, "a photograph, not a diagram")
    third = selectors.screening_next_figure(study=study, user=worker)
    with pytest.raises(Invalid, match="why you skip"):
        _decide(study, next(f for f in figs if f.pk == third), worker, None, "")
    _decide(study, next(f for f in figs if f.pk == third), worker, None, "too blurry to judge")
    assert selectors.screening_next_figure(study=study, user=worker) is None
    assert selectors.screening_progress(study=study, user=worker) == {"done": 2, "skipped": 1, "total": 3, "left": 0}
    # undo deletes the last decision (the rejection; a skip is not a decision) and serves its figure again
    undone = screening_services.screening_undo(annotator=worker)
    assert (undone.study, undone.figure_id) == (study, second)
    assert undone.previous == {"decision": "reject", "reason": "a photograph, not a diagram"}
    assert not ScreeningDecision.objects.filter(pk=rejected.pk).exists()
    assert sorted(ScreeningDecision.objects.values_list("accepted", flat=True), key=str) == [None, True]
    assert selectors.screening_next_figure(study=study, user=worker) == second
    screening_services.screening_undo(annotator=worker)  # then the acceptance
    assert not ScreeningDecision.objects.filter(accepted__isnull=False).exists()
    with pytest.raises(LeaseClosed, match="nothing to undo"):
        screening_services.screening_undo(annotator=worker)
    # a closed study takes no decision and gives none back
    _decide(study, figs[0] if figs[0].pk != third else figs[1], worker, True)
    services.study_status_set(study=study, status=Study.Status.CLOSED)
    with pytest.raises(StudyUnavailable, match="closed"):
        screening_services.screening_undo(annotator=worker)
    with pytest.raises(NotFound):
        _decide(study, next(f for f in figs if f.pk == second), worker, True)


@pytest.mark.django_db
def test_screeners_are_served_fewest_decisions_first():
    a, b = annotator("ann-a"), annotator("ann-b")
    study, figs = _screening(figures=4, users=[a, b])
    for figure in figs[:3]:
        _decide(study, figure, a, True)
    # b has not seen any: the one figure nobody decided comes first
    assert selectors.screening_next_figure(study=study, user=b) == figs[3].pk


def _tie_study():
    """Three screeners on five candidates: f0 accepted 2–1, f1 a 1–1 tie, f2 rejected 0–2, f3 not decided, f4 accepted
    1–0 (and skipped by another screener: not a decision)."""
    a, b, c = annotator("ann-a"), annotator("ann-b"), annotator("ann-c")
    study, figs = _screening(figures=5, users=[a, b, c])
    for user, figure, accepted, reason in (
        (a, 0, True, ""),
        (b, 0, True, "clear overview"),
        (c, 0, False, "too small"),
        (a, 1, False, "a plot, not an overview"),
        (b, 1, True, ""),
        (a, 2, False, "duplicate of another paper's figure"),
        (b, 2, False, "no licence for reuse"),
        (b, 4, True, ""),
        (c, 4, None, "cannot tell"),
    ):
        _decide(study, figs[figure], user, accepted, reason)
    return study, figs


@pytest.mark.django_db
def test_majority_rule_with_a_tie_and_the_screening_tables():
    study, figs = _tie_study()
    assert {"screening-decisions", "screening-summary", "screening-agreement"} <= set(TABLES)
    summary = table_frame("screening-summary", study=study.name)
    assert summary.values.tolist() == [
        [figs[0].task_id, 2, 1, "accepted"],
        [figs[1].task_id, 1, 1, "undecided"],
        [figs[2].task_id, 0, 2, "rejected"],
        [figs[3].task_id, 0, 0, "undecided"],
        [figs[4].task_id, 1, 0, "accepted"],
    ]
    notes = " ".join(summary.attrs["notes"])
    assert "undecided on a tie" in notes and "skips are not decisions" in notes and "1 skips" in notes
    decisions = table_frame("screening-decisions", study=study.name)
    assert decisions.columns.tolist() == ["task_id", "annotator", "decision", "reason", "decided_at"]
    assert len(decisions) == 8  # the skip is not a decision
    rejected = decisions[decisions["decision"] == "reject"]
    assert sorted(rejected["reason"]) == [
        "a plot, not an overview",
        "duplicate of another paper's figure",
        "no licence for reuse",
        "too small",
    ]
    # a & b share f0 (T, T), f1 (F, T), f2 (F, F): p_o = 2/3; a accepts 1/3, b 2/3: p_e = 2/9 + 2/9 = 4/9;
    # κ = (2/3 − 4/9) / (5/9) = 0.4. a & c, b & c share f0 only, in opposite decisions: agreement 0, κ 0.
    agreement = table_frame("screening-agreement", study=study.name)
    assert agreement[["annotator_a", "annotator_b", "n"]].values.tolist() == [
        ["ann-a", "ann-b", 3],
        ["ann-a", "ann-c", 1],
        ["ann-b", "ann-c", 1],
    ]
    assert agreement["agreement"].tolist() == pytest.approx([2 / 3, 0, 0])
    assert agreement["kappa"].tolist() == pytest.approx([0.4, 0, 0])
    board = selectors.screening_dashboard(study=study)
    assert (board["accepted"], board["rejected"], board["undecided"], board["decided"], board["overlap"]) == (
        2,
        1,
        2,
        4,
        3,
    )


@pytest.mark.django_db
def test_a_pairwise_study_seeded_from_screening_gets_exactly_the_accepted_figures():
    study, figs = _tie_study()
    seeded = services.study_create(name="seeded", configurations=SLUGS[:2], from_screening=study.name)
    accepted = {figs[0].task_id, figs[4].task_id}
    assert set(seeded.figures.values_list("task_id", flat=True)) == accepted
    assert seeded.kind == StudyKind.PAIRWISE
    assert set(Item.objects.filter(study=seeded, in_pool=True).values_list("figure__task_id", flat=True)) == accepted
    with pytest.raises(Invalid, match="exactly its accepted figures"):
        services.study_create(name="x", configurations=SLUGS[:2], from_screening=study.name, figure_sample=1)
    fresh = services.study_create(name="fresh", kind=StudyKind.SCREENING)
    with pytest.raises(Invalid, match="no figure accepted by majority yet"):
        services.study_create(name="y", configurations=SLUGS[:2], from_screening=fresh.name)
    with pytest.raises(Invalid, match="is a pairwise study"):
        services.study_create(name="z", configurations=SLUGS[:2], from_screening="seeded")
    with pytest.raises(Invalid, match="takes no configurations"):
        services.study_create(name="w", kind=StudyKind.SCREENING, configurations=SLUGS[:1])
    with pytest.raises(Invalid, match="settings of pairwise studies only"):
        services.study_create(name="v", kind=StudyKind.SCREENING, target_per_pair=3)


# --- the command line -------------------------------------------------------------------------------------------------
def run(*args) -> str:
    out = io.StringIO()
    call_command("study", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_study_command_runs_a_screening_study_and_seeds_from_it():
    figs, _, _ = build_corpus(figures=4, configurations=SLUGS[:2])
    worker = annotator("ann-cli")
    created = run("create", "screen-cli", "--kind", "screening", "--sample", "3", "--seed", "5")
    assert "created screening study screen-cli: 3 candidate figures, seed 5" in created
    assert "next: manage.py study assign screen-cli USER..." in created
    with pytest.raises(CommandError, match="takes no configurations"):
        run("create", "screen-x", "--kind", "screening", "--configurations", SLUGS[0])
    assert run("assign", "screen-cli", "ann-cli") == "screen-cli: 1 annotator assigned\n"
    for status in ("paused", "active"):
        assert run("status", "screen-cli", status) == f"screen-cli is now {status}\n"
    study = Study.objects.get(name="screen-cli")
    chosen = [f for f in figs if f.pk in selectors.screening_candidates(study)]
    _decide(study, chosen[0], worker, True)
    _decide(study, chosen[1], worker, False, "not an overview")
    report = run("progress", "screen-cli")
    assert "still needed: 1 judgements (each assigned annotator on each of the 3 figures)" in report
    assert "ann-cli\tdone 2\tleft 1" in report
    row = next(line for line in run("list").splitlines() if line.startswith("screen-cli\t")).split("\t")
    assert row[4] == "2" and row[6] == "screening"
    seeded = run("create", "seeded-cli", "--configurations", *SLUGS[:2], "--from-screening", "screen-cli")
    assert "created study seeded-cli: 2 configurations, 1 figures accepted in screen-cli" in seeded
    assert list(Study.objects.get(name="seeded-cli").figures.values_list("task_id", flat=True)) == [chosen[0].task_id]
    with pytest.raises(CommandError, match="not allowed with argument"):
        run("create", "z", "--configurations", *SLUGS[:2], "--from-screening", "screen-cli", "--sample", "1")


# --- the pages and the API --------------------------------------------------------------------------------------------
def _csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _post(client, path: str, data: dict):
    page = client.get(path).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    return client.post(path, {**data, "csrfmiddlewaretoken": token})


@pytest.mark.django_db
def test_coordinator_creates_and_assigns_a_screening_study_annotator_screens_through_the_api():
    figs, _, _ = build_corpus(figures=4, configurations=SLUGS[:2])
    worker = annotator("ann-web")
    boss = _csrf_client(coordinator())
    assert 'id="screening-study-form"' in boss.get("/coordinate/").content.decode()
    form = {"action": "screening-study", "name": "web-screen", "figures": " ".join(f.task_id for f in figs[:3])}
    created = _post(boss, "/coordinate/", {**form, "seed": 2})
    assert created.status_code == 302 and created["Location"] == "/coordinate/web-screen/#assign"
    study = Study.objects.get(name="web-screen")
    assert study.kind == StudyKind.SCREENING and study.figures.count() == 3
    again = _post(boss, "/coordinate/", {**form, "seed": 2})  # a name taken: the form says so
    assert again.status_code == 200 and "exists already" in again.content.decode()
    dashboard = boss.get("/coordinate/web-screen/").content.decode()
    assert 'id="no-annotators"' in dashboard and 'id="still-needed">3</b>' in dashboard  # one screener on 3 figures
    assert (
        _post(boss, "/coordinate/web-screen/", {"action": "annotators", "annotators": [worker.pk]}).status_code == 302
    )
    assert list(study.annotators.all()) == [worker]

    client = Client()
    client.force_login(worker)
    own = "/annotate/screen/?study=web-screen"
    assert client.get("/annotate/web-screen/")["Location"] == own  # its own screen, by name
    assert client.get("/annotate/")["Location"] == own  # the annotator's only study
    screen = client.get(own).content.decode()
    assert 'data-screen="screening"' in screen and 'data-key="a"' in screen and 'data-key="r"' in screen

    def api(path, body=None):
        return client.post(f"/api/annotate/screen/{path}/", body or {}, content_type="application/json")

    decided = []
    for n, (decision, reason) in enumerate((("accept", ""), ("reject", "a table, not a figure"))):
        item = api("next").json()
        assert item["state"] == "item" and item["item"]["progress"] == {"position": n + 1, "total": 3, "done": n}
        shown = item["item"]["figure"]
        assert set(shown) == {"title", "caption", "field", "license", "license_url"} and shown["license"] == "CC BY 4.0"
        image = client.get(item["item"]["images"]["source"])
        assert image.status_code == 200 and image["Content-Type"] == "image/png"
        assert ".png" not in item["item"]["images"]["source"]  # no file name in the URL
        decided.append(shown["title"])
        assert api("decide", {"token": item["item"]["token"], "decision": decision, "reason": reason}).json() == {
            "stored": True
        }
    last = api("next").json()["item"]
    refused = api("decide", {"token": last["token"], "decision": "reject", "reason": ""})
    assert refused.status_code == 400 and "needs a short reason" in refused.json()["detail"]
    assert api("skip", {"token": last["token"], "reason": "unreadable"}).json() == {"skipped": True}
    done = api("next").json()
    assert done["state"] == "done" and done["summary"]["done"] == 2 and done["summary"]["skipped"] == 1
    undone = api("undo").json()  # the rejection comes back to change
    assert undone["previous"] == {"decision": "reject", "reason": "a table, not a figure"}
    assert undone["item"]["figure"]["title"] == decided[1]
    api("decide", {"token": undone["item"]["token"], "decision": "reject", "reason": "a table, not a figure"})
    # another screener cannot fetch the image
    stranger = Client()
    stranger.force_login(annotator("ann-stranger"))
    assert stranger.get(last["images"]["source"]).status_code == 404

    page = boss.get("/coordinate/web-screen/").content.decode()
    for card, value in (("accepted", "1"), ("rejected", "1"), ("undecided", "1"), ("decided", "2 / 3")):
        assert f'id="screening-{card}">{value}</b>' in page, card
    assert "a table, not a figure" in page and 'id="agreement"' in page and "screening-summary" in page
    assert "ann-web" in page and 'id="still-needed">0</b>' in page  # 2 decided and 1 set aside of 3
    listed = {s["name"]: s for s in selectors.annotator_study_list(user=worker)}
    assert (listed["web-screen"]["done"], listed["web-screen"]["quota"], listed["web-screen"]["left"]) == (2, 3, 0)

    # pausing hands out nothing new; seeding a pairwise study from the dashboard takes the one accepted figure
    _post(boss, "/coordinate/web-screen/", {"action": "status", "status": "paused"})
    assert api("next").json()["state"] == "paused"
    seeded = _post(
        boss,
        "/coordinate/web-screen/",
        {"action": "seed", "name": "web-seeded", "kind": "pairwise", "configurations": SLUGS[:2]},
    )
    assert seeded.status_code == 302 and seeded["Location"] == "/coordinate/web-seeded/#assign"
    accepted = table_frame("screening-summary", study="web-screen").query("status == 'accepted'")["task_id"].tolist()
    assert list(Study.objects.get(name="web-seeded").figures.values_list("task_id", flat=True)) == accepted
    csv = boss.get("/api/tables/screening-decisions/?format=csv&study=web-screen").content.decode()
    assert csv.splitlines()[0] == "task_id,annotator,decision,reason,decided_at" and "a table, not a figure" in csv


def test_the_screening_rules_are_pure():
    """annotation.screening imports no Django, DRF or Celery (as the import-linter contract's pure modules)."""
    code = "import sys, annotation.screening; print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework', 'celery'}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.django_db
def test_the_api_creates_a_screening_study_and_seeds_one_from_it_and_the_admin_only_shows_decisions():
    figs, _, _ = build_corpus(figures=4, configurations=SLUGS[:2])
    boss = Client()
    boss.force_login(coordinator())
    created = boss.post(
        "/api/studies/",
        {"name": "api-screen", "kind": "screening", "figures": [f.task_id for f in figs[:3]]},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["kind"] == "screening"
    study = Study.objects.get(name="api-screen")
    screener = annotator("api-screener")
    study.annotators.add(screener)
    for figure, accepted in zip(figs[:3], (True, True, False), strict=True):
        _decide(study, figure, screener, accepted, "" if accepted else "not an overview figure")
    seeded = boss.post(
        "/api/studies/",
        {"name": "api-seeded", "configurations": list(SLUGS[:2]), "from_screening": "api-screen"},
        content_type="application/json",
    )
    assert seeded.status_code == 201
    assert {f.task_id for f in Study.objects.get(name="api-seeded").figures.all()} == {f.task_id for f in figs[:2]}
    refused = boss.post("/api/studies/", {"name": "no-configs"}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid"  # a pairwise study needs them

    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("root-admin", password="x"))
    listing = staff.get("/admin/annotation/screeningdecision/")
    assert listing.status_code == 200 and "not an overview figure" in listing.content.decode()
    assert staff.get("/admin/annotation/screeningdecision/add/").status_code == 403
    decision = ScreeningDecision.objects.filter(accepted=False).get()
    change = staff.get(f"/admin/annotation/screeningdecision/{decision.pk}/change/").content.decode()
    assert 'name="reason"' not in change and 'name="accepted"' not in change  # shown, not editable


@pytest.mark.django_db
def test_import_screening_decisions_reads_the_decisions_table_back_into_a_study(tmp_path):
    study, figs = _tie_study()
    path = tmp_path / "decisions.csv"
    table_frame("screening-decisions", study=study.name).to_csv(path, index=False)
    with path.open("a") as handle:
        handle.write(f"{figs[3].task_id},ann-d,maybe,,\n")  # a bad row: named, the others kept
        handle.write(f"{figs[3].task_id},ann-d,skip,cannot read the labels,\n")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_screening_decisions", str(path), "--study", "screen-2", "--no-progress", stdout=out, stderr=err
    )
    assert f"{path}:10 decision: must be accept, reject, skip, got 'maybe'" in err.getvalue()
    assert "10 decisions: 9 imported, 0 already stored, 1 rejected" in out.getvalue()
    copy = table_frame("screening-summary", study="screen-2")
    assert copy.values.tolist() == table_frame("screening-summary", study=study.name).values.tolist()
    # The decisions table leaves the tie study's own skip out (not a decision): the copy has ann-d's only.
    assert "8 decisions by 3 screeners on 5 candidate figures; 1 skips" in " ".join(copy.attrs["notes"])
    again = io.StringIO()
    call_command("import_screening_decisions", str(path), "--study", "screen-2", "--no-progress", stdout=again)
    assert "9 already stored" in again.getvalue()

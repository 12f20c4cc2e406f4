"""A verify run's page, Agreement with gold (issue 32 item 8).

With a worker, the run page is read while the run is pending or running: it used to say
"No claim of this run has gold yet" while 48 of the project's claims had gold, because the
agreement was computed over the verdicts written so far and an empty pairing was read as "no
gold". It now says why there is no figure yet. Where a current report snapshot holds the run's
instrument, the page shows the report's agreement, interval and kappa, saying so; otherwise
the run's own figure with its method sentence.
"""

import datetime
import html as html_lib
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import Gold, LabelHistory, Role
from judges.models import JudgeRun, JudgeVerdict
from judges.runner import run_execute
from judges.services import judge_run_start
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    LabelFactory,
    MembershipFactory,
    UserFactory,
)
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db

OLD_SENTENCE = "No claim of this run has gold yet"
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
# 8 gold claims in 4 answers; the judge agrees with gold on the first 5 (5/8 = 62.5% → 63%).
GOLD = [S, S, C, S, N, S, C, S]
JUDGE = [S, S, C, S, N, N, S, C]


@pytest.fixture
def lead(client, project):
    user = UserFactory(username="runlead")
    MembershipFactory(project=project, user=user, role=Role.LEAD)
    client.login(username="runlead", password=PASSWORD)
    return user


def _text(html: str) -> str:
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip())


def _run_page(client, run) -> str:
    url = reverse("judges:run-detail", args=[run.project.slug, run.pk])
    response = client.get(url)
    assert response.status_code == 200
    return _text(response.content.decode())


def _gold(claims, verdict=S):
    for claim in claims:
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")


def test_a_run_not_yet_judged_by_its_worker_does_not_say_no_claim_has_gold(client, project, lead):
    judge = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    claims = make_claims(project, [f"Refunds are processed within {d} days." for d in range(6)])
    _gold(claims[:4])
    run = judge_run_start(judge=judge, scope="all", enqueue=False)  # a worker has it, not yet run
    page = _run_page(client, run)
    assert OLD_SENTENCE not in page
    assert (
        "The run has not judged a claim with gold yet (4 claims of the project have gold); "
        "the agreement shows as it judges them, and the page reloads when the run has finished."
    ) in page

    assert run_execute(run.pk, owner="worker") == "done"  # the worker's turn
    page = _run_page(client, run)
    assert "on 4 claims with gold" in page
    assert "This run's verdicts against gold on 4 claims that have both" in page


def test_a_finished_run_whose_claims_have_no_gold_says_the_gold_was_outside_its_scope(
    client, project, lead
):
    judge = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    claims = make_claims(project, ["Refunds are processed within 14 days."] * 3)
    first = judge_run_start(judge=judge, scope="all", enqueue=False)
    assert run_execute(first.pk, owner="w") == "done"
    _gold(claims[:2])
    extra = make_claims(project, ["Gift cards are not refundable."])
    second = judge_run_start(judge=judge, scope="unjudged", enqueue=False)
    assert run_execute(second.pk, owner="w") == "done"
    assert list(JudgeVerdict.objects.filter(run=second).values_list("claim", flat=True)) == [
        extra[0].pk
    ]
    page = _run_page(client, second)
    assert OLD_SENTENCE not in page
    assert (
        "2 claims of the project have gold, but this run judged none of them (its claims: "
        "unjudged). A run on all claims, or on the claims with gold, measures its agreement."
    ) in page


def test_a_project_without_gold_says_so(client, project, lead):
    judge = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    make_claims(project, ["Refunds are processed within 14 days."])
    run = judge_run_start(judge=judge, scope="all", enqueue=False)
    assert run_execute(run.pk, owner="w") == "done"
    assert "No claim of this project has gold yet" in _run_page(client, run)


def _eighths(project):
    """A finished run of judge m-1 · p-1 agreeing with gold on 5 of 8 claims."""
    judge = JudgeFactory(project=project, name="halfway", model="m-1")
    answers = [AnswerFactory(project=project) for _ in range(4)]
    run = JudgeRunFactory(
        judge=judge, model="m-1", prompt_version="p-1", finished_at=timezone.now()
    )
    for index, (gold, verdict) in enumerate(zip(GOLD, JUDGE, strict=True)):
        claim = ClaimFactory(answer=answers[index // 2])
        Gold.objects.create(claim=claim, verdict=gold, source="unanimous")
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=0.8)
    return judge, run


def _dashboard_figures(client, project, judge) -> tuple[str, str]:
    html = client.get(
        reverse("metrics:dashboard", args=[project.slug]), {"judge": judge.pk}
    ).content.decode()
    figure = re.search(r'data-figure="agreement"[^>]*>([^<]+)<', html).group(1).strip()
    interval = re.search(r'data-figure="agreement"[^>]*>[^<]+</td><td[^>]*>95% CI ([^<]+)<', html)
    return figure, interval.group(1).strip()


def test_the_run_page_shows_the_reports_figure_and_interval_when_a_current_snapshot_holds_it(
    client, project, lead
):
    judge, run = _eighths(project)
    snapshot = snapshot_create(project=project, judge=judge)
    snapshot = snapshot_compute(snapshot_id=snapshot.pk)
    block = snapshot.data["instruments"][0]
    assert (block["model"], block["prompt_version"], block["n_audited"]) == ("m-1", "p-1", 8)

    page = _run_page(client, run)
    stamp = timezone.localtime(snapshot.computed_at, datetime.UTC).strftime("%Y-%m-%d %H:%M")
    assert f"From the report of {stamp} UTC" in page
    assert "Overall agreement 63% on 8 claims with gold; 95% interval" in page
    figure, interval = _dashboard_figures(client, project, judge)
    assert figure == "63%"
    html = client.get(reverse("judges:run-detail", args=[project.slug, run.pk])).content.decode()
    shown = re.search(r'data-figure="run-agreement-ci">([^<]+)<', html).group(1)
    assert shown == interval
    # The interval is the report's, not the plain share's: both ends are shares, around 63%.
    low, high = (int(end) for end in re.findall(r"\d+", shown))
    assert low < 63 < high
    assert "The report's audit of halfway · m-1 · prompt p-1 on 8 claims with gold" in page


def test_the_run_page_falls_back_to_its_own_figure_when_the_report_is_not_current(
    client, project, lead
):
    judge, run = _eighths(project)
    snapshot = snapshot_create(project=project, judge=judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    claim = JudgeVerdict.objects.filter(run=run).first().claim
    LabelHistory.objects.create(claim=claim, annotator=lead, action="created", verdict=S)

    page = _run_page(client, run)
    assert "From the report of" not in page
    assert "Overall agreement 63% on 8 claims with gold" in page
    assert "95% interval" not in page
    assert "This run's verdicts against gold on 8 claims that have both" in page


def test_a_snapshot_computed_before_the_run_finished_is_not_its_figure(client, project, lead):
    judge, run = _eighths(project)
    snapshot = snapshot_create(project=project, judge=judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    JudgeRun.objects.filter(pk=run.pk).update(finished_at=timezone.now())
    run.refresh_from_db()
    page = _run_page(client, run)
    assert "From the report of" not in page
    assert "This run's verdicts against gold on 8 claims that have both" in page


def test_without_the_report_a_run_over_gold_drawn_by_the_active_queue_shows_no_plain_share(
    client, project, lead
):
    """Gold drawn by the active queue stands for unequal numbers of claims: 63% (5 of 8 as
    drawn) is not the project's agreement, so the page does not show it as one."""
    judge, run = _eighths(project)
    claim = JudgeVerdict.objects.filter(run=run).first().claim
    LabelFactory(claim=claim, annotator=lead, verdict=S, design="active")

    page = _run_page(client, run)
    assert "Overall agreement 63%" not in page
    assert "Overall agreement — on 8 claims with gold" in page
    assert "a plain share of them is not the project's agreement" in page
    html = client.get(reverse("judges:run-detail", args=[project.slug, run.pk])).content.decode()
    assert "Below 80% agreement" not in html  # no verdict drawn from a figure not shown
    counts = re.findall(r'<td class="num">(\d+)</td>', html)
    assert sum(int(c) for c in counts) == 8  # the table still counts the claims as drawn

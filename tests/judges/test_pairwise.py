"""Pairwise judging of two systems against the loopback endpoint (tests/llm_server.py), every
pair asked in both orders; the compare report's `pairwise` block.

The endpoint's `script` plants a judge: in each call it answers FIRST with a planted
probability whatever the answers say (a position bias), else on content. The script's RNG is
seeded from a fixed seed and the call's own content (question and which answer comes first),
so the draws do not depend on the order concurrent calls arrive in.

Hand derivations (pf = P(answer FIRST regardless of content), c = P(prefer B's answer | the
judge reads the content)):
- P(first | B first) = pf + (1 − pf)·c, P(first | A first) = pf + (1 − pf)·(1 − c);
- first-position share = the mean of the two = pf + (1 − pf)/2;
- order-averaged P(B preferred) = ½[P(first | B first) + 1 − P(first | A first)]
  = ½ + (1 − pf)·(c − ½);
- asked only with A first, P(B preferred) = 1 − P(first | A first).
Equal answers: a judge that picks FIRST with probability 0.7 (pf = 0.4, c = ½ gives the same
0.7) → share 0.7, order-averaged 0.5, A-first-only 0.3. B truly better: pf = 0.4, c = 0.9 →
share 0.7, order-averaged 0.74.
The reported intervals are checked against scipy's t interval computed from what the script
itself answered (recorded per call), not from the product's numbers.
"""

import io
import logging
import random
import threading
import zlib

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from scipy import stats

from annotate.models import Answer, Passage, Project, System
from judges.models import JudgeRun, PairwiseVerdict
from judges.services import pairwise_run_start
from metrics.services.compare import systems_compare
from tests.factories import PASSWORD
from tests.judges.conftest import PILE

pytestmark = pytest.mark.django_db

N_QUESTIONS = 150
SEED = 20261201
KEY = "sk-test-Pw9rT2yUq81ZxM0n"


def _systems(project, n=N_QUESTIONS):
    """Systems rag@1 (A) and rag@2 (B), each answering the same `n` questions, every answer
    with a one-passage pile (bulk-created: 2n answers in two queries)."""
    a = System.objects.create(project=project, name="rag", version="1")
    b = System.objects.create(project=project, name="rag", version="2")
    answers = Answer.objects.bulk_create(
        Answer(
            project=project,
            external_id=f"{system.version}:{i}",
            position=2 * i + k,
            system=system,
            question_id=f"q{i:03d}",
            question=f"How long do refunds take, case {i}?",
            text=f"Answer of system {system.version} to case {i}: refunds take 14 days.",
        )
        for i in range(n)
        for k, system in enumerate((a, b))
    )
    Passage.objects.bulk_create(Passage(answer=answer, rank=1, text=PILE) for answer in answers)
    Project.objects.filter(pk=project.pk).update(answers_count=len(answers))
    return a, b


class Planted:
    """The script: FIRST with probability `pf` regardless of content, else B's answer with
    probability `c`. Records what it answered per (question, order)."""

    def __init__(self, pf: float, c: float):
        self.pf, self.c = pf, c
        self.answered: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def __call__(self, question, answers):
        first, _second = answers
        order = "b_first" if first.startswith("Answer of system 2") else "a_first"
        rng = random.Random(SEED ^ zlib.crc32(f"{question}|{order}".encode()))
        if rng.random() < self.pf:
            reply = "FIRST"
        else:
            b_wins = rng.random() < self.c
            reply = "FIRST" if b_wins == (order == "b_first") else "SECOND"
        with self._lock:
            self.answered[(question, order)] = reply
        return reply

    def expected(self):
        """Per pair: (first share f_i, B preference p_i, B preference if A first) from what was
        answered, and scipy t intervals over pairs."""
        questions = sorted({q for q, _ in self.answered})
        first_b = np.array([self.answered[(q, "b_first")] == "FIRST" for q in questions], float)
        first_a = np.array([self.answered[(q, "a_first")] == "FIRST" for q in questions], float)

        def t_interval(x):
            half = stats.t.ppf(0.975, x.size - 1) * stats.sem(x)
            return x.mean(), (x.mean() - half, x.mean() + half)

        return {
            "share": t_interval((first_b + first_a) / 2),
            "preference": t_interval((first_b + 1 - first_a) / 2),
            "a_first_only": t_interval(1 - first_a),
        }


@pytest.fixture
def pair_judge(project, openai_judge):
    a, b = _systems(project)
    return openai_judge, a, b


N_SMALL = 40  # where the figures' precision is not the point


@pytest.fixture
def small(project, openai_judge):
    a, b = _systems(project, n=N_SMALL)
    return openai_judge, a, b


def _run(judge, a, b, capture):
    with capture(execute=True):
        run = pairwise_run_start(judge=judge, a=a, b=b)
    run.refresh_from_db()
    return run


def _close(value, expected):
    assert value == pytest.approx(expected, abs=1e-9)


def test_equal_answers_first_position_70_percent(
    pair_judge, project, llm, django_capture_on_commit_callbacks
):
    judge, a, b = pair_judge
    _, ctl = llm
    script = Planted(pf=0.4, c=0.5)  # P(FIRST) = 0.4 + 0.6·0.5 = 0.7 in every call
    ctl.script = script
    run = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert (run.status, run.total, run.done, run.unparseable, run.failed) == (
        "done",
        2 * N_QUESTIONS,
        2 * N_QUESTIONS,
        0,
        0,
    )
    # Every pair went over HTTP twice, once in each order.
    pairwise_calls = [c for c in ctl.log if c.kind == "pairwise"]
    assert len(pairwise_calls) == 2 * N_QUESTIONS
    assert len(script.answered) == 2 * N_QUESTIONS
    assert run.prompt_tokens > 0

    pw = systems_compare(project=project, a=a, b=b)["pairwise"]
    expected = script.expected()
    assert pw["n_pairs"] == N_QUESTIONS
    assert pw["unparseable"] == 0
    share = pw["first_position_share"]
    _close(share["value"], expected["share"][0])
    _close(share["ci"][0], expected["share"][1][0])
    _close(share["ci"][1], expected["share"][1][1])
    _close(pw["position_bias"]["value"], expected["share"][0] - 0.5)
    # The planted 0.7 is inside the reported interval, which is narrower than ±0.1.
    assert share["ci"][0] <= 0.7 <= share["ci"][1]
    assert share["ci"][1] - share["ci"][0] < 0.2
    # Averaged over both orders, no preference: the interval covers 0.5 ...
    preference = pw["preference_b"]
    _close(preference["value"], expected["preference"][0])
    _close(preference["ci"][0], expected["preference"][1][0])
    assert preference["ci"][0] <= 0.5 <= preference["ci"][1]
    # ... while asking only with A first reads the bias as a preference for A.
    single = pw["single_order"]["a_first"]
    _close(single["value"], expected["a_first_only"][0])
    _close(single["ci"][1], expected["a_first_only"][1][1])
    assert single["ci"][1] < 0.5
    assert "position bias = share of first-position wins" in pw["method"]
    assert pw["finding"].startswith(
        f"The judge {judge.name} prefers whichever answer comes first in "
        f"{100 * share['value']:.0f}% [{100 * share['ci'][0]:.0f}, {100 * share['ci'][1]:.0f}]"
    )


def test_b_truly_better_with_a_first_position_bias(
    pair_judge, project, llm, django_capture_on_commit_callbacks
):
    judge, a, b = pair_judge
    _, ctl = llm
    script = Planted(pf=0.4, c=0.9)
    ctl.script = script
    run = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert run.status == "done"
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]
    expected = script.expected()
    share, preference = pw["first_position_share"], pw["preference_b"]
    _close(share["value"], expected["share"][0])
    assert share["ci"][0] <= 0.7 <= share["ci"][1]
    assert share["ci"][1] - share["ci"][0] < 0.2
    _close(preference["value"], expected["preference"][0])
    _close(preference["ci"][1], expected["preference"][1][1])
    planted = 0.5 + 0.6 * (0.9 - 0.5)  # 0.74
    assert preference["ci"][0] <= planted <= preference["ci"][1]
    assert preference["ci"][0] > 0.5  # B is preferred
    # Asked only with B first, the bias would be added to B's real advantage (0.94 expected).
    assert pw["single_order"]["b_first"]["ci"][0] > preference["ci"][1]


def test_compare_in_the_other_orientation_swaps_the_orders(
    small, project, llm, django_capture_on_commit_callbacks
):
    judge, a, b = small
    _, ctl = llm
    ctl.script = Planted(pf=0.4, c=0.9)
    _run(judge, a, b, django_capture_on_commit_callbacks)
    forward = systems_compare(project=project, a=a, b=b)["pairwise"]
    backward = systems_compare(project=project, a=b, b=a)["pairwise"]
    _close(backward["preference_b"]["value"], 1 - forward["preference_b"]["value"])
    _close(backward["position_bias"]["value"], forward["position_bias"]["value"])


def test_rerun_asks_only_for_what_is_not_stored(small, llm, django_capture_on_commit_callbacks):
    judge, a, b = small
    _, ctl = llm
    judge.max_retries = 0
    judge.save()
    ctl.script = Planted(pf=0.4, c=0.5)
    broken = "How long do refunds take, case 7?"
    ctl.fail("500", claim=broken, times=2)  # both orders of one pair fail once
    first = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert (first.status, first.done, first.failed) == ("done", 2 * N_SMALL - 2, 2)
    calls = ctl.total_calls
    again = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert again.pk == first.pk
    assert ctl.total_calls == calls + 2  # only the two failed items were asked again
    assert (again.done, again.failed) == (2 * N_SMALL, 0)
    third = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert ctl.total_calls == calls + 2  # nothing left to ask
    assert third.done == 2 * N_SMALL
    assert PairwiseVerdict.objects.filter(run=first).count() == 2 * N_SMALL


@pytest.fixture
def few(project, openai_judge):
    a, b = _systems(project, n=3)
    return openai_judge, a, b


def test_429_then_success_is_retried(few, llm, django_capture_on_commit_callbacks, caplog):
    judge, a, b = few
    _, ctl = llm
    question = "How long do refunds take, case 1?"
    ctl.fail("429", claim=question, retry_after=0.05)
    caplog.set_level(logging.INFO)
    run = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert (run.status, run.done, run.failed) == ("done", 6, 0)
    statuses = [status for _, status in ctl.times_for(question)]
    assert sorted(statuses) == [200, 200, 429]
    assert "retry 1/" in caplog.text
    # No script: the loopback server answers TIE.
    assert set(PairwiseVerdict.objects.values_list("verdict", flat=True)) == {"tie"}


def test_garbage_reply_is_unparseable_with_its_reason(
    few, project, llm, django_capture_on_commit_callbacks
):
    judge, a, b = few
    _, ctl = llm
    question = "How long do refunds take, case 2?"
    ctl.fail("garbage", claim=question, text="Both answers look fine to me, honestly.")
    run = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert (run.status, run.done, run.unparseable) == ("done", 5, 1)
    bad = PairwiseVerdict.objects.get(verdict="UNPARSEABLE")
    assert bad.question_id == "q002"
    assert bad.reason == "the reply is not one of FIRST, SECOND or TIE"
    assert bad.raw_response == "Both answers look fine to me, honestly."
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]
    # The pair with an unparseable order is left out, and counted.
    assert (pw["n_pairs"], pw["incomplete_pairs"], pw["unparseable"]) == (2, 1, 1)
    assert "1 unparseable reply counted apart" in pw["method"]


def test_401_fails_the_run_without_leaking_the_key(
    few, llm, llm_endpoints, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    judge, a, b = few
    base_url, ctl = llm
    monkeypatch.setenv("FA_PAIRWISE_KEY", KEY)
    llm_endpoints({"name": "loopback", "base_url": base_url, "api_key_env": "FA_PAIRWISE_KEY"})
    ctl.fail("401", times=None)  # its message quotes the Authorization header
    caplog.set_level(logging.DEBUG)
    run = _run(judge, a, b, django_capture_on_commit_callbacks)
    assert run.status == "failed"
    assert (
        run.error == "the endpoint refused the key: HTTP 401 Unauthorized (invalid_request_error)"
    )
    assert {c.authorization for c in ctl.log} == {f"Bearer {KEY}"}
    stored = "\n".join(
        repr(row) for model in (JudgeRun, PairwiseVerdict) for row in model.objects.values()
    )
    for text in (stored, caplog.text):
        assert KEY not in text
        assert KEY[8:] not in text
    assert not PairwiseVerdict.objects.exists()


def test_bad_requests_are_refused_naming_the_field(few, project):
    from django.core.exceptions import ValidationError

    judge, a, _ = few
    with pytest.raises(ValidationError) as same:
        pairwise_run_start(judge=judge, a=a, b=a)
    assert "system" in same.value.message_dict
    judge.backend = "baseline"
    judge.save()
    with pytest.raises(ValidationError) as baseline:
        pairwise_run_start(judge=judge, a=a, b=_)
    assert "backend" in baseline.value.message_dict
    judge.backend = "openai"
    judge.save()
    other = System.objects.create(project=project, name="other")
    with pytest.raises(ValidationError) as nothing_shared:
        pairwise_run_start(judge=judge, a=a, b=other)
    assert "answered no question in common" in nothing_shared.value.message_dict["system"][0]
    assert not JudgeRun.objects.exists()


def test_command_runs_the_job_and_names_bad_arguments(few, project, llm):
    judge, a, b = few
    _, ctl = llm
    ctl.script = lambda question, answers: "SECOND"
    out = io.StringIO()
    call_command(
        "pairwise_judge",
        project.slug,
        "--a",
        "rag@1",
        "--b",
        "rag@2",
        "--judge",
        judge.name,
        stdout=out,
    )
    assert "6/6 asked — done 6" in out.getvalue()
    assert set(PairwiseVerdict.objects.values_list("verdict", flat=True)) == {"second"}
    # compare's text output carries the pairwise finding. Always SECOND: the first position
    # never wins (0%), and each system wins the order where it comes second, so B 50%.
    text = io.StringIO()
    call_command(
        "compare",
        "--project",
        project.slug,
        "--a",
        "rag@1",
        "--b",
        "rag@2",
        "--format",
        "text",
        stdout=text,
    )
    assert "Pairwise judge, both orders:" in text.getvalue()
    assert "comes first in 0% " in text.getvalue()
    assert "is preferred to rag@1 (A) in 50% [50, 50] of 3 pairs" in text.getvalue()
    with pytest.raises(CommandError, match="--a 'rag' names several versions"):
        call_command(
            "pairwise_judge",
            project.slug,
            "--a",
            "rag",
            "--b",
            "rag@2",
            "--judge",
            judge.name,
            stdout=io.StringIO(),
        )
    with pytest.raises(CommandError, match="--judge: no judge named 'nobody'"):
        call_command(
            "pairwise_judge",
            project.slug,
            "--a",
            "rag@1",
            "--b",
            "rag@2",
            "--judge",
            "nobody",
            stdout=io.StringIO(),
        )


def test_compare_page_shows_the_pairwise_block(
    client, lead, small, project, llm, django_capture_on_commit_callbacks
):
    judge, a, b = small
    _, ctl = llm
    ctl.script = Planted(pf=0.4, c=0.5)
    _run(judge, a, b, django_capture_on_commit_callbacks)
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("metrics:compare", args=[project.slug]), {"a": a.pk, "b": b.pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert "Pairwise judge, both orders" in html
    share = f"{100 * pw['first_position_share']['value']:.0f}"
    preferred = f"{100 * pw['preference_b']['value']:.0f}"
    assert f"prefers whichever answer comes first in {share}%" in html
    assert f"rag@2 (B) is preferred to rag@1 (A) in {preferred}%" in html
    assert f"{N_SMALL} pairs judged in both orders" in html
    # The run's own page shows its progress, as any run's.
    run = PairwiseVerdict.objects.first().run
    detail = client.get(reverse("judges:run-detail", args=[project.slug, run.pk]))
    assert detail.status_code == 200
    assert f"{2 * N_SMALL}" in detail.content.decode()


@pytest.mark.worker
def test_a_real_worker_runs_the_registered_pairwise_task(llm_endpoints, celery_worker):
    """Through Redis to a worker process: the task is registered as judges.tasks.run_pairwise
    and the run it executes stores both orders of every pair."""
    import time

    from config.celery import app
    from tests.factories import JudgeFactory, ProjectFactory
    from tests.llm_server import start_server

    assert "judges.tasks.run_pairwise" in app.tasks
    base_url, ctl = start_server()
    llm_endpoints(loopback=base_url)
    try:
        project = ProjectFactory()
        a, b = _systems(project, n=10)
        judge = JudgeFactory(
            project=project,
            backend="openai",
            model="loopback",
            endpoint="loopback",
            max_concurrency=2,
            timeout_seconds=5,
            max_retries=1,
            verify_prompt="",
        )
        run = pairwise_run_start(judge=judge, a=a, b=b)  # committed at once
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status not in ("pending", "running"):
                break
            time.sleep(0.2)
        assert (run.status, run.done, run.total) == ("done", 20, 20)
        assert sum(1 for c in ctl.log if c.kind == "pairwise") == 20
    finally:
        ctl.stop()

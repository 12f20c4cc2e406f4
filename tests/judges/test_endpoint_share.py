"""One endpoint's cap shared by the runs calling it at once (judges/endpoint_share.py): the
split by hand, the live runs it counts, and what a real loopback endpoint sees in flight when
two runs call it together, or when the other run ends midway."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from judges.endpoint_share import endpoint_share, shares_split
from judges.endpoints import endpoint_get
from judges.models import JudgeRun, JudgeVerdict
from judges.runner import run_execute
from judges.services import judge_run_start
from tests.factories import JudgeFactory
from tests.judges.conftest import make_claims
from tests.llm_server import start_server


@pytest.mark.parametrize(
    ("cap", "wishes", "expected"),
    [
        (8, [8, 8], [4, 4]),  # even halves
        (8, [2, 8], [2, 6]),  # the modest run keeps 2, the other takes the rest
        (8, [8, 8, 8], [3, 3, 2]),  # level 2 (6 calls), the 2 left to the oldest runs
        (7, [1, 5, 5], [1, 3, 3]),  # level 3: 1 + 3 + 3 = 7
        (10, [3, 3], [3, 3]),  # under the cap: each as asked
        (2, [4, 4, 4], [1, 1, 1]),  # more runs than calls: one each (the cap passed, said so)
    ],
)
def test_the_split_of_a_cap_by_hand(cap, wishes, expected):
    assert shares_split(cap, wishes) == expected


def _capped(llm_endpoints, base_url: str, cap: int, *others: dict):
    llm_endpoints({"name": "capped", "base_url": base_url, "max_concurrency": cap}, *others)
    return endpoint_get("capped")


def _judge(project, concurrency: int = 4):
    return JudgeFactory(
        project=project,
        backend="openai",
        model="loopback",
        endpoint="capped",
        max_concurrency=concurrency,
        timeout_seconds=5.0,
        max_retries=1,
        verify_prompt="",
    )


def _running(run: JudgeRun, owner: str, *, heartbeat=None) -> None:
    """`run` as a worker holding its lease has it: RUNNING, heartbeat fresh (or `heartbeat`)."""
    JudgeRun.objects.filter(pk=run.pk).update(
        status=JudgeRun.Status.RUNNING,
        lease_owner=owner,
        heartbeat_at=heartbeat or timezone.now(),
    )
    run.refresh_from_db()


@pytest.mark.django_db
def test_the_share_counts_live_runs_of_the_endpoint_only(project, llm_endpoints):
    elsewhere_declared = {"name": "elsewhere", "base_url": "http://127.0.0.1:9/v1"}
    endpoint = _capped(llm_endpoints, "http://127.0.0.1:9/v1", 4, elsewhere_declared)
    make_claims(project, ["Refunds are processed within 14 days"])
    first = judge_run_start(judge=_judge(project), enqueue=False)
    second = judge_run_start(judge=_judge(project), enqueue=False)
    other = _judge(project)
    other.endpoint = "elsewhere"
    other.save()
    elsewhere = judge_run_start(judge=other, enqueue=False)
    for run, owner in ((first, "a"), (second, "b"), (elsewhere, "c")):
        _running(run, owner)
    assert endpoint_share(first, endpoint, lease_seconds=60) == 2
    assert endpoint_share(second, endpoint, lease_seconds=60) == 2
    _running(second, "b", heartbeat=timezone.now() - timedelta(seconds=120))  # its worker died
    assert endpoint_share(first, endpoint, lease_seconds=60) == 4
    _running(second, "b")
    JudgeRun.objects.filter(pk=second.pk).update(status=JudgeRun.Status.DONE)  # it ended
    assert endpoint_share(first, endpoint, lease_seconds=60) == 4


def _execute(run_id: int, owner: str, outcomes: dict) -> None:
    try:
        outcomes[owner] = run_execute(run_id, owner=owner)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_two_runs_on_one_endpoint_keep_its_cap_between_them(project, llm_endpoints):
    """Two runs asking for 4 calls each on an endpoint capped at 4, run at once in two
    threads: the endpoint never answers more than 4 at a time (it answered 8 before the cap
    was shared), and both runs finish with every verdict."""
    base_url, ctl = start_server(latency_s=0.05)
    try:
        _capped(llm_endpoints, base_url, 4)
        texts = [f"Refunds are processed within {days} days" for days in range(40)]
        make_claims(project, texts)
        runs = [judge_run_start(judge=_judge(project), enqueue=False) for _ in range(2)]
        for run, owner in zip(runs, ("w1", "w2"), strict=True):
            _running(run, owner)  # both taken by their workers before either calls
        outcomes: dict = {}
        threads = [
            threading.Thread(target=_execute, args=(run.pk, owner, outcomes))
            for run, owner in zip(runs, ("w1", "w2"), strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert outcomes == {"w1": "done", "w2": "done"}
        assert ctl.max_in_flight <= 4
        assert ctl.max_in_flight > 2, "the two runs did not overlap: the test shows nothing"
        for run in runs:
            assert JudgeVerdict.objects.filter(run=run).count() == 40
    finally:
        ctl.stop()


@pytest.mark.django_db(transaction=True)
def test_a_run_takes_the_whole_cap_once_the_other_run_is_gone(project, llm_endpoints, monkeypatch):
    """A run sharing the endpoint with another live run keeps 2 of the 4 calls in flight; once
    that run's heartbeat goes stale (its worker died), the next chunk it writes takes all 4."""
    monkeypatch.setenv("JUDGE_RUN_LEASE_SECONDS", "3")
    base_url, ctl = start_server(latency_s=0.05)
    try:
        _capped(llm_endpoints, base_url, 4)
        make_claims(project, [f"Refunds are processed within {days} days" for days in range(80)])
        ghost = judge_run_start(judge=_judge(project), enqueue=False)
        # Its last heartbeat 2 s ago: it counts for about 1 s more (lease 3 s).
        _running(ghost, "dead", heartbeat=timezone.now() - timedelta(seconds=2))
        run = judge_run_start(judge=_judge(project), enqueue=False)
        assert run_execute(run.pk, owner="alive") == "done"
        seen = ctl.in_flight_seen
        assert max(seen[:8]) <= 2, seen[:8]  # the ghost still live: half the cap
        assert max(seen) == 4, "the run never took the cap back"
        assert JudgeVerdict.objects.filter(run=run).count() == 80
    finally:
        ctl.stop()

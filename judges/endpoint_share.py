"""One endpoint's cap shared by every run calling it at once, whichever worker runs them.

An endpoint's `max_concurrency` (judges/endpoints.py) is the operator's limit on calls in
flight to it. A run keeps its own number of calls in flight (`judges.runner`), so without a
share two runs on one endpoint kept twice the cap in flight; scaling out with more Celery
workers made it worse. Each run now takes its share of the cap among the endpoint's live runs
(status RUNNING, heartbeat fresh), and takes it again at each chunk it writes: when a run
starts or ends the others follow within one chunk.

The share is water-filling over the runs' own wishes (the run's, or its judge's,
`max_concurrency`, capped by the endpoint's): every run gets the same level, a run that asked
for less keeps what it asked for and leaves the rest to the others, and the last units of the
cap go to the oldest runs. The shares then add up to the cap exactly, or to less when every
run has what it asked for. Every run computes the same split from the same rows, so no two
runs chase each other's numbers. A run never gets less than one call, so with more live runs
than the cap's calls each still makes one at a time: the only case where the cap is passed
(docs/SCALE.md). A pairwise run takes its share when it starts, not again.

Why by hand: the split is a dozen lines, and no kept library has one; a lock server or a
token bucket in Redis would bound the calls as tightly but add a round trip to every call.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from judges.models import JudgeRun


def shares_split(cap: int, wishes: list[int]) -> list[int]:
    """`cap` calls split among runs wishing for `wishes` calls (oldest run first): each run's
    share, at least 1, at most its wish."""
    wishes = [max(1, wish) for wish in wishes]
    if sum(wishes) <= cap:
        return wishes
    level = 0
    # The highest level L with sum(min(wish, L)) <= cap.
    while sum(min(wish, level + 1) for wish in wishes) <= cap:
        level += 1
    shares = [min(wish, level) for wish in wishes]
    left = cap - sum(shares)
    for index, wish in enumerate(wishes):
        if left <= 0:
            break
        if wish > shares[index]:
            shares[index] += 1
            left -= 1
    return [max(1, share) for share in shares]


def run_wish(run: JudgeRun, cap: int | None = None) -> int:
    """The calls in flight `run` asks for (its frozen parameters, else its judge's), within
    the endpoint's `cap` when there is one."""
    wish = max(1, int((run.parameters or {}).get("max_concurrency") or run.judge.max_concurrency))
    return wish if cap is None else min(wish, cap)


def endpoint_share(run: JudgeRun, endpoint, *, lease_seconds: float) -> int:
    """`run`'s share of `endpoint.max_concurrency` among the runs calling that endpoint now
    (itself counted, whatever its heartbeat): at most its wish (`run_wish`)."""
    cap = endpoint.max_concurrency
    fresh = timezone.now() - timedelta(seconds=lease_seconds)
    live = list(
        JudgeRun.objects.select_related("judge")
        .filter(
            status=JudgeRun.Status.RUNNING,
            heartbeat_at__gte=fresh,
            parameters__endpoint=endpoint.name,
        )
        .exclude(pk=run.pk)
        .only("pk", "parameters", "judge__max_concurrency")
    )
    runs = sorted([*live, run], key=lambda each: each.pk)
    shares = shares_split(cap, [run_wish(each, cap) for each in runs])
    return shares[[each.pk for each in runs].index(run.pk)]

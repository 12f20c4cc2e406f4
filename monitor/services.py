"""A monitored stream's writes and its evaluation: select → arrays → monitor.stats → alerts.

Sampling (Poisson, issue 29): each claim the stream sees is drawn to the analysts' queue with
the stream's π in force, stored on its SampledClaim and on the claim (`inclusion_probability`,
which every weighted estimate reads); a claim not drawn is routed to the judge (the queue
leaves it out). A day enters the figures once every claim drawn on it has gold, so the
weighting is never applied to a half-labelled sample.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from dataclasses import dataclass

import numpy as np
from celery import current_app
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Claim
from annotate.vocabulary import Verdict
from judges.models import JudgeVerdict
from judges.services import judge_run_start

from .models import Alert, MonitoredStream, SampledClaim
from .stats import Days, Sequence, betting_cs, days_group, edetector, ipw_values, ppi_values
from .webhooks import webhooks_declared


def task(name: str):
    """A task of monitor/tasks.py by its registered name (services never import tasks)."""
    return current_app.tasks[f"monitor.tasks.{name}"]


@transaction.atomic
def stream_rate_set(*, stream: MonitoredStream, rate: float, at: dt.datetime | None = None):
    if not 0 < rate <= 1:
        raise ValueError(f"sampling_rate: {rate} is not in (0, 1]")
    stream.sampling_rate = rate
    stream.rate_history = [*stream.rate_history, [(at or timezone.now()).isoformat(), rate]]
    stream.save(update_fields=["sampling_rate", "rate_history"])


@transaction.atomic
def claims_sample(
    *,
    stream: MonitoredStream,
    claim_ids: list[int],
    at: dt.datetime | None = None,
    rng: np.random.Generator | None = None,
) -> int:
    """Poisson-sample claims into the queue with the stream's π; returns how many were drawn."""
    at = at or timezone.now()
    rng = rng or np.random.default_rng()
    pi = float(stream.sampling_rate)
    drawn = rng.random(len(claim_ids)) < pi
    SampledClaim.objects.bulk_create(
        [
            SampledClaim(stream=stream, claim_id=c, pi=pi, sampled=bool(d), drawn_at=at)
            for c, d in zip(claim_ids, drawn, strict=True)
        ],
        ignore_conflicts=True,
    )
    chosen = [c for c, d in zip(claim_ids, drawn, strict=True) if d]
    Claim.objects.filter(id__in=chosen).update(inclusion_probability=pi, routed_to_judge=False)
    Claim.objects.filter(id__in=set(claim_ids) - set(chosen)).update(routed_to_judge=True)
    return len(chosen)


@dataclass(frozen=True)
class StreamFigures:
    start: dt.date
    n_days: int
    claims: int
    labelled: int
    debiased: Sequence
    gold_only: Sequence
    # the judge's own verdicts on the claims it has judged, nothing corrected: what a
    # threshold monitor on the judge's score would report (shown beside, never the headline)
    judge_alone: Sequence
    alarm_day: int | None
    since_day: int | None
    # the debiased interval over the last day and the last 7 days (each its own sequence,
    # read at its end): what changed lately, beside the cumulative band
    windows: dict[str, tuple[float, float]]


def _window_interval(days: Days, n: int, alpha: float) -> tuple[float, float]:
    """The sequence over the `n` days ending with the last day that has claims (today, still
    empty, would leave "the last day" blank), read at its end."""
    seen = np.flatnonzero(days.counts.sum(axis=1))
    stop = int(seen[-1]) + 1 if seen.size else days.n_days
    cs = betting_cs(days.window(max(stop - n, 0), stop), alpha)
    return float(cs.lower[-1]), float(cs.upper[-1])


def _stream_arrays(stream: MonitoredStream) -> dict[str, np.ndarray]:
    rows = list(
        SampledClaim.objects.filter(stream=stream).values_list(
            "claim_id", "pi", "sampled", "drawn_at", "claim__gold__verdict"
        )
    )
    verdicts = dict(
        JudgeVerdict.objects.filter(run__judge=stream.judge, claim__monitor_sample__stream=stream)
        .order_by("claim_id", "id")
        .values_list("claim_id", "verdict")
    )
    start = stream.started_at.date()
    return {
        "day": np.array([(r[3].date() - start).days for r in rows], np.int64),
        "pi": np.array([r[1] for r in rows], float),
        "s": np.array([r[2] for r in rows], bool),
        "has_gold": np.array([r[4] is not None for r in rows], bool),
        "y": np.array([r[4] == Verdict.SUPPORTED for r in rows], float),
        "f": np.array([verdicts.get(r[0]) == Verdict.SUPPORTED for r in rows], float),
        "judged": np.array([r[0] in verdicts for r in rows], bool),
    }


def stream_figures(stream: MonitoredStream, today: dt.date | None = None) -> StreamFigures:
    """Both confidence sequences and the change detector over the days that are complete."""
    a = _stream_arrays(stream)
    start = stream.started_at.date()
    n_days = max(
        ((today or timezone.localdate()) - start).days + 1, int(a["day"].max(initial=0)) + 1
    )
    pending = np.zeros(n_days, bool)
    pending[a["day"][a["s"] & ~a["has_gold"]]] = True
    keep = ~pending[a["day"]] if len(a["day"]) else np.zeros(0, bool)
    a = {k: v[keep] for k, v in a.items()}
    z, lo, hi = ppi_values(a["f"], a["y"], a["s"], a["pi"])
    debiased: Days = days_group(a["day"], z, lo, hi, n_days)
    z, lo, hi = ipw_values(a["y"], a["s"], a["pi"])
    gold = days_group(a["day"], z, lo, hi, n_days)
    j = a["judged"]
    ones = np.ones(int(j.sum()))
    judge_alone = days_group(a["day"][j], a["f"][j], 0 * ones, ones, n_days)
    detection = edetector(debiased, stream.target, alpha=stream.alpha, horizon=stream.horizon_days)
    return StreamFigures(
        start,
        n_days,
        int(keep.sum()),
        int(a["s"].sum()),
        betting_cs(debiased, stream.alpha),
        betting_cs(gold, stream.alpha),
        betting_cs(judge_alone, stream.alpha),
        detection.alarm_day,
        detection.since_day,
        {
            "day": _window_interval(debiased, 1, stream.alpha),
            "week": _window_interval(debiased, 7, stream.alpha),
        },
    )


def _json_safe(value):
    """JSON a database accepts: numpy numbers as floats, NaN (undefined) as null."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    return value


def stream_evaluate(*, stream: MonitoredStream, today: dt.date | None = None) -> Alert | None:
    """Raise the faithfulness alert once when the detector crosses; idempotent."""
    fig = stream_figures(stream, today)
    if fig.alarm_day is None:
        return None
    day = fig.start + dt.timedelta(days=fig.alarm_day)
    since = fig.start + dt.timedelta(days=fig.since_day or 0)
    raised = timezone.make_aware(dt.datetime.combine(day, dt.time(23, 59)))
    sentence = (
        f"Faithfulness since {since:%d %b %Y} is below the target {stream.target:.0%} with "
        f"{1 - stream.alpha:.0%} confidence valid however often it is looked at "
        f"(detected on {day:%d %b %Y})."
    )
    evidence = {
        "since": since.isoformat(),
        "detected_on": day.isoformat(),
        "target": stream.target,
        "alpha": stream.alpha,
        "cumulative_debiased": [
            fig.debiased.lower[fig.alarm_day],
            fig.debiased.upper[fig.alarm_day],
        ],
        "claims": fig.claims,
        "labelled": fig.labelled,
    }
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                stream=stream,
                kind=Alert.Kind.FAITHFULNESS,
                raised_at=raised,
                evidence=_json_safe(evidence),
                sentence=sentence,
            )
    except IntegrityError:
        return Alert.objects.get(stream=stream, kind=Alert.Kind.FAITHFULNESS, raised_at=raised)
    transaction.on_commit(lambda: task("notify_alert").delay(alert.id))
    return alert


def alert_notify(*, alert_id: int) -> None:
    """POST the alert's JSON once to the stream's declared webhook; email once if configured."""
    with transaction.atomic():
        alert = Alert.objects.select_for_update().select_related("stream").get(id=alert_id)
        stream = alert.stream
        body = {
            "alert": alert.id,
            "kind": alert.kind,
            "stream": stream.id,
            "project": stream.project.slug,
            "raised_at": alert.raised_at.isoformat(),
            "sentence": alert.sentence,
            "evidence": alert.evidence,
        }
        if stream.webhook and alert.webhook_sent_at is None:
            url = webhooks_declared()[stream.webhook]
            request = urllib.request.Request(
                url,
                json.dumps(body).encode(),
                {
                    "Content-Type": "application/json",
                    "Idempotency-Key": f"faithaudit-alert-{alert.id}",
                },
            )
            with urllib.request.urlopen(request, timeout=10):  # noqa: S310 (operator-declared)
                pass
            alert.webhook_sent_at = timezone.now()
        if stream.email and alert.email_sent_at is None:
            send_mail(
                f"FaithAudit alert: {stream.project.name}", alert.sentence, None, [stream.email]
            )
            alert.email_sent_at = timezone.now()
        alert.save(update_fields=["webhook_sent_at", "email_sent_at"])


def answers_arrived(*, project_id: int) -> None:
    """The ingestion hook (interchange's import end): once the import commits, the project's
    monitored streams take their new claims (a task; nothing here when none is monitored)."""
    transaction.on_commit(lambda: task("ingest_streams").delay(project_id))


ANCHORS_PER_BATCH = 0.1  # anchor answers mixed into a batch, as a share of its answers (≥ 1)


def anchor_answer_ids(stream: MonitoredStream) -> list[int]:
    """The answers holding the stream's anchors (a run narrows to answers), none without a set."""
    return sorted(
        set(Claim.objects.filter(anchor_sets__stream=stream).values_list("answer_id", flat=True))
    )


def _batch_anchor_answer_ids(stream: MonitoredStream, batch: int, rng) -> list[int]:
    """A random handful of the anchors' answers to ride in a batch of `batch` answers, so the
    judge cannot tell anchors from traffic; the whole set is re-judged once a day by the beat
    (a busy stream's many small batches never re-judge all 200 anchors each)."""
    answers = anchor_answer_ids(stream)
    take = min(len(answers), max(1, round(batch * ANCHORS_PER_BATCH)))
    return rng.choice(answers, size=take, replace=False).tolist() if answers else []


def streams_ingest(*, project_id: int, at: dt.datetime | None = None) -> int:
    """Each active stream of the project samples its claims not seen yet and has them judged
    by its judge through the ordinary run machinery (queued runs: the endpoint's caps hold,
    nothing is dropped). Returns the claims taken."""
    taken = 0
    for stream_id in MonitoredStream.objects.filter(project_id=project_id, active=True).values_list(
        "pk", flat=True
    ):
        taken += _stream_ingest(stream_id=stream_id, at=at)
    return taken


@transaction.atomic
def _stream_ingest(*, stream_id: int, at: dt.datetime | None) -> int:
    """One stream takes its unseen claims. The stream's row is locked first, so two imports
    finishing at once (two workers) sample each claim once, never one drawn and one routed."""
    stream = MonitoredStream.objects.select_for_update().get(pk=stream_id)
    if not stream.active:
        return 0
    # claims that arrived since the stream started (older ones are history, not traffic)
    new = Claim.objects.filter(
        project_id=stream.project_id,
        monitor_sample__isnull=True,
        created_at__gte=stream.started_at,
    )
    if stream.system_id:
        new = new.filter(answer__system_id=stream.system_id)
    rows = list(new.values_list("id", "answer_id"))
    if not rows:
        return 0
    ids = [claim for claim, _ in rows]
    answer_ids = {answer for _, answer in rows}
    rng = np.random.default_rng()
    claims_sample(stream=stream, claim_ids=ids, at=at, rng=rng)
    anchors = _batch_anchor_answer_ids(stream, len(answer_ids), rng)
    judge_run_start(
        judge=stream.judge,
        among=sorted(answer_ids | set(anchors)),
        among_described="monitored stream",
    )
    return len(ids)

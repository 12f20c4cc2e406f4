"""Judge drift (issue 29 item 3): a human anchor set re-judged by the live judge, and the alarm
that tells "the judge changed" from "the system got worse".

The anchor set is a fixed, seeded sample of the project's gold claims, drawn once per stream
(both gold classes kept, so both error rates are watched). The live judge re-judges the anchors'
answers on a schedule (`anchors_rejudge`, a beat task) and with every ingested batch (the
stream's runs include them). Each finished run's verdicts on anchors are recorded once per run
(`anchors_record`). Per day, two rates are watched with `monitor.stats.drift_detect`, each at
α/2 (a union bound keeps the stream's false alarm ≤ α): the false-positive rate (the judge says
SUPPORTED where gold does not: specificity moved) and the false-negative rate (sensitivity
moved). Gold is fixed, so a change in either is the judge's, whatever the system does.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Claim
from annotate.vocabulary import Verdict
from judges.models import Judge, JudgeRun, JudgeVerdict
from judges.services import judge_run_start

from .models import Alert, AnchorJudgement, AnchorSet, MonitoredStream
from .services import anchor_answer_ids, task
from .stats import Drift, bernoulli_days, drift_detect

ANCHORS = 200  # anchors drawn per stream: ~100 per gold class, a rate moved by 0.15 shows in days


def anchors_choose(*, stream: MonitoredStream, size: int = ANCHORS, seed: int = 0) -> AnchorSet:
    """Draw the stream's anchor set once: up to `size` gold claims, half from each gold class
    where the project has enough (seeded by `seed` and the stream's id: drawn again, the same
    stream and seed give the same set)."""
    existing = AnchorSet.objects.filter(stream=stream).first()
    if existing is not None:
        return existing
    gold = Claim.objects.filter(project_id=stream.project_id, gold__isnull=False)
    if stream.system_id:
        gold = gold.filter(answer__system_id=stream.system_id)
    rows = list(gold.order_by("id").values_list("id", "gold__verdict"))
    rng = np.random.default_rng(seed + stream.id)
    supported = [c for c, v in rows if v == Verdict.SUPPORTED]
    other = [c for c, v in rows if v != Verdict.SUPPORTED]
    half = size // 2
    take_other = min(len(other), max(half, size - len(supported)))
    take_supported = min(len(supported), size - take_other)
    chosen = [
        *rng.permutation(supported)[:take_supported].tolist(),
        *rng.permutation(other)[:take_other].tolist(),
    ]
    with transaction.atomic():
        anchors = AnchorSet.objects.create(stream=stream)
        anchors.claims.set(chosen)
    return anchors


def anchors_rejudge(*, stream: MonitoredStream) -> JudgeRun | None:
    """Start a run of the live judge over the anchors' answers (the beat's daily re-judging)."""
    answers = anchor_answer_ids(stream)
    if not answers:
        return None
    return judge_run_start(judge=stream.judge, among=answers, among_described="anchor set")


def anchors_record(*, stream: MonitoredStream) -> int:
    """Record every finished run's verdicts on the anchors, once per run; returns rows added."""
    anchors = AnchorSet.objects.filter(stream=stream).first()
    if anchors is None:
        return 0
    rows = (
        JudgeVerdict.objects.filter(
            run__judge=stream.judge,
            run__status=JudgeRun.Status.DONE,
            run__finished_at__isnull=False,
            claim__anchor_sets=anchors,
        )
        .exclude(run__in=AnchorJudgement.objects.filter(anchor_set=anchors).values("run"))
        .values_list("run_id", "run__finished_at", "claim_id", "claim__gold__verdict", "verdict")
    )
    records = [
        AnchorJudgement(
            anchor_set=anchors,
            run_id=run_id,
            claim_id=claim_id,
            gold_supported=gold == Verdict.SUPPORTED,
            judge_supported=verdict == Verdict.SUPPORTED,
            judged_on=timezone.localdate(finished),
        )
        for run_id, finished, claim_id, gold, verdict in rows
        if gold is not None
    ]
    AnchorJudgement.objects.bulk_create(records, ignore_conflicts=True)
    return len(records)


@dataclass(frozen=True)
class DriftFigures:
    """Both rates' verdicts over the days since the anchor set was drawn."""

    start: dt.date
    n_days: int
    judged: int
    false_positive: Drift  # gold not SUPPORTED, judge SUPPORTED: specificity
    false_negative: Drift  # gold SUPPORTED, judge not: sensitivity
    calibration_days: int

    def watched(self, rate: str) -> Drift:
        """The figures of "specificity" (the false-positive rate) or "sensitivity"."""
        return self.false_positive if rate == "specificity" else self.false_negative

    @property
    def alarm(self) -> tuple[int, str] | None:
        """(day, which rate) of the first alarm, None while neither rate has moved."""
        hits = [
            (self.watched(rate).alarm_day, rate)
            for rate in ("specificity", "sensitivity")
            if self.watched(rate).alarm_day is not None
        ]
        return min(hits) if hits else None


def drift_figures(stream: MonitoredStream, today: dt.date | None = None) -> DriftFigures | None:
    """The drift verdict from the recorded anchor judgements; None without an anchor set."""
    anchors = AnchorSet.objects.filter(stream=stream).first()
    if anchors is None:
        return None
    start = anchors.since or timezone.localdate(anchors.created_at)
    # One judgement per anchor per day (its latest run's): the daily re-judging and the
    # batches judge the same claims again, and a repeat of one claim is not a new trial.
    latest = {
        (claim, on): (gold, judge)
        for claim, on, gold, judge in AnchorJudgement.objects.filter(
            anchor_set=anchors, judged_on__gte=start
        )
        .order_by("run_id")
        .values_list("claim_id", "judged_on", "gold_supported", "judge_supported")
    }
    day = np.array([(on - start).days for _, on in latest], np.int64)
    gold = np.array([g for g, _ in latest.values()], bool)
    judge = np.array([j for _, j in latest.values()], bool)
    n_days = max(((today or timezone.localdate()) - start).days + 1, int(day.max(initial=0)) + 1)
    half = stream.alpha / 2.0

    def rate_drift(among: np.ndarray, wrong: np.ndarray) -> Drift:
        trials = np.bincount(day[among], minlength=n_days)
        errors = np.bincount(day[among & wrong], minlength=n_days)
        return drift_detect(
            bernoulli_days(errors, trials),
            calibration=min(anchors.calibration_days, n_days),
            alpha=half,
            horizon=stream.horizon_days,
        )

    return DriftFigures(
        start=start,
        n_days=n_days,
        judged=len(latest),
        false_positive=rate_drift(~gold, judge),
        false_negative=rate_drift(gold, ~judge),
        calibration_days=anchors.calibration_days,
    )


def _drift_sentence(fig: DriftFigures, day: int, rate: str) -> str:
    drift = fig.watched(rate)
    error = "false-positive" if rate == "specificity" else "false-negative"
    went = "worse" if drift.direction == "up" else "better"
    low, high = drift.baseline
    when = fig.start + dt.timedelta(days=day)
    return (
        f"The judge changed, not necessarily the system: its {error} rate on the fixed anchor "
        f"set has left its calibration range {low:.0%}–{high:.0%} (its {rate} got {went}; "
        f"detected on {when:%d %b %Y}). Its judge-assisted figures since then are flagged; "
        "re-audit the judge before trusting them."
    )


def drift_evaluate(*, stream: MonitoredStream, today: dt.date | None = None) -> Alert | None:
    """Record the anchors' new verdicts and raise the judge-drift alert once; idempotent."""
    anchors_record(stream=stream)
    fig = drift_figures(stream, today)
    if fig is None or fig.alarm is None:
        return None
    day, rate = fig.alarm
    drift = fig.watched(rate)
    when = fig.start + dt.timedelta(days=day)
    raised = timezone.make_aware(dt.datetime.combine(when, dt.time(23, 59)))
    evidence = {
        "detected_on": when.isoformat(),
        "rate": rate,
        "direction": drift.direction,
        "calibration_range": [float(v) for v in drift.baseline],
        "calibration_days": fig.calibration_days,
        "anchor_judgements": fig.judged,
        "alpha": stream.alpha,
    }
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                stream=stream,
                kind=Alert.Kind.JUDGE_DRIFT,
                raised_at=raised,
                evidence=evidence,
                sentence=_drift_sentence(fig, day, rate),
            )
    except IntegrityError:
        return Alert.objects.get(stream=stream, kind=Alert.Kind.JUDGE_DRIFT, raised_at=raised)
    # the judge's judge-assisted figures are flagged everywhere they are shown
    Judge.objects.filter(pk=stream.judge_id).update(drifted_on=when, drift_sentence=alert.sentence)
    transaction.on_commit(lambda: task("notify_alert").delay(alert.id))
    return alert


@transaction.atomic
def drift_clear(*, stream: MonitoredStream, today: dt.date | None = None) -> None:
    """A lead has re-audited the judge: its flag goes, and the anchors' calibration restarts
    today (the old alarm's days are not watched again; a new change raises a new alert)."""
    today = today or timezone.localdate()
    AnchorSet.objects.filter(stream=stream).update(since=today)
    Judge.objects.filter(pk=stream.judge_id).update(drifted_on=None, drift_sentence="")

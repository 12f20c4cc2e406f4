"""Issue 30 item 2: incremental rollups. After every kind of write the report's rollups can
see (a new gold label, a gold changed or removed, a verdict re-scored or made stale, a claim
imported into a new or an existing answer, a claim's stratum changed, an answer marked as an
abstention or moved to another system), the state refreshed from the triggers' marks must hold
exactly what one fresh aggregation of every claim gives (`sql.rollup_cells`, the reference), and
the refresh must have re-aggregated only the answers written, not the project."""

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Answer, Claim, Gold, System
from judges.models import JudgeRun, JudgeVerdict
from metrics.models import RollupConfidence, RollupMark, RollupState
from metrics.services.rollups import headline_from_rollups, rollups_confidences, rollups_read
from tests.factories import AnswerFactory, ClaimFactory
from tests.metrics.test_rollups import _project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def _confidence_counts_by_hand(project, run, system=None):
    """The judge's confidences over the judged claims (abstentions out), rounded to 6 decimals
    in Python and counted: the reference the state's counts are held to."""
    verdicts = JudgeVerdict.objects.filter(
        run=run,
        stale=False,
        verdict__in=["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"],
        confidence__isnull=False,
        claim__project=project,
        claim__answer__abstention=False,
    )
    if system is not None:
        verdicts = verdicts.filter(claim__answer__system=system)
    counted: dict[float, int] = {}
    for value in verdicts.values_list("confidence", flat=True):
        key = round(float(value), 6)
        counted[key] = counted.get(key, 0) + 1
    return sorted(counted.items())


def _same(project, run, system=None):
    """The incremental read equals the fresh one, figure for figure and sum for sum; the
    state's confidence counts equal a count of every verdict."""
    got = rollups_read(project=project, run=run, system=system)
    want = rollups_read(project=project, run=run, system=system, incremental=False)
    if run is not None:
        values, counts = rollups_confidences(project=project, run=run, system=system)
        state = list(zip(values.tolist(), counts.tolist(), strict=True))
        assert state == _confidence_counts_by_hand(project, run, system)
        scan = rollups_confidences(project=project, run=run, system=system, incremental=False)
        assert values.tolist() == scan[0].tolist()
        assert counts.tolist() == scan[1].tolist()
    assert got.sizes == want.sizes
    a, b = got.rest, want.rest
    assert sorted(a.labels) == sorted(b.labels)
    order = [a.labels.index(name) for name in b.labels]
    assert a.count[order].tolist() == b.count.tolist()
    assert a.answers[order].tolist() == b.answers.tolist()
    np.testing.assert_allclose(a.sum_f[order], b.sum_f, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.m2[order], b.m2, rtol=0, atol=1e-12)
    h = len(order)
    full = order + [h + k for k in order]
    np.testing.assert_allclose(a.cross[np.ix_(full, full)], b.cross, rtol=0, atol=1e-12)
    assert a.n_answers == b.n_answers
    key = lambda r: sorted(zip(r.touched_answer.tolist(), r.touched_m.tolist(), strict=True))  # noqa: E731
    assert key(a) == key(b)
    head, ref = headline_from_rollups(got), headline_from_rollups(want)
    for path in (("faithfulness", "pooled"),):
        assert head[path[0]][path[1]]["value"] == pytest.approx(ref[path[0]][path[1]]["value"])
    assert head["ppi_faithfulness"]["value"] == pytest.approx(
        ref["ppi_faithfulness"]["value"], abs=1e-12
    )
    assert list(head["ppi_faithfulness"]["ci"]) == pytest.approx(
        list(ref["ppi_faithfulness"]["ci"]), abs=1e-12
    )
    return got


def test_the_first_read_builds_and_the_next_reads_nothing_new():
    project, _judge, run = _project(seed=11)
    first = _same(project, run)
    # built: every answer (abstentions out) aggregated
    assert (
        first.answers_refreshed == Answer.objects.filter(project=project, abstention=False).count()
    )
    again = _same(project, run)
    assert again.answers_refreshed == 0  # nothing written since: no claim re-read


def test_a_new_gold_label_refreshes_its_answer_only():
    project, _judge, run = _project(seed=12)
    _same(project, run)
    claim = Claim.objects.filter(project=project, gold__isnull=True, answer__abstention=False)[0]
    Gold.objects.create(claim=claim, verdict="CONTRADICTED", source="adjudicated")
    after = _same(project, run)
    assert after.answers_refreshed == 1
    assert not RollupMark.objects.exists()  # the marks were consumed


def test_the_confidence_counts_move_with_the_answers_written_not_a_scan_of_every_verdict():
    project, _judge, run = _project(seed=16)
    _same(project, run)
    verdict = JudgeVerdict.objects.filter(run=run, claim__answer__abstention=False).first()
    JudgeVerdict.objects.filter(pk=verdict.pk).update(confidence=0.123456789)
    with CaptureQueriesContext(connection) as queries:
        values, counts = rollups_confidences(project=project, run=run)
    read = " ".join(q["sql"] for q in queries.captured_queries)
    assert "judges_judgeverdict" in read  # the one answer written, re-aggregated
    assert "ANY(" in read.split("judges_judgeverdict", 1)[1]  # ... and only it
    assert "GROUP BY 1\nORDER BY 1" not in read  # not sql.rollup_confidences' scan
    assert dict(zip(values.tolist(), counts.tolist(), strict=True))[0.123457] >= 1
    state = RollupState.objects.get(project=project, run_id=run.pk)
    assert RollupConfidence.objects.filter(state=state, count__gt=0).count() == values.size


def test_every_kind_of_write_is_seen():
    project, _judge, run = _project(seed=13)
    _same(project, run)
    gold = Gold.objects.filter(claim__project=project).order_by("id")
    gold[0].delete()
    Gold.objects.filter(pk=gold[1].pk).update(verdict="NOT_IN_PILE")
    _same(project, run)
    verdicts = JudgeVerdict.objects.filter(run=run).order_by("id")
    JudgeVerdict.objects.filter(pk=verdicts[0].pk).update(confidence=0.01)
    JudgeVerdict.objects.filter(pk=verdicts[1].pk).update(stale=True)
    _same(project, run)
    old = Answer.objects.filter(project=project, abstention=False).order_by("id")[0]
    ClaimFactory(answer=old)  # a claim into an existing answer, unjudged
    fresh = AnswerFactory(project=project)
    new_claim = ClaimFactory(answer=fresh)
    JudgeVerdict.objects.create(run=run, claim=new_claim, verdict="SUPPORTED", confidence=0.9)
    _same(project, run)
    Claim.objects.filter(pk=new_claim.pk).update(stratum="a stratum of its own")
    _same(project, run)
    Answer.objects.filter(pk=old.pk).update(abstention=True)
    _same(project, run)
    Answer.objects.filter(pk=old.pk).update(abstention=False)
    after = _same(project, run)
    assert after.answers_refreshed == 1
    # an update that changes nothing the rollups read (the queue's keys) marks nothing
    Claim.objects.filter(project=project).update(queue_key=0.5)
    assert not RollupMark.objects.exists()


def test_one_system_state_sees_an_answer_moved_out():
    project, _judge, run = _project(seed=14)
    first = System.objects.create(project=project, name="rag", version="1")
    other = System.objects.create(project=project, name="rag", version="2")
    Answer.objects.filter(project=project).update(system=first)
    _same(project, run, system=first)
    moved = Answer.objects.filter(project=project, abstention=False).order_by("id")[:3]
    Answer.objects.filter(pk__in=[a.pk for a in moved]).update(system=other)
    after = _same(project, run, system=first)
    assert after.answers_refreshed == 3
    assert RollupState.objects.filter(project=project).count() == 1


def test_a_large_import_rebuilds_rather_than_refreshes_answer_by_answer():
    project, _judge, run = _project(seed=15)
    _same(project, run)
    for _ in range(20):  # more than a fifth of the ~30 answers
        ClaimFactory(answer=AnswerFactory(project=project))
    after = _same(project, run)
    assert (
        after.answers_refreshed == Answer.objects.filter(project=project, abstention=False).count()
    )


def test_the_rollups_command_prints_the_headline_and_what_it_read():
    """`manage.py rollups --project SLUG --judge NAME`: the headline as JSON (valid: NaN as null), the
    second call re-reading nothing; a judge without a finished run is named."""
    project, judge, run = _project(seed=16)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.DONE)
    first = json.loads(_command("--project", project.slug, "--judge", judge.name))
    want = headline_from_rollups(rollups_read(project=project, run=run, incremental=False))
    assert first["ppi_faithfulness"]["value"] == pytest.approx(
        want["ppi_faithfulness"]["value"], abs=1e-12
    )
    assert first["faithfulness"]["by_stratum"]["travel"]["value"] is None  # no gold: no rate
    # the calibration beside it: strata audited at different rates leave it unshown, saying why
    assert first["calibration"]["crc"]["not_computed"].startswith("not shown")
    judged = JudgeVerdict.objects.filter(
        run=run, confidence__isnull=False, claim__answer__abstention=False
    )
    assert first["calibration"]["crc"]["judged_with_confidence"] == judged.count()
    again = json.loads(_command("--project", project.slug, "--judge", judge.name))
    assert again["answers_refreshed"] == 0
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED)
    with pytest.raises(CommandError, match="no finished verify run"):
        _command("--project", project.slug, "--judge", judge.name)


def _command(*args) -> str:
    out = io.StringIO()
    call_command("rollups", *args, stdout=out)
    return out.getvalue()


def test_deleting_a_project_leaves_none_of_its_rollup_marks():
    """Marks carry a plain state id (no key check per inserted row): migration 0006's trigger
    drops a deleted state's marks, so a deleted project leaves nothing behind — and another
    project's marks stay."""
    project, _judge, run = _project(seed=17)
    other, _other_judge, other_run = _project(seed=18)
    rollups_read(project=project, run=run)
    rollups_read(project=other, run=other_run)
    for p in (project, other):
        claim = Claim.objects.filter(project=p, gold__isnull=True).first()
        Gold.objects.create(claim=claim, verdict="SUPPORTED", source="unanimous")
    state_ids = list(RollupState.objects.filter(project=project).values_list("id", flat=True))
    assert RollupMark.objects.filter(state_id__in=state_ids).exists()
    project.delete()
    assert not RollupMark.objects.filter(state_id__in=state_ids).exists()
    kept = RollupState.objects.filter(project=other).values_list("id", flat=True)
    assert RollupMark.objects.filter(state_id__in=list(kept)).exists()

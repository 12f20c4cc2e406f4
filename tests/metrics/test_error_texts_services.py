"""Every error path of `metrics.services` (gate, compare, snapshots, active_audit,
active_design), through the function users call: the exception type and the WHOLE message,
exactly (mutmut wraps a message in "XX…XX" or changes its case; ``match="part"`` sees neither),
with each check's boundary pinned (the last accepted value passes, the first refused raises).
Also the compare's self-preference warning and its equality sentences, whole.

Messages are literals read off the code.
"""

import pytest

from annotate.models import Claim, Gold, Project, System
from annotate.services.design import DesignError
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.models import ReportSnapshot
from metrics.services.active_design import (
    active_design_apply,
    design_request_check,
    design_run_get,
)
from metrics.services.active_routing import RoutingError, selective_routing_apply
from metrics.services.compare import SystemNotFound, system_resolve, systems_compare
from metrics.services.gate import GateError, gate_check
from metrics.services.snapshots import snapshot_request
from tests.compare.builders import answer_record, import_records
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    ProjectFactory,
)

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
RUN_NEEDED = (
    "design_run_id: the active queue needs a finished judge run (a verify run of this project "
    "whose status is done)."
)
BUDGET_NEEDED = "label_budget: the active design needs a label budget (its π)."


def raises_exactly(exc, msg, fn, **kwargs):
    with pytest.raises(exc) as err:
        fn(**kwargs)
    assert type(err.value) is exc
    assert str(err.value) == msg


# -- gate (no database) ----------------------------------------------------------------------------

REPORT = {"faithfulness": {"pooled": {"value": 0.8, "ci": [0.7, 0.9]}}}


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        (
            {"metric": "recall", "minimum": 0.5},
            "metric: unknown metric 'recall'; use one of faithfulness, contradiction_rate, "
            "not_in_pile_rate, hallucination_rate, answers_with_unsupported_rate",
        ),
        ({"on": "middle", "minimum": 0.5}, "on: use one of lower, value, upper, got 'middle'"),
        ({}, "min: give min (the figure must reach it) or max (must not exceed it)"),
    ],
    ids=["metric", "on", "no-bound"],
)
def test_gate_errors(kwargs, msg):
    raises_exactly(GateError, msg, gate_check, report=REPORT, **kwargs)


def test_gate_accepts_a_maximum_alone_and_states_its_reasons():
    passed = gate_check(REPORT, maximum=0.95, on="upper")
    assert passed["pass"] is True
    assert passed["reason"] == "upper end 0.9000 meets the threshold"
    failed = gate_check(REPORT, minimum=0.75, maximum=0.65, on="lower")
    assert failed["pass"] is False
    assert failed["reason"] == (
        "lower 0.7000 is below the minimum 0.75; lower 0.7000 is above the maximum 0.65"
    )
    empty = gate_check({}, minimum=0.5)
    assert empty["reason"] == (
        "no faithfulness figure to judge (no gold claims yet, or no interval)"
    )


# -- compare ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_system_resolve_errors_name_the_systems():
    project = ProjectFactory()
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=project, ref="web")
    assert str(err.value) == "No system 'web' in this project (systems: none)."
    one = System.objects.create(project=project, name="rag", version="1")
    System.objects.create(project=project, name="rag", version="2")
    System.objects.create(project=project, name="bm25", version="")
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=project, ref="rag")
    assert str(err.value) == (
        "'rag' names several versions of 'rag': write NAME@VERSION "
        "(systems of this project: bm25, rag@1, rag@2)."
    )
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=project, ref="web@1")
    assert str(err.value) == "No system 'web@1' in this project (systems: bm25, rag@1, rag@2)."
    assert system_resolve(project=project, ref=" rag@1 ") == one


@pytest.mark.django_db
def test_systems_compare_refuses_foreign_or_identical_systems():
    project, other = ProjectFactory(), ProjectFactory()
    a = System.objects.create(project=project, name="rag", version="1")
    b = System.objects.create(project=project, name="rag", version="2")
    foreign = System.objects.create(project=other, name="rag", version="1")
    msg = "both systems must belong to the project"
    raises_exactly(ValueError, msg, systems_compare, project=project, a=foreign, b=b)
    raises_exactly(ValueError, msg, systems_compare, project=project, a=a, b=foreign)
    raises_exactly(
        ValueError, "compare two different systems", systems_compare, project=project, a=a, b=a
    )


def _judged_pair(project, n, judge_b=S):
    records = []
    for i in range(n):
        truth_a = S if i % 2 else N
        truth_b = S if i % 3 else N
        records.append(answer_record(f"q{i}", "rag@1", [(truth_a, truth_a)]))
        records.append(answer_record(f"q{i}", "rag@2", [(truth_b, judge_b or truth_b)]))
    import_records(project, records)
    Judge.objects.filter(project=project, name="j").update(model="gpt-4o")
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    System.objects.filter(pk=b.pk).update(metadata={"generator_model": "gpt-4o-mini"})
    b.refresh_from_db()
    return a, b


@pytest.mark.django_db
def test_compare_self_preference_and_equality_sentences_whole():
    project = ProjectFactory()
    a, b = _judged_pair(project, 12)  # specificity 6/6 on A, 0/4 on B: Fisher p < 0.01
    audit = systems_compare(
        project=project, a=a, b=b, judge=Judge.objects.get(project=project, name="j")
    )["judge_by_system"]
    assert audit["self_preference"] == [
        "Self-preference: the judge's model (gpt-4o) is of the openai family, as rag@2's "
        "generator (gpt-4o-mini): judges rate their own family's outputs higher. Audit it on "
        "this system's gold (above) or use a judge of another family."
    ]
    assert audit["equality"] == (
        "The judge's specificity differ between the systems (Fisher's exact test, p < 0.05): "
        "its errors are not the same on both, so a comparison of its raw rates is biased; "
        "PPI++ above rectifies each system by its own gold."
    )


@pytest.mark.django_db
def test_compare_equality_sentence_without_evidence():
    project = ProjectFactory()
    a, b = _judged_pair(project, 6, judge_b=None)  # the judge right on both systems
    audit = systems_compare(
        project=project, a=a, b=b, judge=Judge.objects.get(project=project, name="j")
    )["judge_by_system"]
    assert audit["equality"] == (
        "No evidence that the judge's sensitivity or specificity differ between the systems "
        "(Fisher's exact test, p ≥ 0.05); PPI++ rectifies each system by its own gold "
        "regardless."
    )


# -- snapshots -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_snapshot_request_refuses_another_projects_system():
    project, other = ProjectFactory(), ProjectFactory()
    foreign = System.objects.create(project=other, name="rag", version="1")
    raises_exactly(
        ValueError,
        "the system must belong to the project",
        snapshot_request,
        project=project,
        system=foreign,
    )
    assert not ReportSnapshot.objects.filter(project=project).exists()
    mine = System.objects.create(project=project, name="rag", version="1")
    snapshot = snapshot_request(project=project, system=mine)
    assert snapshot.status == ReportSnapshot.Status.PENDING


# -- active_audit: selective routing ---------------------------------------------------------------


def _judged_gold(project, verdicts):
    """One claim per answer; gold S on every claim; the judge's verdicts as given, conf 0.9."""
    judge = JudgeFactory(project=project, name="j", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for verdict in verdicts:
        claim = ClaimFactory(answer=AnswerFactory(project=project))
        Gold.objects.create(claim=claim, verdict=S, source="unanimous")
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=0.9)
    return judge


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("target", "delta", "msg"),
    [
        (0.0, 0.1, "target agreement must be between 0 and 1"),
        (1.0, 0.1, "target agreement must be between 0 and 1"),
        (0.9, 0.0, "delta must be between 0 and 1"),
        (0.9, 1.0, "delta must be between 0 and 1"),
    ],
    ids=["target-0", "target-1", "delta-0", "delta-1"],
)
def test_routing_refuses_levels_outside_0_1(target, delta, msg):
    project = ProjectFactory()
    judge = JudgeFactory(project=project)
    raises_exactly(
        RoutingError, msg, selective_routing_apply,
        project=project, judge=judge, target=target, delta=delta,
    )  # fmt: skip


@pytest.mark.django_db
def test_routing_without_audited_confidences_is_refused():
    project = ProjectFactory()
    judge = JudgeFactory(project=project, name="j", model="m-1")
    run = JudgeRunFactory(judge=judge)
    claim = ClaimFactory(answer=AnswerFactory(project=project))
    JudgeVerdict.objects.create(run=run, claim=claim, verdict=S, confidence=0.9)  # no gold
    raises_exactly(
        RoutingError,
        "selective judging needs audited claims with the judge's confidence: this judge gives "
        "no confidences or has no verdict on a gold claim",
        selective_routing_apply,
        project=project,
        judge=judge,
    )
    assert not Project.objects.get(pk=project.pk).selective_judging


@pytest.mark.django_db
def test_routing_with_no_certified_threshold_is_refused():
    project = ProjectFactory()
    judge = _judged_gold(project, [C, C, N])  # wrong on every audited claim
    raises_exactly(
        RoutingError,
        "no confidence threshold certifies 90% agreement with gold at δ = 0.1 on the 3 audited "
        "claims: nothing routed",
        selective_routing_apply,
        project=project,
        judge=judge,
    )
    raises_exactly(
        RoutingError,
        "no confidence threshold certifies 51% agreement with gold at δ = 0.25 on the 3 audited "
        "claims: nothing routed",
        selective_routing_apply,
        project=project,
        judge=judge,
        target=0.51,
        delta=0.25,
    )
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()


@pytest.mark.django_db
def test_routing_levels_just_inside_0_1_are_accepted():
    project = ProjectFactory()
    judge = _judged_gold(project, [S] * 5)
    # agreement 5/5 against a target just above 0: P(Bin(5, t) ≥ 5) = t⁵ ≤ δ
    out = selective_routing_apply(project=project, judge=judge, target=1e-6, delta=1 - 1e-9)
    assert out["routed"] == 5


# -- active_design -----------------------------------------------------------------------------------


def _design_project():
    project = ProjectFactory()
    run = JudgeRunFactory(judge__project=project, project=project)
    for _a in range(2):
        answer = AnswerFactory(project=project)
        for c in range(2):
            claim = ClaimFactory(answer=answer, position=c)
            JudgeVerdict.objects.create(run=run, claim=claim, verdict=S, confidence=0.3 + 0.2 * c)
    return project, run


@pytest.mark.django_db
def test_design_run_get_needs_a_finished_verify_run_of_the_project():
    project, run = _design_project()
    _, foreign = _design_project()
    citation = JudgeRunFactory(judge=run.judge, project=project, kind=JudgeRun.Kind.CITATION)
    pending = JudgeRunFactory(judge=run.judge, project=project, status=JudgeRun.Status.RUNNING)
    for run_id in (None, "", "abc", citation.pk, pending.pk, foreign.pk, str(pending.pk)):
        raises_exactly(DesignError, RUN_NEEDED, design_run_get, project=project, run_id=run_id)
    assert design_run_get(project=project, run_id=str(run.pk)) == run
    assert design_run_get(project=project, run_id=run.pk) == run


@pytest.mark.django_db
def test_active_design_apply_errors():
    project, run = _design_project()
    raises_exactly(
        DesignError,
        "queue_design: 'uniform' is not computed from a judge run.",
        active_design_apply,
        project=project,
        run=run,
        budget=2,
        design="uniform",
    )
    raises_exactly(
        DesignError, BUDGET_NEEDED, active_design_apply, project=project, run=run, budget=None
    )
    raises_exactly(
        DesignError, RUN_NEEDED, active_design_apply, project=project, run=None, budget=2
    )
    assert Claim.objects.filter(project=project, inclusion_probability__isnull=False).count() == 0
    assert active_design_apply(project=project, run=run, budget=None, design="stratified") == 4
    assert active_design_apply(project=project, run=run.pk, budget=2) == 4


@pytest.mark.django_db
def test_design_request_check_errors_and_what_passes():
    project, run = _design_project()
    kw = {"project": project, "run_id": run.pk, "budget": 2, "target_half_width": None}
    raises_exactly(
        DesignError,
        "queue_design: unknown design 'bogus'.",
        design_request_check,
        **{**kw, "design": "bogus"},
    )
    raises_exactly(
        DesignError,
        BUDGET_NEEDED,
        design_request_check,
        **{**kw, "design": "active", "budget": None},
    )
    raises_exactly(
        DesignError,
        RUN_NEEDED,
        design_request_check,
        **{**kw, "design": "stratified", "run_id": None},
    )
    assert design_request_check(**{**kw, "design": "uniform", "run_id": None}) is None
    assert design_request_check(**{**kw, "design": "stratified", "budget": None}) == run
    assert design_request_check(**{**kw, "design": "active"}) == run

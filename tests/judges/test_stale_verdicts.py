"""Verdicts made on a claim's previous text: the "unjudged" scope judges the claim again, and a
run's agreement with gold leaves them out and says so."""

import pytest

from annotate.models import Role
from annotate.services.claims import claim_edit, claim_split_at
from judges.models import JudgeRun, JudgeVerdict
from judges.runner import run_execute
from judges.selectors import claims_in_scope
from judges.services import judge_run_start
from metrics.judge_agreement import run_agreement
from tests.factories import (
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    MembershipFactory,
    UserFactory,
)
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db

SUPPORTED = "Refunds are processed within 14 days."
CONTRADICTED = "Refunds are processed within 30 days."
ABSENT = "Shoes can be exchanged in any branch."


@pytest.fixture
def lead(project):
    user = UserFactory()
    MembershipFactory(project=project, user=user, role=Role.LEAD)
    return user


def _run(judge, scope):
    run = judge_run_start(judge=judge, scope=scope, enqueue=False)
    assert run_execute(run.pk, owner="test") == "done"
    run.refresh_from_db()
    return run


def test_unjudged_scope_picks_up_a_claim_whose_text_changed(project, lead):
    judge = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    claims = make_claims(project, [SUPPORTED, ABSENT, ABSENT])
    first = _run(judge, "all")
    assert first.total == 3
    assert not claims_in_scope(
        project_id=project.pk, kind="verify", scope="unjudged", judge_id=judge.pk
    ).exists()

    claim_edit(claim=claims[0], text=CONTRADICTED, user=lead)
    kept, new = claim_split_at(claim=claims[1], at=ABSENT.index(" can"), user=lead)
    unjudged = claims_in_scope(
        project_id=project.pk, kind="verify", scope="unjudged", judge_id=judge.pk
    )
    assert set(unjudged.values_list("pk", flat=True)) == {claims[0].pk, kept.pk, new.pk}
    # Another judge's view is its own: its verdicts are not this judge's.
    other = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    assert (
        claims_in_scope(
            project_id=project.pk, kind="verify", scope="unjudged", judge_id=other.pk
        ).count()
        == 4
    )

    second = _run(judge, "unjudged")
    assert second.total == 3
    fresh = {v.claim_id: v.verdict for v in JudgeVerdict.objects.filter(run=second, stale=False)}
    assert set(fresh) == {claims[0].pk, kept.pk, new.pk}
    # The baseline judged the new text: the pile says 14 days, the claim now says 30.
    assert fresh[claims[0].pk] == "CONTRADICTED"
    # The first run's verdict on the old text is still there, for the record, and stale.
    old = JudgeVerdict.objects.get(run=first, claim=claims[0])
    assert old.verdict == "SUPPORTED"
    assert (old.stale, old.stale_claim_text) == (True, SUPPORTED)
    assert not claims_in_scope(
        project_id=project.pk, kind="verify", scope="unjudged", judge_id=judge.pk
    ).exists()


def test_run_agreement_leaves_out_verdicts_on_the_old_text_and_says_so(project, lead):
    judge = JudgeFactory(project=project)
    run = JudgeRunFactory(judge=judge, kind=JudgeRun.Kind.VERIFY)
    claims = make_claims(project, [SUPPORTED, CONTRADICTED, ABSENT])
    gold = ["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"]
    judged = ["SUPPORTED", "SUPPORTED", "NOT_IN_PILE"]
    for claim, g, j in zip(claims, gold, judged, strict=True):
        GoldFactory(claim=claim, verdict=g, source="adjudicated")
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=j)
    before = run_agreement(run=run)
    assert before["n"] == 3
    assert before["agreement"] == pytest.approx(2 / 3)
    assert before["stale"] == 0
    assert "previous text" not in before["method"]

    # The claim the judge got wrong is rewritten; its adjudicated gold stands (a lead decided).
    claim_edit(claim=claims[1], text="Refunds are processed within 20 days.", user=lead)
    after = run_agreement(run=run)
    assert after["n"] == 2
    assert after["agreement"] == 1.0
    assert after["stale"] == 1
    assert dict(after["confusion"])["CONTRADICTED"] == [0, 0, 0]
    assert "1 verdict made on a claim's previous text (edited since) left out." in after["method"]


def test_a_claim_edited_or_deleted_while_its_call_is_in_flight(project, lead, monkeypatch):
    """The lead edits one claim and deletes another after the run sent them to the endpoint and
    before their verdicts are written: the first verdict is written stale with the text it
    judged, the second is dropped, the rest count."""
    from annotate.services.claims import claim_delete
    from judges import runner

    judge = JudgeFactory(project=project, backend="baseline", model="lexical-baseline")
    claims = make_claims(project, [SUPPORTED, ABSENT, ABSENT])
    write = runner._write_chunk
    edited = []

    def edit_then_write(run, owner, outcome, *rest):
        if outcome.results and not edited:
            edited.append(claim_edit(claim=claims[0], text=CONTRADICTED, user=lead))
            claim_delete(claim=claims[1], user=lead)
        return write(run, owner, outcome, *rest)

    monkeypatch.setattr(runner, "_write_chunk", edit_then_write)
    run = _run(judge, "all")

    assert edited
    verdicts = {v.claim_id: v for v in JudgeVerdict.objects.filter(run=run)}
    assert set(verdicts) == {claims[0].pk, claims[2].pk}
    assert verdicts[claims[0].pk].stale
    assert verdicts[claims[0].pk].stale_claim_text == SUPPORTED
    assert not verdicts[claims[2].pk].stale
    unjudged = claims_in_scope(
        project_id=project.pk, kind="verify", scope="unjudged", judge_id=judge.pk
    )
    assert list(unjudged.values_list("pk", flat=True)) == [claims[0].pk]

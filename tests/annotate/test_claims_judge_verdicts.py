"""Judge verdicts on a claim whose text a lead changes (edit, split at, merge, re-split).

A verdict judged the text the claim had then. After an edit it is kept, marked stale with the
text it judged, and counts nowhere; the editor tells the lead how many stopped counting. The
report, agreement and unjudged scope are checked in tests/metrics and tests/judges.
"""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotate.models import Claim, Role, Verdict
from annotate.services.claims import claim_edit, claim_split_at, claims_merge, claims_split
from annotate.services.labels import label_save
from interchange.services.exports import claims_export
from judges.models import Canary, JudgeRun, JudgeVerdict
from tests.factories import (
    AnswerFactory,
    JudgeFactory,
    JudgeRunFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
ANSWER = "Refunds take 14 days and are issued to the original card. I hope this helps."
NOTICE_TWO = (
    "2 judge verdicts were made on the old text and no longer count; "
    "re-run the judge on unjudged claims."
)
NOTICE_ONE = (
    "1 judge verdict was made on the old text and no longer counts; "
    "re-run the judge on unjudged claims."
)


@pytest.fixture
def lead():
    return UserFactory(username="lena-lead")


@pytest.fixture
def answer(lead):
    answer = AnswerFactory(text=ANSWER, external_id="a-1")
    MembershipFactory(project=answer.project, user=lead, role=Role.LEAD)
    return answer


@pytest.fixture
def runs(answer):
    """A verify run and a citation run of one judge, with nothing in them yet."""
    judge = JudgeFactory(project=answer.project, name="baseline")
    verify = JudgeRunFactory(judge=judge, prompt_version="p-1")
    citation = JudgeRunFactory(judge=judge, prompt_version="p-1", kind=JudgeRun.Kind.CITATION)
    return verify, citation


def _verdict(run, claim, verdict="SUPPORTED"):
    return JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=0.9)


def _label(claim, verdict=Verdict.SUPPORTED):
    analyst = UserFactory()
    MembershipFactory(project=claim.project, user=analyst, role=Role.ANALYST)
    return label_save(claim=claim, annotator=analyst, verdict=verdict, require_quote=False)


def _counting(claim) -> list[str]:
    return list(
        JudgeVerdict.objects.filter(claim=claim, stale=False).values_list("verdict", flat=True)
    )


def test_claim_edit_makes_verdicts_on_the_old_text_stale_and_keeps_them(answer, lead, runs):
    verify, citation = runs
    first, second = claims_split(answer=answer, user=lead)
    _verdict(verify, first)
    _verdict(citation, first, "NOT_IN_PILE")
    untouched = _verdict(verify, second)
    canary = Canary.objects.create(
        project=answer.project, text=first.text, pile_answer=answer, source="list"
    )
    canary_verdict = JudgeVerdict.objects.create(run=verify, canary=canary, verdict="NOT_IN_PILE")

    edited = claim_edit(claim=first, text="Refunds take up to 14 days.", user=lead)

    assert edited.verdicts_retired == 2
    stale = JudgeVerdict.objects.filter(claim=first).order_by("id")
    assert [(v.verdict, v.stale, v.stale_claim_text) for v in stale] == [
        ("SUPPORTED", True, "Refunds take 14 days."),
        ("NOT_IN_PILE", True, "Refunds take 14 days."),
    ]
    # Other claims' verdicts and canaries (statements with their own text) are not touched.
    untouched.refresh_from_db()
    canary_verdict.refresh_from_db()
    assert not untouched.stale
    assert not canary_verdict.stale
    # Saving the same text changes nothing; a second edit retires only what was judged since,
    # and the earlier stale verdicts keep the text they judged.
    assert (
        claim_edit(claim=first, text="Refunds take up to 14 days.", user=lead).verdicts_retired == 0
    )
    newer = JudgeRunFactory(judge=verify.judge, prompt_version="p-1")
    _verdict(newer, first, "CONTRADICTED")
    assert claim_edit(claim=first, text="Refunds take 15 days.", user=lead).verdicts_retired == 1
    assert list(
        JudgeVerdict.objects.filter(claim=first).order_by("id").values_list("stale_claim_text")
    ) == [
        ("Refunds take 14 days.",),
        ("Refunds take 14 days.",),
        ("Refunds take up to 14 days.",),
    ]
    assert _counting(first) == []


def test_claim_split_at_retires_the_first_parts_verdicts_and_leaves_the_second_unjudged(
    answer, lead, runs
):
    verify, _ = runs
    first, _ = claims_split(answer=answer, user=lead)
    claim_edit(claim=first, text="Refunds take 14 days to the original card.", user=lead)
    _verdict(verify, first)
    first.refresh_from_db()

    kept, new = claim_split_at(claim=first, at=first.text.index(" to the"), user=lead)

    assert kept.verdicts_retired == 1
    assert _counting(kept) == []
    assert JudgeVerdict.objects.get(claim=kept).stale_claim_text == (
        "Refunds take 14 days to the original card."
    )
    assert not JudgeVerdict.objects.filter(claim=new).exists()


def test_claims_merge_retires_both_claims_verdicts(answer, lead, runs):
    verify, citation = runs
    first, second = claims_split(answer=answer, user=lead)
    _verdict(verify, first)
    _verdict(verify, second, "NOT_IN_PILE")
    _verdict(citation, second)
    _label(second)

    merged = claims_merge(first=first, second=second, user=lead)

    assert merged.pk == second.pk
    # The survivor's two are kept as stale; the absorbed claim's one went with it.
    assert merged.verdicts_retired == 3
    assert _counting(merged) == []
    assert set(
        JudgeVerdict.objects.filter(claim=merged).values_list("stale", "stale_claim_text")
    ) == {(True, "Refunds are issued to the original card.")}
    assert not JudgeVerdict.objects.filter(claim_id=first.pk).exists()


def test_claims_resplit_keeps_the_verdicts_of_claims_it_reproduces(answer, lead, runs):
    verify, _ = runs
    first, second = claims_split(answer=answer, user=lead)
    _verdict(verify, first)
    _verdict(verify, second)
    _label(second)
    stray = Claim.objects.create(project=answer.project, answer=answer, text="A stray claim.")
    _verdict(verify, stray)

    created = claims_split(answer=answer, user=lead, force=True)

    # Both claims come out of the new split as they were: same rows, their verdicts judged this
    # very text and still count. The stray claim is replaced, its verdict gone with it.
    assert created == []
    assert list(answer.claims.order_by("position").values_list("pk", flat=True)) == [
        first.pk,
        second.pk,
    ]
    assert _counting(first) == ["SUPPORTED"]
    assert _counting(second) == ["SUPPORTED"]
    assert not JudgeVerdict.objects.filter(stale=True).exists()
    assert not JudgeVerdict.objects.filter(claim_id=stray.pk).exists()


def test_a_judge_verdict_stratum_and_the_reveal_ignore_verdicts_on_the_old_text(answer, lead, runs):
    from annotate.selectors import claim_reveal_for_user
    from annotate.services.queue import claim_next_for_user

    verify, _ = runs
    project = answer.project
    project.reveal_after_save = True
    project.save()
    first, second = claims_split(answer=answer, user=lead)
    _verdict(verify, first, "SUPPORTED")
    _verdict(verify, second, "SUPPORTED")
    claim_edit(claim=first, text="Refunds take ten days.", user=lead)

    analyst = UserFactory()
    MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    stratum = {"judge": verify.judge_id, "judge_verdict": "SUPPORTED"}
    # Only the claim the judge called SUPPORTED on its current text is in that stratum.
    assert claim_next_for_user(project=project, user=analyst, stratum=stratum) == second
    label_save(claim=second, annotator=analyst, verdict=Verdict.SUPPORTED, require_quote=False)
    assert claim_next_for_user(project=project, user=analyst, stratum=stratum) is None
    label_save(claim=first, annotator=analyst, verdict=Verdict.NOT_IN_PILE, require_quote=False)
    reveal = claim_reveal_for_user(claim=first, user=analyst, project=project)
    assert reveal["judge_verdicts"] == []


# --- the editor says so ------------------------------------------------------------------------


def _url(name, obj, project):
    return reverse(f"annotate:{name}", args=[project.slug, obj.pk])


@pytest.fixture
def editor(client, answer, lead):
    client.force_login(lead)
    return client


def test_editor_says_how_many_verdicts_stopped_counting_with_htmx(editor, answer, lead, runs):
    verify, citation = runs
    claim, _ = claims_split(answer=answer, user=lead)
    _verdict(verify, claim)
    _verdict(citation, claim)
    response = editor.post(
        _url("claim-edit", claim, answer.project), {"text": "Refunds take ten days."}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Claim 1 saved. {NOTICE_TWO}" in html
    assert reverse("judges:judge-list", args=[answer.project.slug]) in html


def test_editor_says_so_without_htmx_too(editor, answer, lead, runs):
    verify, _ = runs
    claim, _ = claims_split(answer=answer, user=lead)
    _verdict(verify, claim)
    response = editor.post(
        _url("claim-split-at", claim, answer.project), {"before": "14 days"}, follow=True
    )
    assert NOTICE_ONE in response.content.decode()


def test_editor_merge_notice_and_no_notice_without_verdicts(editor, answer, lead, runs):
    verify, _ = runs
    first, second = claims_split(answer=answer, user=lead)
    response = editor.post(
        _url("claim-edit", second, answer.project), {"text": "Refunds go to the card."}, **HTMX
    )
    assert "judge verdict" not in response.content.decode()
    _verdict(verify, first)
    response = editor.post(_url("claim-merge", first, answer.project), **HTMX)
    assert f"Merged into claim 1. {NOTICE_ONE}" in response.content.decode()


# --- the export --------------------------------------------------------------------------------


def test_export_leaves_out_verdicts_made_on_the_old_text(answer, lead, runs):
    verify, _ = runs
    first, second = claims_split(answer=answer, user=lead)
    _verdict(verify, first, "CONTRADICTED")
    _verdict(verify, second, "NOT_IN_PILE")
    claim_edit(claim=first, text="Refunds take ten days.", user=lead)

    out = io.StringIO()
    claims_export(project=answer.project, format="jsonl", out=out)
    claims = [claim for line in out.getvalue().splitlines() for claim in json.loads(line)["claims"]]
    judged = {claim["text"]: [v["verdict"] for v in claim["judges"]] for claim in claims}
    assert judged == {
        "Refunds take ten days.": [],
        "Refunds are issued to the original card.": ["NOT_IN_PILE"],
    }

    out = io.StringIO()
    claims_export(project=answer.project, format="csv", out=out)
    rows = {row["text"]: row for row in csv.DictReader(io.StringIO(out.getvalue()))}
    column = "judge:baseline@p-1:verdict"
    assert rows["Refunds take ten days."][column] == ""
    assert rows["Refunds are issued to the original card."][column] == "NOT_IN_PILE"

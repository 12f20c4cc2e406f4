"""Blindness with integrity: a label changed after its analyst saw the judge's verdict.

The finding: with reveal-after-save on, an analyst could see the judge's verdict, change their
label to match it, unflagged, and it became unanimous gold. Now the reveal is recorded when it
is rendered, a later change of verdict is flagged `changed_after_reveal` (label and history),
shown to leads, and left out of gold and agreement unless the project counts it.
"""

import io
import json

import pytest
from django.urls import reverse

from annotate.models import Gold, Label, LabelHistory, Reveal, Role, Verdict
from annotate.services.labels import label_save
from annotate.services.projects import project_settings_update
from interchange.services.exports import claims_export
from metrics.selectors import label_columns
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
PILE = "Refunds take 14 days. They are paid in cash."
QUOTES = {"SUPPORTED": "Refunds take 14 days.", "CONTRADICTED": "They are paid in cash."}


def _world(*, reveal_after_save: bool = True, judge: bool = True):
    project = ProjectFactory(reveal_after_save=reveal_after_save, analysts_per_claim=2)
    answer = AnswerFactory(project=project, text="Refunds are paid to the card.")
    passage = PassageFactory(answer=answer, rank=1, text=PILE)
    claim = ClaimFactory(answer=answer, text="Refunds are paid to the card.", labels_required=2)
    if judge:
        run = JudgeRunFactory(judge__project=project, judge__name="judge-owl", project=project)
        JudgeVerdictFactory(run=run, claim=claim, verdict=Verdict.CONTRADICTED, confidence=0.2)
    analyst, colleague, lead = UserFactory(), UserFactory(), UserFactory()
    MembershipFactory(project=project, user=analyst)
    MembershipFactory(project=project, user=colleague)
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    return project, claim, passage, analyst, colleague, lead


def _post(client, project, claim, passage, verdict, **headers):
    quote = QUOTES.get(verdict, "")
    form = {"verdict": verdict}
    if quote:
        start = PILE.index(quote)
        form.update(
            passage=passage.pk, quote=quote, start_utf16=start, end_utf16=start + len(quote)
        )
    url = reverse("annotate:label-save", args=[project.slug, claim.pk])
    return client.post(url, form, **HTMX, **headers)


def _evidence(passage, verdict):
    quote = QUOTES[verdict]
    start = PILE.index(quote)
    return {"passage": passage, "start": start, "end": start + len(quote), "quote": quote}


def test_a_verdict_changed_after_the_judge_was_revealed_is_flagged_and_not_gold(client):
    project, claim, passage, analyst, colleague, lead = _world()
    client.force_login(analyst)
    saved = _post(client, project, claim, passage, "SUPPORTED")
    assert saved.status_code == 200
    page = saved.content.decode()
    assert "judge-owl" in page  # the reveal was rendered...
    assert "changed after reveal" in page  # ...with what a change now means
    assert Reveal.objects.get(claim=claim, user=analyst).verdict == "SUPPORTED"

    changed = _post(client, project, claim, passage, "CONTRADICTED")
    assert changed.status_code == 200
    label = Label.objects.get(claim=claim, annotator=analyst)
    assert label.verdict == "CONTRADICTED"
    assert label.changed_after_reveal
    history = list(LabelHistory.objects.filter(claim=claim, annotator=analyst).order_by("id"))
    assert [(row.verdict, row.changed_after_reveal) for row in history] == [
        ("SUPPORTED", False),
        ("CONTRADICTED", True),
    ]

    # A second analyst agrees: without the changed label there is one counted label of two.
    label_save(
        claim=claim,
        annotator=colleague,
        verdict=Verdict.CONTRADICTED,
        **_evidence(passage, "CONTRADICTED"),
    )
    assert not Gold.objects.filter(claim=claim).exists()

    # The lead sees the claim waiting, the flag and what the label said before.
    client.force_login(lead)
    review = client.get(reverse("annotate:adjudicate", args=[project.slug]))
    html = review.content.decode()
    assert review.status_code == 200
    assert f'id="card-{claim.pk}"' in html
    assert 'data-testid="changed-after-reveal"' in html
    assert "does not count toward a unanimous gold" in html

    # Agreement reads the colleague's label only.
    frame = label_columns(project=project)
    assert frame["annotator_id"].tolist() == [colleague.pk]

    # The claims export says so, for leads reading it elsewhere.
    out = io.StringIO()
    claims_export(project=project, format="jsonl", out=out)
    labels = json.loads(out.getvalue().splitlines()[0])["claims"][0]["labels"]
    flagged = [entry for entry in labels if entry.get("changed_after_reveal")]
    assert [entry["annotator"] for entry in flagged] == [analyst.username]

    # An owner may count such labels: the claim becomes unanimous gold, agreement counts it.
    project_settings_update(project=project, count_changed_after_reveal=True)
    gold = Gold.objects.get(claim=claim)
    assert (gold.verdict, gold.source) == ("CONTRADICTED", Gold.Source.UNANIMOUS)
    project.refresh_from_db()
    assert sorted(label_columns(project=project)["annotator_id"].tolist()) == sorted(
        [analyst.pk, colleague.pk]
    )
    # And back: the gold goes again.
    project_settings_update(project=project, count_changed_after_reveal=False)
    assert not Gold.objects.filter(claim=claim).exists()


def test_a_change_without_a_reveal_shown_is_not_flagged(client):
    project, claim, passage, analyst, colleague, _lead = _world(reveal_after_save=False)
    client.force_login(analyst)
    assert "judge-owl" not in _post(client, project, claim, passage, "SUPPORTED").content.decode()
    _post(client, project, claim, passage, "CONTRADICTED")
    label = Label.objects.get(claim=claim, annotator=analyst)
    assert (label.verdict, label.changed_after_reveal) == ("CONTRADICTED", False)
    assert not Reveal.objects.exists()
    label_save(
        claim=claim,
        annotator=colleague,
        verdict=Verdict.CONTRADICTED,
        **_evidence(passage, "CONTRADICTED"),
    )
    assert Gold.objects.get(claim=claim).verdict == "CONTRADICTED"


def test_a_reveal_with_nothing_to_show_is_no_reveal(client):
    project, claim, passage, analyst, _colleague, _lead = _world(judge=False)
    client.force_login(analyst)
    _post(client, project, claim, passage, "SUPPORTED")
    _post(client, project, claim, passage, "CONTRADICTED")
    assert not Reveal.objects.exists()
    assert not Label.objects.get(claim=claim, annotator=analyst).changed_after_reveal


def test_changing_back_to_the_verdict_held_at_the_reveal_clears_the_flag(client):
    project, claim, passage, analyst, _colleague, _lead = _world()
    client.force_login(analyst)
    _post(client, project, claim, passage, "SUPPORTED")
    _post(client, project, claim, passage, "NOT_IN_PILE")
    assert Label.objects.get(claim=claim, annotator=analyst).changed_after_reveal
    _post(client, project, claim, passage, "SUPPORTED")
    assert not Label.objects.get(claim=claim, annotator=analyst).changed_after_reveal


def test_the_reveal_on_the_claims_own_page_is_recorded_too(client):
    project, claim, passage, analyst, _colleague, _lead = _world()
    label_save(
        claim=claim, annotator=analyst, verdict="SUPPORTED", **_evidence(passage, "SUPPORTED")
    )
    assert not Reveal.objects.exists()  # saved elsewhere (the API, say): nothing shown yet
    client.force_login(analyst)
    page = client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk]))
    assert "judge-owl" in page.content.decode()
    assert Reveal.objects.get(claim=claim, user=analyst).verdict == "SUPPORTED"
    _post(client, project, claim, passage, "CONTRADICTED")
    assert Label.objects.get(claim=claim, annotator=analyst).changed_after_reveal


def test_the_flag_survives_export_and_import_and_keeps_the_claim_out_of_gold(client):
    from interchange.services.imports import answers_import

    project, claim, passage, analyst, colleague, _lead = _world()
    client.force_login(analyst)
    _post(client, project, claim, passage, "SUPPORTED")
    _post(client, project, claim, passage, "CONTRADICTED")
    label_save(
        claim=claim,
        annotator=colleague,
        verdict=Verdict.CONTRADICTED,
        **_evidence(passage, "CONTRADICTED"),
    )
    out = io.StringIO()
    claims_export(project=project, format="jsonl", out=out)
    copy = ProjectFactory(analysts_per_claim=2)
    answers_import(project=copy, path_or_file=io.BytesIO(out.getvalue().encode()), format="native")
    flags = dict(
        Label.objects.filter(claim__project=copy).values_list(
            "imported_annotator__name", "changed_after_reveal"
        )
    )
    assert flags == {analyst.username: True, colleague.username: False}
    assert not Gold.objects.filter(claim__project=copy).exists()


def test_a_save_confirmed_for_the_screen_shown_ahead_reveals_and_records_as_the_screen(client):
    """label.js's save while the next screen is shown ahead gets the "Saved …" line alone: the
    judge's verdict is revealed in it and recorded, so a change after it is still flagged."""
    project, claim, passage, analyst, _colleague, _lead = _world()
    following = ClaimFactory(answer=claim.answer, text="Refunds are fast.", position=2)
    client.force_login(analyst)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(reverse("annotate:label-following", args=[project.slug, claim.pk]), **HTMX)
    saved = _post(
        client, project, claim, passage, "SUPPORTED", HTTP_X_SCREEN_AHEAD=str(following.pk)
    )
    page = saved.content.decode()
    assert "data-confirmation" in page
    assert "judge-owl" in page
    assert Reveal.objects.get(claim=claim, user=analyst).verdict == "SUPPORTED"
    _post(client, project, claim, passage, "CONTRADICTED")
    assert Label.objects.get(claim=claim, annotator=analyst).changed_after_reveal

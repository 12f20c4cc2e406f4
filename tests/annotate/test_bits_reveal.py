"""A claim's grounding bits beside the judge's verdict on the claim's page, under the blind
labelling rule: nothing before the analyst's own label, the bits after."""

import pytest
from django.urls import reverse

from annotate.models import Verdict
from annotate.services.labels import label_save
from tests.metrics.factories_bits import build_bits_project

pytestmark = pytest.mark.django_db


def test_bits_show_beside_the_verdict_only_after_the_own_label(client):
    built = build_bits_project(n_answers=1)
    project = built.project
    project.reveal_after_save = True
    project.save()
    claim = built.claims[0]
    client.force_login(built.lead)
    url = reverse("annotate:label-claim", args=[project.slug, claim.pk])
    before = client.get(url).content.decode()
    assert 'data-testid="verdict-bits"' not in before
    label_save(claim=claim, annotator=built.lead, verdict=Verdict.SUPPORTED, require_quote=False)
    after = client.get(url).content.decode()
    assert 'data-testid="verdict-bits"' in after
    assert f"{built.bits[claim.pk]:.2f} bits" in after


def test_answer_page_shows_bits_per_claim_after_the_own_label_and_records_the_reveal(client):
    from annotate.models import Reveal

    built = build_bits_project(n_answers=1)
    project = built.project
    project.reveal_after_save = True
    project.save()
    labelled, blind = built.claims[0], built.claims[1]
    label_save(claim=labelled, annotator=built.lead, verdict=Verdict.SUPPORTED, require_quote=False)
    client.force_login(built.lead)
    url = reverse("annotate:answer-detail", args=[project.slug, labelled.answer_id])
    html = client.get(url).content.decode()
    assert html.count('data-testid="claim-bits"') == 1
    assert f"{built.bits[labelled.pk]:.2f} bits" in html
    assert f"{built.bits[blind.pk]:.2f} bits" not in html
    assert Reveal.objects.filter(claim=labelled, user=built.lead).exists()
    assert not Reveal.objects.filter(claim=blind).exists()


def test_answer_page_shows_no_bits_without_reveal_after_save(client):
    built = build_bits_project(n_answers=1)
    claim = built.claims[0]
    label_save(claim=claim, annotator=built.lead, verdict=Verdict.SUPPORTED, require_quote=False)
    client.force_login(built.lead)
    url = reverse("annotate:answer-detail", args=[built.project.slug, claim.answer_id])
    assert 'data-testid="claim-bits"' not in client.get(url).content.decode()

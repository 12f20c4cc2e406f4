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

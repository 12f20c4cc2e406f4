"""Property-based fuzzing of two HTTP routes (hypothesis; issue 34): OTLP trace ingestion and
the label form, 250 generated requests each in `make test` (RELIABILITY_FUZZ_EXAMPLES sets the
number), seeded (RELIABILITY_FUZZ_SEED, default 34) so a failure is replayed by the same run.

For every request: no server error (5xx); a refusal is a well-formed error: for the API an RFC
9457 problem document that a strict JSON parser reads, each error naming a field; for the form
the screen with its alert (or the plain 400 of a foreign charset); nothing half-saved. The
controls (unmutated requests) must be accepted.
"""

import json
import os
from urllib.parse import urlencode

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, seed, settings

from annotate.models import Answer, EvidenceSpan, Label, LabelHistory, Passage, Role
from api.tokens import token_create
from tests.factories import AnswerFactory, ClaimFactory, MembershipFactory, PassageFactory
from tests.reliability.fuzzing_http import READABLE_CHARSETS, label_form_strategy, otlp_strategy

FUZZ_EXAMPLES = int(os.environ.get("RELIABILITY_FUZZ_EXAMPLES", "250"))
FUZZ_SEED = int(os.environ.get("RELIABILITY_FUZZ_SEED", "34"))
PROBLEM_KEYS = {"type", "title", "status", "detail", "instance"}


class _Rollback(Exception):
    pass


def _strict_json(content: bytes):
    def refuse(token):
        raise AssertionError(f"{token} in a response body is not JSON")

    return json.loads(content, parse_constant=refuse)


def _counts() -> tuple:
    return tuple(m.objects.count() for m in (Answer, Passage, Label, LabelHistory, EvidenceSpan))


@pytest.mark.django_db
def test_fuzz_otlp_route_never_a_server_error(figures):
    membership = MembershipFactory(role=Role.LEAD)
    token = token_create(user=membership.user, name="fuzz", project=membership.project).secret
    client = Client(raise_request_exception=False)
    headers = {"Authorization": f"Bearer {token}"}
    seen = {"requests": 0, "accepted": 0, "refused": 0}

    @seed(FUZZ_SEED)
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(otlp_strategy())
    def run(generated):
        body, mutation, path = generated
        before = _counts()
        try:
            with transaction.atomic():
                response = client.post(
                    "/api/v1/otlp/v1/traces", body, content_type="application/json", headers=headers
                )
                after = _counts()
                raise _Rollback
        except _Rollback:
            pass
        seen["requests"] += 1
        where = (mutation, path, response.status_code, response.content[:300])
        assert response.status_code < 500, where
        if mutation == "none":
            assert response.status_code == 200, where
        if response.status_code == 200:
            out = _strict_json(response.content)
            assert {"created", "existing", "skipped", "partialSuccess"} <= out.keys(), where
            seen["accepted"] += 1
            return
        seen["refused"] += 1
        assert response.status_code in (400, 413, 422), where
        assert response["Content-Type"] == "application/problem+json", where
        problem = _strict_json(response.content)
        assert problem.keys() >= PROBLEM_KEYS, where
        assert problem["status"] == response.status_code, where
        assert problem["errors"], where
        for error in problem["errors"]:
            assert isinstance(error["field"], str), where
            assert error["detail"], where
        assert after == before, where  # nothing of a refused request was written

    run()
    assert seen["refused"] > FUZZ_EXAMPLES / 3
    assert seen["accepted"] > 0  # the controls
    figures.add(
        "fuzzing",
        **{
            "OTLP route requests": seen["requests"],
            "OTLP route refused": seen["refused"],
            "OTLP route server errors": 0,  # each request asserts it
        },
    )


PASSAGE = "Card refunds 💳 are paid within 14 days. Cash refunds are not offered."


@pytest.mark.django_db
def test_fuzz_label_form_never_a_server_error(figures):
    membership = MembershipFactory()
    answer = AnswerFactory(project=membership.project, text="Refunds go to the card.")
    first = PassageFactory(answer=answer, rank=1, text=PASSAGE)
    second = PassageFactory(answer=answer, rank=2, text="No cash back.")
    claim = ClaimFactory(answer=answer, text="Refunds go to the card.")
    slug = membership.project.slug
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(membership.user)
    client.get(reverse("annotate:label-claim", args=[slug, claim.pk]))
    csrf = client.cookies["csrftoken"].value
    url = reverse("annotate:label-save", args=[slug, claim.pk])
    valid = {
        "verdict": "SUPPORTED",
        "passage": str(first.pk),
        "start_utf16": "0",
        "end_utf16": "12",
        "quote": "Card refunds",
        "note": "",
        "correct": "",
        "more_passage": [str(second.pk)],
        "more_start_utf16": ["0"],
        "more_end_utf16": ["7"],
        "more_quote": ["No cash"],
    }
    seen = {"posts": 0, "saved": 0, "refused": 0}

    @seed(FUZZ_SEED)
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(label_form_strategy(valid))
    def run(generated):
        fields, charset, htmx, mutation = generated
        before = _counts()
        extra = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        try:
            with transaction.atomic():
                response = client.generic(
                    "POST",
                    url,
                    urlencode(fields, doseq=True).encode(),
                    content_type=f"application/x-www-form-urlencoded{charset}",
                    headers={"X-CSRFToken": csrf},
                    **extra,
                )
                saved = Label.objects.filter(claim=claim).exists()
                after = _counts()
                raise _Rollback
        except _Rollback:
            pass
        seen["posts"] += 1
        page = response.content.decode(errors="replace")
        where = (mutation, charset, htmx, fields, response.status_code, page[:300])
        assert response.status_code < 500, where
        if mutation == "none":
            assert saved, where
        if charset not in READABLE_CHARSETS:
            assert response.status_code == 400, where
            assert "UTF-8" in page, where
            assert not saved, where
        elif response.status_code == 302 or "labelSaved" in response.get("HX-Trigger", ""):
            assert saved, where
            seen["saved"] += 1
            return
        else:
            assert response.status_code == (200 if htmx else 422), where
            assert 'role="alert"' in page, where
            assert not saved, where
        seen["refused"] += 1
        assert after == before, where  # nothing of a refused save was written

    run()
    assert seen["refused"] > FUZZ_EXAMPLES / 3
    assert seen["saved"] > 0  # the controls
    figures.add(
        "fuzzing",
        **{
            "label form posts": seen["posts"],
            "label form refused": seen["refused"],
            "label form server errors": 0,  # each post asserts it
        },
    )

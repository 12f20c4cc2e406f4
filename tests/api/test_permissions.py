"""The API's permission matrix: every route of the schema × {no token, revoked, expired, another
project's lead, read-only token, analyst, lead, owner}: no leak, no forbidden write.

The roles are the screens' (tests/reliability/test_permissions.py's EXPECTED_ROLE): below the
role, or another project's member, 404 (never 403, which would confirm the project exists);
no valid token 401; a read-only token's write 403 whatever its role. A refused request
changes nothing (the rows of every table are counted before and after).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    Answer,
    Claim,
    Gold,
    Label,
    Membership,
    Project,
    Reveal,
    System,
    Verdict,
)
from api.models import ApiToken
from api.routes import api
from api.tokens import token_create
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.models import ReportSnapshot
from tests.api.conftest import ApiClient, native_answer
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    LabelFactory,
    PassageFactory,
)

# (method, path) → the least role that may call it, and the body a caller sends.
ROUTES = {
    ("GET", "/api/v1/projects"): ("any", None),
    ("POST", "/api/v1/projects"): ("staff", {"slug": "new-one", "name": "New"}),
    ("GET", "/api/v1/projects/{slug}"): ("analyst", None),
    ("GET", "/api/v1/projects/{slug}/members"): ("owner", None),
    ("PUT", "/api/v1/projects/{slug}/members/{username}"): ("owner", {"role": "analyst"}),
    ("DELETE", "/api/v1/projects/{slug}/members/{username}"): ("owner", None),
    ("POST", "/api/v1/projects/{slug}/answers"): ("lead", [native_answer(77)]),
    ("POST", "/api/v1/projects/{slug}/preferences"): (
        "lead",
        [
            {
                "question_id": "q1",
                "system_a": "rag@1",
                "system_b": "rag@2",
                "annotator": "x",
                "preference": "B",
            }
        ],
    ),
    ("GET", "/api/v1/projects/{slug}/report"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/report/snapshots"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/report/snapshots/{snapshot_id}"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/audit-card"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/gate"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/compare"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/judges"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/judges"): ("lead", {"name": "new-judge"}),
    ("GET", "/api/v1/projects/{slug}/judges/{name}/runs"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/judges/{name}/versions"): ("lead", {"name": "base v2"}),
    ("GET", "/api/v1/projects/{slug}/judges/{name}/compare"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/judges/{name}/runs"): ("lead", {"scope": "all"}),
    ("GET", "/api/v1/projects/{slug}/runs/{run_id}"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/runs/{run_id}/cancel"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/runs/{run_id}/resume"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/claims"): ("lead", None),
    ("GET", "/api/v1/projects/{slug}/claims/{claim_id}"): ("analyst", None),
    ("POST", "/api/v1/projects/{slug}/answers/{external_id}/split"): ("lead", {"force": True}),
    ("POST", "/api/v1/projects/{slug}/answers/{external_id}/claims"): (
        "lead",
        {"text": "Refunds go to the card."},
    ),
    ("PATCH", "/api/v1/projects/{slug}/claims/{claim_id}"): ("lead", {"text": "Refunds: 14 days."}),
    ("GET", "/api/v1/projects/{slug}/claims/{claim_id}/labels"): ("analyst", None),
    ("POST", "/api/v1/projects/{slug}/claims/{claim_id}/labels"): (
        "analyst",
        {"verdict": "NOT_IN_PILE"},
    ),
    ("GET", "/api/v1/projects/{slug}/gold"): ("lead", None),
    ("POST", "/api/v1/projects/{slug}/claims/{claim_id}/gold"): (
        "lead",
        {"verdict": "SUPPORTED", "reason": "passage 1 says so"},
    ),
    ("GET", "/api/v1/projects/{slug}/claims.ndjson"): ("lead", None),
    ("POST", "/api/v1/otlp/v1/traces"): ("lead", {"resourceSpans": []}),
}
QUERY = {
    "/api/v1/projects/{slug}/audit-card": "?judge=base",
    "/api/v1/projects/{slug}/gate": "?min=0.5",
    "/api/v1/projects/{slug}/compare": "?a=rag@1&b=rag@2",
    "/api/v1/projects/{slug}/judges/{name}/compare": "?against=base",
}
CALLERS = ("none", "revoked", "expired", "otherlead", "readonly", "analyst", "lead", "owner")
RANK = {"analyst": 1, "lead": 2, "owner": 3}
WRITE = {"POST", "PUT", "PATCH", "DELETE"}
COUNTED = (Project, Membership, Answer, Claim, Label, Gold, Judge, JudgeRun, JudgeVerdict)
COUNTED += (ReportSnapshot,)


def _schema_routes() -> set[tuple[str, str]]:
    schema = api.get_openapi_schema(path_prefix="/api/v1")
    return {
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }


def test_every_route_is_in_the_matrix():
    assert _schema_routes() == set(ROUTES), sorted(_schema_routes() ^ set(ROUTES))


def _seed(api_world):
    project = api_world.project
    answer = AnswerFactory(project=project, external_id="a1", text="Refunds take 14 days.")
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    claim = ClaimFactory(answer=answer, text="Refunds take 14 days.")
    GoldFactory(claim=ClaimFactory(answer=answer, text="They go to the card."))
    judge = JudgeFactory(project=project, name="base")
    run = JudgeRunFactory(judge=judge)
    JudgeVerdictFactory(run=run, claim=claim, verdict=Verdict.CONTRADICTED, confidence=0.1)
    snapshot = ReportSnapshot.objects.create(project=project)
    for version in ("1", "2"):  # two systems to compare (no shared question: a short result)
        System.objects.create(project=project, name="rag", version=version)
    lead = api_world.people["lead"]
    expired = token_create(user=lead, name="old", expires_days=1)
    ApiToken.objects.filter(pk=expired.token.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    revoked = token_create(user=lead, name="gone")
    ApiToken.objects.filter(pk=revoked.token.pk).update(revoked_at=timezone.now())
    tokens = {**api_world.tokens, "expired": expired.secret, "revoked": revoked.secret}
    values = {
        "slug": "shop",
        "username": "analyst2",
        "snapshot_id": snapshot.pk,
        "name": "base",
        "run_id": run.pk,
        "claim_id": claim.pk,
        "external_id": "a1",
    }
    return tokens, values


def _counts() -> dict:
    return {model.__name__: model.objects.count() for model in COUNTED}


def _allowed(caller: str, role: str, method: str) -> bool:
    if caller in ("none", "revoked", "expired"):
        return False
    if caller == "readonly":
        return method not in WRITE and role in ("any", "analyst", "lead")
    if role == "any":
        return True
    if role == "staff":
        return False  # nobody here is staff
    if caller == "otherlead":
        return False
    return RANK[caller] >= RANK[role]


def _expected_denial(caller: str, role: str, method: str) -> set[int]:
    if caller in ("none", "revoked", "expired"):
        return {401}
    if caller == "readonly" and method in WRITE:
        return {403}
    if role == "staff":
        return {403}
    if method == "POST" and role == "lead" and caller == "otherlead":
        return {404}
    return {404}


@pytest.mark.parametrize(("method", "path"), sorted(ROUTES), ids=lambda v: str(v))
def test_each_caller_gets_exactly_its_role(api_world, method, path, settings):
    settings.API_RATE_LIMIT = 0
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"  # production's default
    role, body = ROUTES[(method, path)]
    tokens, values = _seed(api_world)
    url = path.format(**values) + QUERY.get(path, "")
    for caller in CALLERS:
        client = ApiClient(None if caller == "none" else tokens[caller])
        before = _counts()
        headers = {"X-FaithAudit-Project": "shop"} if path == "/api/v1/otlp/v1/traces" else None
        if method == "GET":
            response = client.get(url, headers=headers)
        else:
            response = client.send(method, url, body, headers=headers)
        status = response.status_code
        if _allowed(caller, role, method):
            assert status in (200, 201, 202, 204, 409, 422), (caller, status, response.content)
        else:
            assert status in _expected_denial(caller, role, method), (
                caller,
                status,
                response.content[:300],
            )
            assert response["Content-Type"] == "application/problem+json"
            assert _counts() == before, f"{caller}'s refused {method} {path} changed rows"
            body_text = response.content.decode()
            assert "Refunds take 14 days" not in body_text, "a refusal leaked content"


def test_staff_creates_projects(api_world, settings):
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    lead = api_world.people["lead"]
    lead.is_staff = True
    lead.save()
    response = api_world.client("lead").post("/api/v1/projects", {"slug": "fresh", "name": "Fresh"})
    assert response.status_code == 201
    assert Membership.objects.get(project__slug="fresh").user == lead
    again = api_world.client("lead").post("/api/v1/projects", {"slug": "fresh", "name": "Fresh"})
    assert again.status_code == 409
    assert again.json()["errors"][0]["field"] == "slug"


def test_analyst_token_is_blind_until_their_own_label(api_world):
    tokens, values = _seed(api_world)
    project = api_world.project
    project.reveal_after_save = True
    project.save()
    claim = Claim.objects.get(pk=values["claim_id"])
    LabelFactory(claim=claim, annotator=api_world.people["analyst2"], verdict=Verdict.CONTRADICTED)
    analyst = ApiClient(tokens["analyst"])
    url = f"/api/v1/projects/shop/claims/{claim.pk}/labels"
    before = analyst.get(url)
    assert before.status_code == 200
    assert before.json() == {"own": None, "revealed": None, "all": None}
    text = (
        before.content.decode()
        + analyst.get(f"/api/v1/projects/shop/claims/{claim.pk}").content.decode()
    )
    assert "CONTRADICTED" not in text
    assert "analyst2" not in text
    saved = analyst.post(url, {"verdict": "NOT_IN_PILE"})
    assert saved.status_code == 201, saved.content
    after = analyst.get(url).json()
    assert after["own"]["verdict"] == "NOT_IN_PILE"
    assert [v["verdict"] for v in after["revealed"]["judge_verdicts"]] == ["CONTRADICTED"]
    assert [c["annotator"] for c in after["revealed"]["colleague_labels"]] == ["analyst2"]
    # the API's reveal is recorded as the screen's is (a later change is then flagged
    # changed_after_reveal: annotate.services.labels._changed_after_reveal)
    assert Reveal.objects.filter(claim=claim, user=api_world.people["analyst"]).get().verdict == (
        "NOT_IN_PILE"
    )


def test_no_reveal_in_a_project_that_never_reveals(api_world):
    tokens, values = _seed(api_world)
    claim = Claim.objects.get(pk=values["claim_id"])
    LabelFactory(claim=claim, annotator=api_world.people["analyst2"], verdict=Verdict.CONTRADICTED)
    analyst = ApiClient(tokens["analyst"])
    url = f"/api/v1/projects/shop/claims/{claim.pk}/labels"
    assert analyst.post(url, {"verdict": "NOT_IN_PILE"}).status_code == 201
    after = analyst.get(url)
    assert after.json()["revealed"] is None
    assert "CONTRADICTED" not in after.content.decode()


def test_a_label_goes_through_the_screens_checks(api_world):
    tokens, values = _seed(api_world)
    analyst = ApiClient(tokens["analyst"])
    url = f"/api/v1/projects/shop/claims/{values['claim_id']}/labels"
    # the project requires a quote for SUPPORTED, as the screen
    response = analyst.post(url, {"verdict": "SUPPORTED"})
    assert response.status_code == 422
    assert "quote" in response.json()["detail"]
    response = analyst.post(url, {"verdict": "SUPPORTED", "passage_rank": 1, "quote": "not there"})
    assert response.status_code == 422
    assert not Label.objects.filter(annotator=api_world.people["analyst"]).exists()
    response = analyst.post(
        url, {"verdict": "SUPPORTED", "passage_rank": 1, "quote": "Refunds take 14 days."}
    )
    assert response.status_code == 201, response.content
    assert response.json()["quote"] == "Refunds take 14 days."


def test_a_label_of_two_spans_goes_in_and_comes_back_through_the_api(api_world):
    tokens, values = _seed(api_world)
    answer = Answer.objects.get(project=api_world.project, external_id="a1")
    PassageFactory(answer=answer, rank=2, text="Cards are refunded; cash is not.")
    analyst = ApiClient(tokens["analyst"])
    url = f"/api/v1/projects/shop/claims/{values['claim_id']}/labels"
    first = {"verdict": "SUPPORTED", "passage_rank": 1, "quote": "Refunds take 14 days."}
    # A span that is not in its passage: refused, naming the span and its field.
    response = analyst.post(
        url, {**first, "more_quotes": [{"passage_rank": 2, "quote": "cash is refunded"}]}
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith("Span 2: Passage #2 does not contain")
    assert response.json()["errors"][0]["field"] == "more_quotes[0]"
    response = analyst.post(url, {**first, "more_quotes": [{"passage_rank": 3, "quote": "x"}]})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "more_quotes[0].passage_rank"
    assert not Label.objects.filter(annotator=api_world.people["analyst"]).exists()

    response = analyst.post(
        url, {**first, "more_quotes": [{"passage_rank": 2, "quote": "Cards are refunded"}]}
    )
    assert response.status_code == 201, response.content
    assert response.json()["more_quotes"] == [{"passage_rank": 2, "quote": "Cards are refunded"}]
    own = analyst.get(url).json()["own"]
    assert own["quote"] == "Refunds take 14 days."
    assert own["more_quotes"] == [{"passage_rank": 2, "quote": "Cards are refunded"}]
    lead = ApiClient(tokens["lead"]).get(url).json()["all"]
    assert [label["more_quotes"] for label in lead] == [
        [{"passage_rank": 2, "quote": "Cards are refunded"}]
    ]

"""A project with an owner, a lead and two analysts, another project's lead, and a client that
sends a personal API token."""

import json
from types import SimpleNamespace

import pytest
from django.test import Client

from annotate.models import Role
from api.tokens import token_create
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


class ApiClient:
    def __init__(self, token: str | None):
        self.client = Client()
        self.token = token

    def _headers(self, extra):
        headers = dict(extra or {})
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def get(self, path, params=None, headers=None):
        return self.client.get(path, params or {}, headers=self._headers(headers))

    def send(self, method, path, body=None, content_type="application/json", headers=None):
        data = body if isinstance(body, bytes | str) or body is None else json.dumps(body)
        return getattr(self.client, method.lower())(
            path, data=data or "", content_type=content_type, headers=self._headers(headers)
        )

    def post(self, path, body=None, **kwargs):
        return self.send("POST", path, body, **kwargs)


def native_answer(n: int, *, passages: int = 2, text: str | None = None) -> dict:
    return {
        "id": f"ans-{n}",
        "question": f"How long do refunds take (case {n})?",
        "answer": text or f"Refunds take {n % 30 + 1} days. They go to the original card.",
        "pile": [
            {
                "id": f"doc-{n}-{rank}",
                "title": f"Policy {rank}",
                "text": f"Refunds take {n % 30 + 1} days. Passage {rank}.",
            }
            for rank in range(1, passages + 1)
        ],
    }


@pytest.fixture
def api_world(db):
    project = ProjectFactory(slug="shop", name="Shop")
    other = ProjectFactory(slug="other", name="Other")
    people = {}
    for name, role, where in [
        ("owner", Role.OWNER, project),
        ("lead", Role.LEAD, project),
        ("analyst", Role.ANALYST, project),
        ("analyst2", Role.ANALYST, project),
        ("otherlead", Role.LEAD, other),
    ]:
        user = UserFactory(username=name)
        MembershipFactory(project=where, user=user, role=role)
        people[name] = user
    tokens = {name: token_create(user=user, name="t").secret for name, user in people.items()}
    tokens["readonly"] = token_create(user=people["lead"], name="ro", read_only=True).secret

    def client(name: str | None) -> ApiClient:
        return ApiClient(tokens.get(name) if name else None)

    return SimpleNamespace(
        project=project, other=other, people=people, tokens=tokens, client=client
    )

import pytest

from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
)
from tests.llm_server import start_server


@pytest.fixture
def llm(llm_endpoints):
    """The loopback OpenAI-compatible server, declared as the endpoint "loopback":
    (base_url, controller)."""
    base_url, ctl = start_server()
    llm_endpoints(loopback=base_url)
    yield base_url, ctl
    ctl.stop()


PILE = (
    "Refunds are processed within 14 days. They are issued to the original card. "
    "Gift cards are not refundable."
)


def make_claims(project, texts, *, pile=PILE, per_answer=5):
    """Answers of `per_answer` claims each, every answer with a one-passage pile."""
    claims = []
    answer = None
    for i, text in enumerate(texts):
        if i % per_answer == 0:
            answer = AnswerFactory(project=project)
            PassageFactory(answer=answer, rank=1, text=pile)
        claims.append(ClaimFactory(answer=answer, project=project, text=text))
    return claims


@pytest.fixture
def project():
    return ProjectFactory()


@pytest.fixture
def openai_judge(project, llm):
    return JudgeFactory(
        project=project,
        backend="openai",
        model="loopback",
        endpoint="loopback",
        max_concurrency=4,
        timeout_seconds=2.0,
        max_retries=3,
        verify_prompt="",
        parameters={"backoff_base_s": 0.05, "backoff_cap_s": 0.2},
    )


@pytest.fixture
def lead(project):
    return MembershipFactory(project=project, role="lead").user

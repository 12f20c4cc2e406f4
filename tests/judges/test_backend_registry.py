"""ARCHITECTURE.md's "Add a judge backend" recipe, followed (issue 31 item 3): the test-only
echo backend (tests/judges/echo_backend.py, one file as a new backend would be) registers in
one place and shows up in the judge form, `manage.py add_judge`, a run in its own chunk size,
the stored verdicts and the report's judge audit; the built-in backends' declarations say what
the if-chains used to."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Role
from annotate.vocabulary import Verdict
from judges.backends import JudgeConfigError, backend_for_spec
from judges.backends.registry import (
    _REGISTRY,
    Declared,
    backend_choices,
    backend_kind,
    backend_names,
    backends,
    register,
)
from judges.models import Judge, JudgeRun, JudgeVerdict
from judges.runner import chunk_size
from judges.services import judge_create, judge_run_start
from metrics.services import report_compute
from tests.factories import MembershipFactory
from tests.judges.conftest import make_claims
from tests.judges.echo_backend import EchoBackend

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client, project):
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    client.force_login(lead)
    return client


@pytest.fixture
def echo():
    register(EchoBackend)
    EchoBackend.calls.clear()
    yield EchoBackend
    _REGISTRY.pop(EchoBackend.name)


def test_the_built_in_backends_declare_what_the_product_branched_on():
    assert list(backends()) == ["baseline", "openai", "bits", "imported"]
    assert [name for name, _ in backend_choices()] == ["baseline", "openai", "bits"]
    assert backend_names(needs_endpoint=True) == ("openai", "bits")
    assert backend_names(can_split=True) == ("openai",)
    assert backend_names(can_pairwise=True) == ("openai",)
    assert backend_names(needs_question=True) == ("bits",)
    assert chunk_size(8, backend="baseline") == 512
    assert chunk_size(8, backend="openai") == 32
    assert backend_kind("bits").report_key == "grounding_bits"
    assert "bits" in backend_kind("bits").extra_verdict_columns


def test_an_unknown_backend_is_refused_naming_the_choices(project):
    with pytest.raises(JudgeConfigError, match="use baseline, bits, imported, openai"):
        backend_for_spec({"backend": "nope"})
    with pytest.raises(ValidationError, match="backend"):
        judge_create(project=project, name="x", backend="nope")
    assert not Judge.objects.filter(name="x").exists()


def test_a_second_class_cannot_claim_a_backends_name():
    class Impostor(Declared):
        name = "baseline"

    with pytest.raises(ValueError, match="declared twice"):
        register(Impostor)
    assert backend_kind("baseline").__name__ == "BaselineBackend"


def test_the_echo_backend_runs_end_to_end(
    echo, project, lead_client, django_capture_on_commit_callbacks
):
    # The form and the command offer it; the model accepts it with no migration.
    page = lead_client.get(reverse("judges:judge-list", args=[project.slug])).content.decode()
    assert '<option value="echo">Echo (every word in the pile)</option>' in page
    call_command("add_judge", project=project.slug, name="from-cli", backend="echo")
    judge = Judge.objects.get(name="from-cli")
    assert (judge.backend, judge.model) == ("echo", "echo-v1")  # its default model

    supported = "Refunds are processed within 14 days"
    absent = "Shoes can be exchanged in any branch"
    claims = make_claims(project, [supported, absent] * 4, per_answer=4)
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_start(judge=judge)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE
    assert run.prompt_text == EchoBackend.prompt_text  # its instrument, not a verify prompt
    assert (run.total, run.done) == (8, 8)
    assert chunk_size(judge.max_concurrency, backend="echo") == 3
    stored = dict(JudgeVerdict.objects.filter(run=run).values_list("claim_id", "verdict"))
    assert stored == {
        c.pk: Verdict.SUPPORTED if c.text == supported else Verdict.NOT_IN_PILE for c in claims
    }

    report = report_compute(project=project, judge=judge)
    assert report["judge"]["n_judged"] == 8
    assert report["judge"]["naive_faithfulness"] == pytest.approx(0.5)

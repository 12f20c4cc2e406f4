"""add_judge and run_judge from the shell (in-process, no broker)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judges.models import Judge, JudgeRun
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db(transaction=True)


def test_add_judge_then_run_judge_wait_prints_progress(project, llm):
    base_url, ctl = llm
    make_claims(project, ["Refunds are processed within 14 days", "Shoes fly"])
    out = StringIO()
    call_command(
        "add_judge",
        project=project.slug,
        name="loop",
        backend="openai",
        endpoint="loopback",
        model="loopback",
        max_concurrency=2,
        timeout=3,
        stdout=out,
    )
    judge = Judge.objects.get(name="loop")
    assert judge.max_concurrency == 2
    assert judge.timeout_seconds == 3
    assert f"prompt version {judge.prompt_version}" in out.getvalue()

    out = StringIO()
    call_command("run_judge", project=project.slug, judge="loop", wait=True, poll=0.1, stdout=out)
    run = JudgeRun.objects.get()
    assert run.status == "done"
    assert "2/2 processed — done 2, failed 0, unparseable 0, status done" in out.getvalue()
    assert ctl.total_calls == 2


def test_run_judge_names_a_missing_judge(project):
    with pytest.raises(CommandError, match="no judge named 'nope'"):
        call_command("run_judge", project=project.slug, judge="nope")


def test_add_judge_refuses_an_openai_judge_without_model(project):
    with pytest.raises(CommandError, match="model"):
        call_command("add_judge", project=project.slug, name="x", backend="openai")


def test_run_judge_wait_prints_progress_while_it_runs(project, llm):
    base_url, ctl = llm
    ctl.latency_s = 0.05
    make_claims(project, [f"Claim {i}" for i in range(24)])
    call_command(
        "add_judge",
        project=project.slug,
        name="slow",
        backend="openai",
        endpoint="loopback",
        model="loopback",
        max_concurrency=1,
        stdout=StringIO(),
    )
    out = StringIO()
    call_command("run_judge", project=project.slug, judge="slow", wait=True, poll=0.2, stdout=out)
    lines = [line for line in out.getvalue().splitlines() if "processed —" in line]
    assert "in this process" in out.getvalue()
    assert lines[-1].strip().startswith("24/24 processed")
    assert any(not line.strip().startswith(("0/24", "24/24")) for line in lines), lines


def test_resume_runs_resumes_a_stale_run(project, llm):
    from datetime import timedelta

    from django.utils import timezone

    from judges.services import judge_run_start
    from tests.factories import JudgeFactory

    make_claims(project, ["Refunds are processed within 14 days", "Shoes fly"])
    judge = JudgeFactory(project=project, backend="baseline")
    run = judge_run_start(judge=judge, enqueue=False)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="dead", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    out = StringIO()
    call_command("resume_runs", stdout=out)
    assert f"resumed 1 runs: {run.pk}" in out.getvalue()
    run.refresh_from_db()
    assert (run.status, run.done) == ("done", 2)
    out = StringIO()
    call_command("resume_runs", stdout=out)
    assert "no stale runs" in out.getvalue()


def test_run_judge_names_the_endpoints_to_choose_when_the_judge_has_none(project, llm):
    from tests.factories import JudgeFactory

    JudgeFactory(project=project, backend="openai", model="loopback", name="stranded")
    with pytest.raises(CommandError, match="Choose one of the endpoints the operator declared: "):
        call_command("run_judge", project=project.slug, judge="stranded")
    assert llm[1].total_calls == 0

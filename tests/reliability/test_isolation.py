"""No page, export, report or management command of one project shows or touches another's data.

Two projects full of distinctive words, and one person who is owner of both (the hardest case:
every permission check passes, only the project filter stands between them). Every GET page of
project A (all URL patterns from the resolver, with A's object ids), every export and download,
and every management command run with `--project A`, must never contain B's word; the commands
that write must leave B exactly as it was.
"""

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotate.models import Answer, Claim, Label
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.services import snapshot_compute
from tests.reliability.test_permissions import PROJECT_PATTERNS, url_for
from tests.reliability.world import world_build

A, B = "ZEBRAQX", "QUOKKAVW"


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _state_of(world) -> dict:
    project = world.project
    return {
        "answers": list(Answer.objects.filter(project=project).values_list("pk", "text")),
        "claims": list(
            Claim.objects.filter(project=project).values_list("pk", "text").order_by("pk")
        ),
        "labels": list(
            Label.objects.filter(claim__project=project).values_list("pk", "verdict", "note")
        ),
        "judges": list(Judge.objects.filter(project=project).values_list("pk", "name")),
        "runs": list(JudgeRun.objects.filter(project=project).values_list("pk", "status")),
        "verdicts": JudgeVerdict.objects.filter(run__project=project).count(),
    }


@pytest.fixture
def two_projects(db):
    a = world_build(A, slug="a")
    b = world_build(B, slug="b", users=a.users)  # the same people, same roles, in both
    snapshot_compute(snapshot_id=a.snapshot.pk)
    snapshot_compute(snapshot_id=b.snapshot.pk)
    return a, b


def test_no_page_or_download_of_a_shows_b(two_projects, figures):
    a, _ = two_projects
    client = Client()
    client.force_login(a.users["owner"])
    ids = a.ids()
    extra = {
        "annotate:export": ["?format=csv", "?format=jsonl"],
        "metrics:report-download": [f"?judge={a.judge.pk}"],
        "metrics:audit-card": [
            f"?judge={a.judge.pk}",
            f"?judge={a.judge.pk}&format=csv",
            f"?judge={a.judge.pk}&format=md",
        ],
        "metrics:audit-card-page": [f"?judge={a.judge.pk}"],
        "metrics:dashboard": ["", f"?judge={a.judge.pk}"],
    }
    seen, pages = [], 0
    for name, route, _ in PROJECT_PATTERNS:
        for query in extra.get(name, [""]):
            response = client.get(url_for(route, "a", ids) + query)
            if response.status_code == 405:
                continue  # POST-only: an action, not a page
            pages += 1
            assert response.status_code in (200, 302), (name, query, response.status_code)
            body = _body(response)
            assert B not in body, f"{name}{query} shows project B's text"
            seen.append((name + query, body))
    # The check can fail: A's own word is on its pages and in every download.
    with_a = {name for name, body in seen if A in body}
    assert {
        "annotate:project-detail",
        "annotate:answer-detail",
        "annotate:export?format=csv",
        "annotate:export?format=jsonl",
        f"metrics:audit-card?judge={a.judge.pk}",
        f"metrics:audit-card?judge={a.judge.pk}&format=md",
        f"metrics:audit-card-page?judge={a.judge.pk}",
    } <= with_a
    figures.add("isolation", pages=pages)


def _command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_commands_read_only_the_named_project(two_projects, figures):
    a, _ = two_projects
    outputs = {
        "export_claims csv": _command("export_claims", "--project", "a", "--format", "csv"),
        "export_claims jsonl": _command("export_claims", "--project", "a", "--format", "jsonl"),
        "report": _command("report", "--project", "a", "--judge", a.judge.name),
        "export_audit json": _command("export_audit", "--project", "a", "--judge", a.judge.name),
        "export_audit csv": _command(
            "export_audit", "--project", "a", "--judge", a.judge.name, "--format", "csv"
        ),
    }
    for name, text in outputs.items():
        assert B not in text, f"`{name} --project a` shows project B's text"
    assert A in outputs["export_claims csv"]
    assert A in outputs["export_claims jsonl"]
    report = json.loads(outputs["report"])
    assert B not in json.dumps(report, ensure_ascii=False)
    # Another project's judge cannot be named through A.
    with pytest.raises(Exception, match="(?i)judge|not found|no such"):
        _command("report", "--project", "a", "--judge", f"judge-{B}")
    figures.add("isolation", commands=len(outputs) + 1)


def test_commands_that_write_leave_the_other_project_alone(
    two_projects, tmp_path, figures, django_capture_on_commit_callbacks
):
    a, b = two_projects
    before = _state_of(b)
    answers_of_a = Answer.objects.filter(project=a.project).count()

    upload = tmp_path / "more.jsonl"
    upload.write_text(
        json.dumps(
            {
                "id": "new-1",
                "question": "q?",
                "answer": "Refunds take 14 days.",
                "pile": [{"id": "d", "text": "Refunds take 14 days."}],
            }
        )
        + "\n"
    )
    _command("import_answers", str(upload), "--project", "a")
    _command("split_claims", "--project", "a", "--force")
    _command("add_judge", "--project", "a", "--name", "extra", "--backend", "baseline")
    with django_capture_on_commit_callbacks(execute=True):  # the run's task, in-process
        _command("run_judge", "--project", "a", "--judge", "extra")
    _command("resume_runs")

    assert _state_of(b) == before, "a command run on project a changed project b"
    assert Answer.objects.filter(project=a.project).count() == answers_of_a + 1
    run = JudgeRun.objects.get(judge__name="extra")
    assert run.project_id == a.project.pk
    judged = set(JudgeVerdict.objects.filter(run=run).values_list("claim__project", flat=True))
    assert judged == {a.project.pk}
    figures.add("isolation", commands=5)

"""The system-under-test run against a real loopback RAG server, and the built-in reference."""

import json

import pytest

from annotate.models import Answer
from tests.factories import ProjectFactory
from tests.rag_server import start_rag_server
from testsets.models import Document, DocumentPassage, SutRun, SutRunItem, TestItem, TestSet
from testsets.rag_endpoints import (
    ResponseInvalid,
    native_response_parse,
    rag_endpoints_parse,
)
from testsets.services.sut import sut_run_execute, sut_run_resume, sut_run_start

pytestmark = pytest.mark.django_db
SECRET = "sk-very-secret-rag-key-123"


@pytest.fixture
def server():
    base_url, ctl = start_rag_server(stall_s=1.0)
    yield base_url, ctl
    ctl.stop()


def _declare(settings, monkeypatch, base_url, **extra):
    monkeypatch.setenv("RAG_TEST_KEY", SECRET)
    entry = {
        "name": "loop",
        "base_url": base_url,
        "api_key_env": "RAG_TEST_KEY",
        "timeout_seconds": 0.3,
        "max_retries": 2,
        "max_concurrency": 1,  # the fault pattern (every fifth call) stays deterministic
        **extra,
    }
    settings.FAITHAUDIT_RAG_ENDPOINTS = json.dumps([entry])
    settings.FAITHAUDIT_SUT_BACKOFF_SECONDS = 0.01


def _test_set(project, questions):
    test_set = TestSet.objects.create(project=project, name="ts", status=TestSet.Status.PUBLISHED)
    for i, question in enumerate(questions):
        TestItem.objects.create(
            test_set=test_set,
            external_id=f"q{i}",
            position=i,
            question=question,
            answer="truth",
            status=TestItem.Status.ACCEPTED,
        )
    return test_set


QUESTIONS = [f"What is rule {i}?" for i in range(12)] + [
    "stall please",
    "garbage please",
    "What is rule 99?",
]


def test_every_question_ends_answered_or_listed_failed(settings, monkeypatch, server):
    base_url, ctl = server
    _declare(settings, monkeypatch, base_url)
    project = ProjectFactory()
    test_set = _test_set(project, QUESTIONS)
    run = sut_run_start(
        project=project,
        test_set=test_set,
        endpoint_name="loop",
        system_name="rag",
        system_version="1",
    )
    assert run.status == SutRun.Status.DONE
    assert run.done == run.total == 15
    rows = {r.item.question: r for r in SutRunItem.objects.filter(run=run).select_related("item")}
    assert rows["stall please"].state == "failed"
    assert "timed out after 3 attempts" in rows["stall please"].error
    assert rows["garbage please"].state == "failed"
    assert "field 'answer'" in rows["garbage please"].error
    answered = [r for r in rows.values() if r.state == "answered"]
    assert len(answered) == 13  # the 500s were retried into answers
    assert any(status == 500 for _q, status in ctl.log)
    assert ctl.authorization == f"Bearer {SECRET}"
    for row in answered:
        answer = row.answer
        assert (answer.system.name, answer.system.version) == ("rag", "1")
        assert answer.question_id == row.item.external_id
        pile = [(p.source_id, p.text, p.title) for p in answer.passages.order_by("rank")]
        assert pile == [
            (p["id"], p["text"], p["title"]) for p in ctl.passages_for(row.item.question)
        ]
    for row in SutRunItem.objects.filter(run=run):
        assert SECRET not in row.error
        assert base_url not in row.error
    project.refresh_from_db()
    assert project.answers_count == 13


def test_calls_run_up_to_the_endpoints_concurrency_and_each_question_is_answered_once(
    settings, monkeypatch, server
):
    base_url, ctl = server
    ctl.delay_s = 0.15
    _declare(settings, monkeypatch, base_url, max_concurrency=4, max_retries=5, timeout_seconds=2)
    project = ProjectFactory()
    questions = [f"What is rule {i}?" for i in range(16)]
    run = sut_run_start(
        project=project,
        test_set=_test_set(project, questions),
        endpoint_name="loop",
        system_name="rag",
    )
    assert run.status == SutRun.Status.DONE
    assert 2 <= ctl.max_in_flight <= 4  # overlapping calls, never more than the cap
    rows = SutRunItem.objects.filter(run=run)
    assert sorted(rows.values_list("state", flat=True)) == ["answered"] * 16
    answers = Answer.objects.filter(project=project)
    assert sorted(answers.values_list("question", flat=True)) == sorted(questions)


def test_a_killed_run_resumes_without_duplicates(settings, monkeypatch, server):
    base_url, ctl = server
    _declare(settings, monkeypatch, base_url)
    project = ProjectFactory()
    test_set = _test_set(project, [f"What is rule {i}?" for i in range(8)])
    from config.celery import app

    app.conf.task_always_eager = False  # start without running: we run it by hand
    monkeypatch.setattr(app.tasks["testsets.run_sut"], "delay", lambda run_id: None)
    run = sut_run_start(project=project, test_set=test_set, endpoint_name="loop", system_name="rag")
    assert sut_run_execute(run_id=run.pk, limit=3) == "interrupted"
    run.refresh_from_db()
    assert run.done == 3
    assert run.status == SutRun.Status.INTERRUPTED
    asked_before = [q for q, s in ctl.log if s == 200]
    app.conf.task_always_eager = True
    monkeypatch.undo()  # the task's delay runs it now again
    _declare(settings, monkeypatch, base_url)
    assert sut_run_resume(run=run) is True
    run.refresh_from_db()
    assert run.status == SutRun.Status.DONE
    assert sut_run_execute(run_id=run.pk) == "done"  # a second delivery changes nothing
    assert sut_run_resume(run=run) is False
    asked = [q for q, s in ctl.log if s == 200]
    assert len(asked) == len(set(asked)) == 8
    assert asked[:3] == asked_before
    assert Answer.objects.filter(project=project).count() == 8
    assert sorted(Answer.objects.values_list("question_id", flat=True)) == [
        f"q{i}" for i in range(8)
    ]


def test_openai_adapter_reads_sources_from_the_message_context(settings, monkeypatch, server):
    base_url, ctl = server
    _declare(settings, monkeypatch, base_url, contract="openai", models=["m"])
    project = ProjectFactory()
    test_set = _test_set(project, ["What is rule 1?"])
    run = sut_run_start(project=project, test_set=test_set, endpoint_name="loop", system_name="r")
    answer = SutRunItem.objects.get(run=run).answer
    assert answer.text == "Answer to: What is rule 1?"
    assert [p.source_id for p in answer.passages.order_by("rank")] == [
        p["id"] for p in ctl.passages_for("What is rule 1?")
    ]


def test_reference_system_puts_the_passage_with_the_words_first(settings):
    project = ProjectFactory()
    texts = [
        "Refunds are paid within 14 days. Shipping is free above 50 euros.",
        "Employees must wear a helmet on site. Visitors sign in at reception.",
        "The warranty lasts two years from delivery. Batteries are excluded.",
    ]
    for i, text in enumerate(texts):
        doc = Document.objects.create(
            project=project, external_id=f"d{i}", text=text, sha256=str(i)
        )
        DocumentPassage.objects.create(document=doc, position=0, start=0, end=len(text), text=text)
    test_set = _test_set(project, ["How long does the warranty last?"])
    run = sut_run_start(
        project=project,
        test_set=test_set,
        endpoint_name="reference",
        system_name="reference",
        system_version="bm25",
    )
    answer = SutRunItem.objects.get(run=run).answer
    pile = list(answer.passages.order_by("rank"))
    assert pile[0].text == texts[2]
    assert answer.text == "The warranty lasts two years from delivery."


def test_garbage_responses_name_the_field():
    with pytest.raises(ResponseInvalid, match=r"passages\[1\]\.text"):
        native_response_parse({"answer": "a", "passages": [{"id": "1", "text": "t"}, {"id": "2"}]})
    with pytest.raises(ResponseInvalid, match="field 'passages'"):
        native_response_parse({"answer": "a"})


def test_declaration_errors_name_the_entry_and_field():
    with pytest.raises(Exception, match="entry 1.*'contract'"):
        rag_endpoints_parse(json.dumps([{"name": "x", "base_url": "http://h", "contract": "soap"}]))
    with pytest.raises(Exception, match="'base_url'"):
        rag_endpoints_parse(json.dumps([{"name": "x", "base_url": "ftp://h"}]))
    with pytest.raises(Exception, match="built-in"):
        rag_endpoints_parse(json.dumps([{"name": "reference", "base_url": "http://h"}]))

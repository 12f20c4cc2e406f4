"""The project page lists answers 50 a page without counting the project's answers per request:
the total is kept by the import (issue 7: the page must not slow down as a project grows)."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Project, Role
from interchange.services.imports import ImportFailed, answers_import
from tests.factories import MembershipFactory

PILE = [{"id": "p1", "title": "Policy", "text": "Refunds are issued within 14 days."}]


def _write(path, ids):
    records = [
        {
            "id": answer_id,
            "question": f"Question {answer_id}?",
            "answer": "Refunds take 14 days.",
            "pile": PILE,
            "claims": [{"text": "Refunds take 14 days."}, {"text": "They are final."}],
        }
        for answer_id in ids
    ]
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return str(path)


@pytest.mark.django_db
def test_pages_follow_imports_without_counting_answers(client, tmp_path):
    member = MembershipFactory(role=Role.ANALYST)
    project = member.project
    client.force_login(member.user)
    url = reverse("annotate:project-detail", args=[project.slug])

    answers_import(project=project, path_or_file=_write(tmp_path / "a.jsonl", range(60)))
    page = client.get(url).content.decode()
    assert 'Answers <span class="muted small">(60)</span>' in page
    assert "Page 1 of 2" in page
    assert page.count('<td class="num">2</td>') == 50  # claims counted per listed answer

    # A failed import changes nothing, the count included.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(ImportFailed):
        answers_import(project=project, path_or_file=str(bad))
    answers_import(project=project, path_or_file=_write(tmp_path / "b.jsonl", range(60, 65)))
    assert Project.objects.get(pk=project.pk).answers_count == 65

    with CaptureQueriesContext(connection) as queries:
        page = client.get(url + "?page=2").content.decode()
    assert "(65)" in page
    assert "Page 2 of 2" in page
    assert "Question 64?" in page
    assert "Question 49?" not in page
    counts_over_answers = [
        q["sql"] for q in queries if "COUNT(" in q["sql"] and 'FROM "annotate_answer"' in q["sql"]
    ]
    assert counts_over_answers == []


@pytest.mark.django_db
def test_answers_added_or_deleted_in_the_admin_keep_the_page_count(admin_client, tmp_path):
    project = MembershipFactory(role=Role.ANALYST).project
    answers_import(project=project, path_or_file=_write(tmp_path / "a.jsonl", range(3)))

    response = admin_client.post(
        reverse("admin:annotate_answer_add"),
        {
            "project": project.pk,
            "external_id": "by-hand",
            "position": 3,
            "question": "Added by hand?",
            "text": "Yes.",
            "risk_category": "none",
            "answerable": "unknown",
            "reference": "",
            "metadata": "{}",
            "passages-TOTAL_FORMS": "0",
            "passages-INITIAL_FORMS": "0",
            "passages-MIN_NUM_FORMS": "0",
            "passages-MAX_NUM_FORMS": "1000",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Project.objects.get(pk=project.pk).answers_count == 4

    first_two = list(project.answers.order_by("position").values_list("pk", flat=True)[:2])
    response = admin_client.post(
        reverse("admin:annotate_answer_changelist"),
        {"action": "delete_selected", "_selected_action": first_two, "post": "yes"},
    )
    assert response.status_code == 302
    assert Project.objects.get(pk=project.pk).answers_count == 2

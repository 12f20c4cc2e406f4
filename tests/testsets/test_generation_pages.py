"""The knowledge base and generation pages through the Django client: leads upload and
generate, analysts read the documents and are refused every write."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.factories import MembershipFactory
from testsets.models import Document, GenerationJob, TestSet

pytestmark = pytest.mark.django_db
RULES = b"Refund requests must be submitted within 90 days.\n\nPasswords must never be shared."


@pytest.fixture
def people():
    lead = MembershipFactory(role="lead")
    analyst = MembershipFactory(role="analyst", project=lead.project)
    return lead.project, lead.user, analyst.user


def _upload(client, project, *files, **extra):
    url = reverse("testsets:documents-upload", args=[project.slug])
    return client.post(url, {"files": list(files), **extra})


def test_lead_uploads_several_files_and_the_list_shows_them(client, people):
    project, lead, _ = people
    client.force_login(lead)
    response = _upload(
        client,
        project,
        SimpleUploadedFile("rules.txt", RULES),
        SimpleUploadedFile(
            "kb.jsonl",
            b'{"id": "fr", "title": "Frais", "text": "Le prix est de 5 %.", "language": "fr"}',
        ),
    )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "2 documents added" in page
    assert "<code>rules</code>" in page
    assert "Frais" in page
    assert Document.objects.filter(project=project).count() == 2


def test_a_bad_file_lists_its_line_and_field_and_imports_nothing(client, people):
    project, lead, _ = people
    client.force_login(lead)
    response = _upload(
        client,
        project,
        SimpleUploadedFile("rules.txt", RULES),
        SimpleUploadedFile("kb.jsonl", b'{"id": "a", "text": "ok"}\n{"id": "b"}'),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was imported." in page
    assert "kb.jsonl, line 2</strong>, field <code>text</code>" in page
    assert not Document.objects.exists()


def test_analyst_reads_the_documents_but_cannot_upload_or_generate(client, people):
    project, lead, analyst = people
    client.force_login(analyst)
    page = client.get(reverse("testsets:documents", args=[project.slug]))
    assert page.status_code == 200
    assert "Upload documents" not in page.content.decode()
    # Below the role a page is a 404, never a 403 (tests/reliability/test_permissions.py).
    assert _upload(client, project, SimpleUploadedFile("r.txt", RULES)).status_code == 404
    generate = reverse("testsets:generate", args=[project.slug])
    assert (
        client.post(generate, {"name": "x", "kind": "offline", "per_document": 3}).status_code
        == 404
    )
    assert not Document.objects.exists()
    assert not TestSet.objects.exists()


def test_lead_sees_the_estimate_then_starts_and_follows_the_job(client, people):
    project, lead, _ = people
    client.force_login(lead)
    _upload(client, project, SimpleUploadedFile("rules.txt", RULES))
    url = reverse("testsets:generate", args=[project.slug])
    page = client.get(url).content.decode()
    assert "The offline generator is a baseline" in page
    assert "1 document, <strong>no LLM call</strong>" in page
    partial = client.get(
        url, {"name": "c", "kind": "offline", "per_document": 2}, headers={"HX-Request": "true"}
    )
    assert partial.content.decode().lstrip().startswith('<section id="estimate"')
    response = client.post(url, {"name": "critical", "kind": "offline", "per_document": 5})
    assert response.status_code == 302
    job = GenerationJob.objects.get()
    assert response["Location"] == reverse("testsets:generation-job", args=[project.slug, job.pk])
    page = client.get(response["Location"]).content.decode()
    assert "1 of 1 document done." in page
    assert f'href="/p/{project.slug}/testsets/{job.test_set_id}/"' in page
    # "within 90 days" and "must never": two questions kept, none dropped.
    assert '<tr><th>Kept (to review)</th><td class="num">2</td></tr>' in page
    polled = client.get(response["Location"], headers={"HX-Request": "true"})
    assert polled.status_code == 286  # htmx: stop polling, the job has finished


def test_llm_without_an_endpoint_is_refused_on_the_form(client, people, llm_endpoints):
    project, lead, _ = people
    client.force_login(lead)
    _upload(client, project, SimpleUploadedFile("rules.txt", RULES))
    url = reverse("testsets:generate", args=[project.slug])
    response = client.post(url, {"name": "c", "kind": "llm", "per_document": 2})
    assert response.status_code == 400
    assert "Choose the endpoint the LLM generator calls." in response.content.decode()
    assert "No LLM endpoint is declared" in response.content.decode()
    assert not GenerationJob.objects.exists()


def test_an_upload_over_the_limit_is_refused_before_it_is_read(client, people, settings):
    project, lead, _ = people
    settings.FAITHAUDIT_DOCUMENT_MAX_UPLOAD_BYTES = 100
    client.force_login(lead)
    response = _upload(client, project, SimpleUploadedFile("big.txt", b"word " * 100))
    assert response.status_code == 413
    assert "FAITHAUDIT_DOCUMENT_MAX_UPLOAD_BYTES" in response.content.decode()
    assert not Document.objects.exists()


def test_the_upload_needs_the_csrf_token(people):
    from django.test import Client

    project, lead, _ = people
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    assert _upload(client, project, SimpleUploadedFile("r.txt", RULES)).status_code == 403
    assert not Document.objects.exists()

"""The upload form and the export download, for leads only."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, Claim, Label, Membership, Role
from tests.factories import ProjectFactory

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def project():
    return ProjectFactory(slug="refunds")


def member(project, role, name):
    user = get_user_model().objects.create(username=name)
    Membership.objects.create(project=project, user=user, role=role)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def lead(project):
    return member(project, Role.LEAD, "lea")


@pytest.fixture
def analyst(project):
    return member(project, Role.ANALYST, "ana-lyst")


def upload(name="native.jsonl", content=None):
    content = (DATA / name).read_bytes() if content is None else content
    return {"file": SimpleUploadedFile(name, content), "format": "auto"}


def test_import_page_shows_the_form_to_a_lead(lead, project):
    response = lead.get(reverse("annotate:import", args=[project.slug]))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'enctype="multipart/form-data"' in page
    assert "RAGChecker" in page
    assert "import_answers FILE --project refunds" in page


def test_import_upload_imports_and_shows_counts(lead, project):
    response = lead.post(reverse("annotate:import", args=[project.slug]), upload())
    assert response.status_code == 200
    page = response.content.decode()
    assert "Imported 3 answers" in page
    assert "5 passages" in page
    assert "3 claims" in page
    assert "5 labels by 3 annotator names" in page
    assert "3 judge verdicts in 1 judge run" in page
    assert "<html" in page
    assert Answer.objects.filter(project=project).count() == 3


def test_import_upload_with_htmx_returns_only_the_result(lead, project):
    response = lead.post(
        reverse("annotate:import", args=[project.slug]), upload("ragas.csv"), **HTMX
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert page.strip().startswith('<section id="import-result"')
    assert "<html" not in page
    assert "Imported 2 answers</strong> (ragas, csv)" in page
    assert Answer.objects.filter(project=project).count() == 2


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_import_upload_with_errors_lists_them_and_imports_nothing(lead, project, headers):
    bad = b"\n".join(
        json.dumps(record).encode()
        for record in [
            {"id": "a1", "question": "q", "answer": "a", "pile": []},
            {"id": "a2", "question": "q", "answer": "a", "pile": [{"id": "d", "text": 12}]},
            {"id": "a1", "question": "q", "answer": "a", "pile": []},
            {"id": "a4", "question": "q", "answer": "a", "pile": [], "risk_category": "x"},
        ]
    )
    response = lead.post(
        reverse("annotate:import", args=[project.slug]), upload("bad.jsonl", bad), **headers
    )
    # htmx swaps only 2xx responses into the page; a plain form post gets the honest 400.
    assert response.status_code == (200 if headers else 400)
    page = response.content.decode()
    assert "Nothing was imported." in page
    assert (
        "<strong>line 2</strong>, field <code>pile[0].text</code>: expected a string, got 12"
        in page
    )
    assert (
        "<strong>line 4</strong>, field <code>risk_category</code>: unknown risk category" in page
    )
    assert (
        "<strong>line 3</strong>, field <code>id</code>: duplicate id: answer id &#x27;a1&#x27;"
        in page
    )
    assert Answer.objects.count() == 0


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
@pytest.mark.parametrize("size", [1_000, 200_000], ids=["over-the-cap", "over-content-length"])
def test_import_upload_over_the_size_cap_is_refused(lead, project, settings, size, headers):
    settings.IMPORT_MAX_UPLOAD_BYTES = 500
    line = json.dumps({"id": "a", "question": "q", "answer": "x" * size, "pile": []}).encode()
    response = lead.post(
        reverse("annotate:import", args=[project.slug]), upload("big.jsonl", line), **headers
    )
    assert response.status_code == (200 if headers else 413)
    page = response.content.decode()
    assert "larger than the 500\xa0bytes upload limit" in page
    assert "Nothing was imported" in page
    assert ("<html" in page) != bool(headers)
    assert Answer.objects.count() == 0


def test_import_upload_of_a_file_spooled_to_disk(lead, project):
    # Over FILE_UPLOAD_MAX_MEMORY_SIZE Django hands over a temporary file, not bytes in memory.
    pile = [{"id": "d", "text": "🧾 " + "long passage text " * 400}]
    content = "".join(
        json.dumps({"id": f"a{i}", "question": "q", "answer": "a", "pile": pile}) + "\n"
        for i in range(400)
    ).encode()
    assert len(content) > 2_500_000
    response = lead.post(
        reverse("annotate:import", args=[project.slug]), upload("big.jsonl", content)
    )
    assert response.status_code == 200
    assert "Imported 400 answers" in response.content.decode()
    assert Answer.objects.filter(project=project).count() == 400


def test_import_upload_still_needs_the_csrf_token(project):
    user = get_user_model().objects.create(username="lead2")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(reverse("annotate:import", args=[project.slug]), upload())
    assert response.status_code == 403
    assert Answer.objects.count() == 0


def test_import_is_not_for_analysts(analyst, project):
    url = reverse("annotate:import", args=[project.slug])
    assert analyst.get(url).status_code == 404
    assert analyst.post(url, upload()).status_code == 404
    assert Answer.objects.count() == 0


def test_import_is_not_for_non_members_or_anonymous(project):
    url = reverse("annotate:import", args=[project.slug])
    outsider = member(ProjectFactory(), Role.OWNER, "owner-elsewhere")
    assert outsider.post(url, upload()).status_code == 404
    response = Client().post(url, upload())
    assert response.status_code == 302
    assert "/login" in response["Location"]
    assert Answer.objects.count() == 0


def test_export_page_links_both_formats(lead, project):
    response = lead.get(reverse("annotate:export", args=[project.slug]))
    assert response.status_code == 200
    page = response.content.decode()
    assert "?format=csv" in page
    assert "?format=jsonl" in page


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_download_streams_a_named_file(lead, project, format):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    response = lead.get(reverse("annotate:export", args=[project.slug]), {"format": format})
    assert response.status_code == 200
    assert response.streaming
    disposition = response["Content-Disposition"]
    assert disposition.startswith('attachment; filename="refunds-claims-')
    assert disposition.endswith(f'.{format}"')
    body = b"".join(response.streaming_content).decode()
    if format == "jsonl":
        assert [json.loads(line)["id"] for line in body.splitlines()] == [
            "refund-1",
            "dose-2",
            "fee-3",
        ]
    else:
        assert body.count("\n") == 1 + Claim.objects.filter(project=project).count()
        assert "label:ana (imported):verdict" in body.splitlines()[0]
    assert Label.objects.filter(claim__project=project).count() == 5


def test_export_unknown_format_says_so(lead, project):
    response = lead.get(reverse("annotate:export", args=[project.slug]), {"format": "xml"})
    assert response.status_code == 400
    assert "Unknown export format" in response.content.decode()


def test_export_is_not_for_analysts(analyst, project):
    url = reverse("annotate:export", args=[project.slug])
    assert analyst.get(url).status_code == 404
    assert analyst.get(url, {"format": "csv"}).status_code == 404


# A SUPPORTED label without a quote, and fields the native format does not know.
UNQUOTED = {
    "id": "a1",
    "question": "How long do refunds take?",
    "answer": "Fourteen days.",
    "pile": [{"id": "p1", "text": "Refunds take 14 days.", "url": "https://x"}],
    "claims": [
        {
            "text": "Refunds take 14 days.",
            "confidence_score": 0.9,
            "labels": [{"annotator": "ext", "verdict": "SUPPORTED", "rater_id": 7}],
        }
    ],
    "source_dataset": "third-party",
}


def test_the_import_page_names_unknown_fields():
    project = ProjectFactory(slug="page", quote_required=False)
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    content = (json.dumps(UNQUOTED) + "\n").encode()
    response = client.post(
        reverse("annotate:import", args=[project.slug]),
        {"file": SimpleUploadedFile("a.jsonl", content), "format": "auto"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-testid="import-warnings"' in page
    assert "4 unknown fields ignored" in page
    assert "line 1, field claims[0].confidence_score: unknown field, ignored" in page

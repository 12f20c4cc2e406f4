"""The knowledge base's import: each format, offsets, errors that write nothing, re-imports."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.factories import ProjectFactory
from testsets.chunking import passage_spans, sentence_spans
from testsets.models import Document, DocumentPassage
from testsets.services.documents import DocumentImportError, documents_import, html_text

pytestmark = pytest.mark.django_db

POLICY = (
    "# Refund policy\n\n"
    "Refund requests must be submitted within 90 days.\r\n"
    "Refunds are paid to the original card.\n\n"
    "Customers under 18 may not open an account."
)


def _jsonl(*rows) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()


def _passages(document):
    return [(p.position, p.start, p.end, p.text) for p in document.passages.order_by("position")]


def test_markdown_file_becomes_one_document_titled_by_its_heading():
    project = ProjectFactory()
    result = documents_import(project=project, files=[("refunds.md", POLICY.encode())])
    document = Document.objects.get(project=project)
    assert result.created == ["refunds"]
    assert document.external_id == "refunds"
    assert document.title == "Refund policy"
    assert document.language == "en"
    assert "\r" not in document.text  # line ends made \n: offsets count in that text
    # Three paragraphs, 149 characters in all: one passage of the default 1,500.
    assert _passages(document) == [(0, 0, len(document.text), document.text)]


def test_passages_are_cut_at_paragraphs_and_keep_code_point_offsets(settings):
    settings.FAITHAUDIT_DOCUMENT_PASSAGE_CHARS = 60
    project = ProjectFactory()
    text = "Fees: 5 € 🙂 per card.\n\nA second paragraph that is long enough alone."
    documents_import(project=project, files=[("fees.txt", text.encode())])
    document = Document.objects.get()
    # Both paragraphs together are 68 > 60 characters: one passage each. The emoji is one
    # code point (two UTF-16 units), so the second passage starts at 23, not 24.
    assert _passages(document) == [
        (0, 0, 21, "Fees: 5 € 🙂 per card."),
        (1, 23, 68, "A second paragraph that is long enough alone."),
    ]
    for passage in document.passages.all():
        assert document.text[passage.start : passage.end] == passage.text


def test_a_long_paragraph_is_cut_between_sentences_never_over_the_limit():
    text = "One two three. Four five six seven. Eight nine."
    spans = passage_spans(text, 20)
    assert [text[s:e] for s, e in spans] == [
        "One two three.",
        "Four five six seven.",
        "Eight nine.",
    ]
    lines = "A b. C d!\nE f"
    assert [lines[s:e] for s, e in sentence_spans(lines)] == ["A b.", "C d!", "E f"]


def test_html_keeps_visible_text_drops_scripts_and_styles():
    page = (
        "<html><head><title>Safety notice</title><style>p{color:red}</style></head><body>"
        "<script>alert('x')</script><h1>Notice</h1><p>Helmets <b>must</b> be worn.</p>"
        "<ul><li>Gloves are optional.</li></ul></body></html>"
    )
    assert html_text(page) == (
        "Safety notice",
        "Notice\n\nHelmets must be worn.\n\nGloves are optional.",
    )
    project = ProjectFactory()
    documents_import(project=project, files=[("notice.html", page.encode())])
    document = Document.objects.get()
    assert document.title == "Safety notice"
    assert "alert" not in document.text
    assert "color" not in document.text


def test_jsonl_imports_one_document_per_line_with_its_language():
    project = ProjectFactory()
    data = _jsonl(
        {
            "id": "fr-1",
            "title": "Remboursement",
            "text": "Le délai est de 30 jours.",
            "language": "fr",
        },
        {"id": 7, "text": "The fee is 20%."},
    )
    result = documents_import(project=project, files=[("kb.jsonl", data)])
    assert sorted(result.created) == ["7", "fr-1"]
    stored = {d.external_id: (d.title, d.language) for d in Document.objects.all()}
    assert stored == {"fr-1": ("Remboursement", "fr"), "7": ("", "en")}
    assert result.passages == 2


def test_every_error_names_file_line_and_field_and_nothing_is_written():
    project = ProjectFactory()
    bad = (
        _jsonl(
            {"id": "a", "text": "Fine text."},
            {"id": "", "text": "No id."},
            {"id": "c", "text": 12},
            {"id": "d", "text": "x", "colour": "red"},
        )
        + b"\n{not json"
    )
    with pytest.raises(DocumentImportError) as caught:
        documents_import(project=project, files=[("good.txt", b"Good text."), ("kb.jsonl", bad)])
    assert [str(i) for i in caught.value.issues] == [
        "kb.jsonl, line 2, field 'id': give the document's id, a non-empty string",
        "kb.jsonl, line 3, field 'text': give the document's text, a non-empty string",
        "kb.jsonl, line 4, field 'colour': unknown field (known: id, title, text, language)",
        "kb.jsonl, line 5, field 'line': not valid JSON (Expecting property name enclosed "
        "in double quotes)",
    ]
    assert Document.objects.count() == 0
    assert DocumentPassage.objects.count() == 0


def test_limits_name_their_setting(settings):
    settings.FAITHAUDIT_DOCUMENT_MAX_CHARS = 10
    project = ProjectFactory()
    with pytest.raises(DocumentImportError) as caught:
        documents_import(
            project=project, files=[("kb.jsonl", _jsonl({"id": "x", "text": "12345678901"}))]
        )
    assert str(caught.value) == (
        "kb.jsonl, line 1, field 'text': is 11 characters long; at most 10 are allowed "
        "(operator setting FAITHAUDIT_DOCUMENT_MAX_CHARS)"
    )
    with pytest.raises(DocumentImportError, match=r"notes.pdf, field 'file': unknown kind"):
        documents_import(project=project, files=[("notes.pdf", b"%PDF")])
    with pytest.raises(DocumentImportError, match=r"bad.txt, line 2, field 'file': not UTF-8"):
        documents_import(project=project, files=[("bad.txt", b"ok\n\xff")])
    assert Document.objects.count() == 0


def test_reimport_is_a_no_op_and_a_changed_text_is_refused_unless_replaced():
    project = ProjectFactory()
    first = _jsonl({"id": "a", "text": "Fees are 5%."}, {"id": "b", "text": "Age 18."})
    documents_import(project=project, files=[("kb.jsonl", first)])
    ids = sorted(DocumentPassage.objects.values_list("pk", flat=True))
    again = documents_import(project=project, files=[("kb.jsonl", first)])
    assert (again.created, sorted(again.unchanged), again.passages) == ([], ["a", "b"], 0)
    assert sorted(DocumentPassage.objects.values_list("pk", flat=True)) == ids

    changed = _jsonl({"id": "a", "text": "Fees are 7%."}, {"id": "new", "text": "New text."})
    with pytest.raises(DocumentImportError) as caught:
        documents_import(project=project, files=[("kb2.jsonl", changed)])
    assert str(caught.value).startswith(
        "kb2.jsonl, line 1, field 'text': document 'a' is already stored with a different text"
    )
    assert not Document.objects.filter(external_id="new").exists()  # nothing written

    replaced = documents_import(project=project, files=[("kb2.jsonl", changed)], replace=True)
    assert (replaced.replaced, replaced.created) == (["a"], ["new"])
    document = Document.objects.get(external_id="a")
    assert [p.text for p in document.passages.all()] == ["Fees are 7%."]


def test_the_same_text_under_another_id_is_stored_once():
    project = ProjectFactory()
    documents_import(project=project, files=[("a.txt", b"Same words.")])
    result = documents_import(project=project, files=[("b.txt", b"Same words.")])
    assert result.same_text == [("b", "a")]
    assert Document.objects.count() == 1


def test_import_documents_command(tmp_path, capsys):
    project = ProjectFactory(slug="kb")
    (tmp_path / "rules.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "kb.jsonl").write_bytes(_jsonl({"id": "j1", "text": "Only adults may apply."}))
    call_command("import_documents", "kb", str(tmp_path / "rules.md"), str(tmp_path / "kb.jsonl"))
    assert "2 documents added" in capsys.readouterr().out
    assert sorted(
        Document.objects.filter(project=project).values_list("external_id", flat=True)
    ) == ["j1", "rules"]
    (tmp_path / "bad.jsonl").write_bytes(b'{"id": "z"}')
    with pytest.raises(CommandError, match=r"bad.jsonl, line 1, field 'text'"):
        call_command("import_documents", "kb", str(tmp_path / "bad.jsonl"))

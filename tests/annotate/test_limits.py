"""Operator limits on pile size and text length: refused on import (line and field named,
nothing imported) and on every claim write; long piles shown a page at a time."""

import copy
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, Claim, Label, Membership, Passage, Role
from annotate.services.claims import ClaimsError, claim_add, claim_edit, claims_merge
from interchange.services.imports import ImportFailed, answers_import
from judges.models import JudgeVerdict
from tests.factories import AnswerFactory, ClaimFactory, PassageFactory, ProjectFactory
from tests.reliability.fuzzing import native_record, ragas_record, ragchecker_record, serialise

pytestmark = pytest.mark.django_db

TABLES = [Answer, Passage, Claim, Label, JudgeVerdict, Membership, get_user_model()]
# Where the second record of a generated file starts (serialise writes JSON on one line).
SECOND = {"jsonl": "line 2", "json": "record 2", "csv": "line 3"}
FORMATS = [
    f"{schema}-{container}"
    for schema in ("native", "ragas", "ragchecker")
    for container in ("jsonl", "json", "csv")
]


def counts():
    return {model.__name__: model.objects.count() for model in TABLES}


def record(fmt: str, n: int) -> dict:
    make = {"native": native_record, "ragas": ragas_record, "ragchecker": ragchecker_record}
    return copy.deepcopy(make[fmt.split("-")[0]](n))


def _more_passages(schema, bad):
    if schema == "native":
        bad["pile"].append({"id": "doc-3", "text": "Store credit never expires."})
        return "pile"
    if schema == "ragas":
        bad["retrieved_contexts"].append("Store credit never expires.")
        return "retrieved_contexts"
    bad["retrieved_context"].append({"doc_id": "d3", "text": "Store credit never expires."})
    for labels in bad["retrieved2response"]:
        labels.append("Neutral")
    return "retrieved_context"


def _long_passage(schema, bad):
    long = "x" * 68  # the records' longest passage is 67 characters: the limit below
    if schema == "native":
        bad["pile"][1]["text"] = long
        return "pile[1].text"
    if schema == "ragas":
        bad["retrieved_contexts"][1] = long
        return "retrieved_contexts[1]"
    bad["retrieved_context"][1]["text"] = long
    return "retrieved_context[1].text"


def _long_answer(schema, bad):
    key = {"native": "answer", "ragas": "response", "ragchecker": "response"}[schema]
    bad[key] = "y" * 51
    return key


def _long_question(schema, bad):
    key = {"native": "question", "ragas": "user_input", "ragchecker": "query"}[schema]
    bad[key] = "q" * 41
    return key


def _long_claim(schema, bad):
    if schema == "native":
        bad["claims"][0]["text"] = "c" * 31
        return "claims[0].text"
    bad["response_claims"][1] = "c" * 31
    return "response_claims[1]"


def _more_claims(schema, bad):
    if schema == "native":
        bad["claims"] += [{"text": "Second claim."}, {"text": "Third claim."}]
        return "claims"
    bad["response_claims"].append("A third claim.")
    bad["retrieved2response"].append(["Neutral", "Neutral"])
    return "response_claims"


# limit name: (setting, value the good record passes, how the bad record breaks it)
LIMITS = {
    "passages per answer": ("FAITHAUDIT_MAX_PASSAGES_PER_ANSWER", 2, _more_passages),
    "characters per passage": ("FAITHAUDIT_MAX_PASSAGE_CHARS", 67, _long_passage),
    "characters per answer": ("FAITHAUDIT_MAX_ANSWER_CHARS", 50, _long_answer),
    "characters per question": ("FAITHAUDIT_MAX_QUESTION_CHARS", 40, _long_question),
    "characters per claim": ("FAITHAUDIT_MAX_CLAIM_CHARS", 30, _long_claim),
    "claims per answer": ("FAITHAUDIT_MAX_CLAIMS_PER_ANSWER", 2, _more_claims),
}
CASES = [
    pytest.param(fmt, limit, id=f"{fmt}-{limit}")
    for fmt in FORMATS
    for limit in LIMITS
    if not (fmt.startswith("ragas") and "claim" in limit)  # RAGAS samples carry no claims
]


def import_refused(project, content, name) -> list:
    before = counts()
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
    assert counts() == before, "a refused file must leave nothing behind"
    return failed.value.issues


@pytest.mark.parametrize(("fmt", "limit"), CASES)
def test_import_over_a_limit_names_line_and_field_and_imports_nothing(fmt, limit, settings):
    setting, value, breaks = LIMITS[limit]
    setattr(settings, setting, value)
    schema, container = fmt.split("-")
    good, bad = record(fmt, 1), record(fmt, 2)
    field = breaks(schema, bad)
    project = ProjectFactory()
    # The good record alone is within the limit: the limit is what refuses the file.
    answers_import(project=project, path_or_file=SimpleUploadedFile(*serialise(fmt, [good])[::-1]))
    Label.objects.filter(claim__project=project).delete()
    Answer.objects.filter(project=project).delete()
    content, name = serialise(fmt, [record(fmt, 3), bad])
    (issue,) = import_refused(project, content, name)
    assert issue.location.startswith(SECOND[container]), str(issue)
    assert issue.field == field, str(issue)
    assert f"at most {value}" in issue.message, str(issue)
    assert setting in issue.message, "the operator setting is named"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_with_too_many_answers_is_refused_at_the_first_answer_over(fmt, settings):
    settings.FAITHAUDIT_MAX_ANSWERS_PER_FILE = 2
    project = ProjectFactory()
    content, name = serialise(fmt, [record(fmt, n) for n in (1, 2, 3)])
    (issue,) = import_refused(project, content, name)
    third = {"jsonl": "line 3", "json": "record 3", "csv": "line 4"}[fmt.split("-")[1]]
    assert issue.location.startswith(third), str(issue)
    assert "at most 2 answers" in issue.message
    assert "FAITHAUDIT_MAX_ANSWERS_PER_FILE" in issue.message


def test_the_defaults_accept_the_shipped_sample_files():
    """Generous defaults: what real RAG piles look like goes in untouched."""
    from django.conf import settings

    assert settings.FAITHAUDIT_MAX_PASSAGES_PER_ANSWER >= 200
    assert settings.FAITHAUDIT_MAX_PASSAGE_CHARS >= 20_000
    assert settings.FAITHAUDIT_MAX_ANSWER_CHARS >= 50_000
    assert settings.FAITHAUDIT_MAX_CLAIMS_PER_ANSWER >= 500
    assert settings.FAITHAUDIT_MAX_ANSWERS_PER_FILE >= 1_000_000


# -- the web upload ---------------------------------------------------------------------------


def lead_client(project):
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    return client


def test_the_upload_page_shows_the_limit_error_and_imports_nothing(settings):
    settings.FAITHAUDIT_MAX_PASSAGES_PER_ANSWER = 2
    project = ProjectFactory(slug="limits")
    client = lead_client(project)
    bad = record("native-jsonl", 2)
    _more_passages("native", bad)
    content, name = serialise("native-jsonl", [record("native-jsonl", 1), bad])
    before = counts()
    response = client.post(
        reverse("annotate:import", args=[project.slug]),
        {"file": SimpleUploadedFile(name, content), "format": "auto"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "line 2" in page
    assert "pile" in page
    assert "has 3 passages; at most 2" in page
    assert counts() == before


# -- the claims editor --------------------------------------------------------------------------


@pytest.fixture
def editor(settings):
    settings.FAITHAUDIT_MAX_CLAIM_CHARS = 30
    settings.FAITHAUDIT_MAX_CLAIMS_PER_ANSWER = 2
    project = ProjectFactory(slug="editor")
    answer = AnswerFactory(project=project, text="Refunds take 14 days. Cash is final.")
    claim = ClaimFactory(answer=answer, text="Refunds take 14 days.", position=0)
    return project, answer, claim, lead_client(project)


def test_the_claims_editor_refuses_a_new_claim_one_character_too_long(editor):
    project, answer, _, client = editor
    response = client.post(
        reverse("annotate:claim-add", args=[project.slug, answer.pk]),
        {"text": "c" * 31},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert "31 characters" in page
    assert "at most 30" in page
    assert answer.claims.count() == 1
    client.post(
        reverse("annotate:claim-add", args=[project.slug, answer.pk]),
        {"text": "c" * 30},
        HTTP_HX_REQUEST="true",
    )
    assert answer.claims.count() == 2, "exactly the limit fits"


def test_the_claims_editor_refuses_an_edit_one_character_too_long(editor):
    project, _, claim, client = editor
    response = client.post(
        reverse("annotate:claim-edit", args=[project.slug, claim.pk]),
        {"text": "e" * 31},
        HTTP_HX_REQUEST="true",
    )
    assert "at most 30" in response.content.decode()
    claim.refresh_from_db()
    assert claim.text == "Refunds take 14 days."


def test_the_claims_editor_refuses_a_claim_over_the_claims_per_answer(editor):
    project, answer, _, client = editor
    url = reverse("annotate:claim-add", args=[project.slug, answer.pk])
    client.post(url, {"text": "Cash is final."}, HTTP_HX_REQUEST="true")
    response = client.post(url, {"text": "One too many."}, HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert "at most 2 claims" in page
    assert answer.claims.count() == 2


def test_the_claim_services_enforce_the_limits_for_every_caller(editor):
    """The API will call these services: the limits live there, not only in the form."""
    _, answer, claim, _ = editor
    with pytest.raises(ClaimsError, match="at most 30"):
        claim_add(answer=answer, text="c" * 31, user=None)
    with pytest.raises(ClaimsError, match="at most 30"):
        claim_edit(claim=claim, text="c" * 31, user=None)
    second = claim_add(answer=answer, text="Cash is final ok.", user=None)
    with pytest.raises(ClaimsError, match="at most 2 claims"):
        claim_add(answer=answer, text="Third.", user=None)
    with pytest.raises(ClaimsError, match="at most 30"):
        claims_merge(first=claim, second=second, user=None)
    assert [c.text for c in answer.claims.order_by("position")] == [
        "Refunds take 14 days.",
        "Cash is final ok.",
    ]


# -- long piles render a page at a time --------------------------------------------------------

PASSAGE_ELEMENT = re.compile(r'<p class="passage-text[^"]*"[^>]*data-passage-id="(\d+)"')


@pytest.fixture
def long_pile(settings, tmp_path):
    """One imported answer with 3,000 passages (under a raised limit) and one claim."""
    settings.FAITHAUDIT_MAX_PASSAGES_PER_ANSWER = 5000
    project = ProjectFactory(slug="long-pile", quote_required=True)
    pile = [
        {"id": f"doc-{rank}", "title": f"Section {rank}", "text": f"Passage {rank} says {rank}."}
        for rank in range(1, 3001)
    ]
    path = tmp_path / "long.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "long",
                "question": "What does passage 25 say?",
                "answer": "Passage 25 says 25.",
                "pile": pile,
                "claims": [{"text": "Passage 25 says 25."}],
            }
        )
        + "\n"
    )
    answers_import(project=project, path_or_file=path)
    user = get_user_model().objects.create(username="ana")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    answer = Answer.objects.get(project=project)
    return project, answer, answer.claims.get(), client


def shown_ranks(page: str, answer) -> list[int]:
    ids = [int(i) for i in PASSAGE_ELEMENT.findall(page)]
    ranks = dict(Passage.objects.filter(pk__in=ids).values_list("pk", "rank"))
    return [ranks[i] for i in ids]


def test_the_labelling_page_shows_a_long_pile_one_page_at_a_time(long_pile, settings):
    project, answer, claim, client = long_pile
    size = settings.FAITHAUDIT_PILE_PAGE_SIZE
    url = reverse("annotate:label-claim", args=[project.slug, claim.pk])
    response = client.get(url)
    page = response.content.decode()
    assert response.status_code == 200
    assert shown_ranks(page, answer) == list(range(1, size + 1))
    assert len(response.content) < 100_000, "bounded, whatever the pile"
    assert page.count("<option value=") <= size + 5, "the quote's passage list is bounded too"
    assert re.search(r"of 3,?000 passages", page), "the pile's size is said"
    assert f'href="{url}?pile=2"' in page, "a plain link reaches the next page"

    second = client.get(url, {"pile": 2})
    assert shown_ranks(second.content.decode(), answer) == list(range(size + 1, 2 * size + 1))
    last = client.get(url, {"pile": 10_000})  # past the end: the last page
    assert shown_ranks(last.content.decode(), answer)[-1] == 3000


def test_the_pile_pages_with_htmx_swap_only_the_pile(long_pile, settings):
    project, answer, claim, client = long_pile
    url = reverse("annotate:label-claim", args=[project.slug, claim.pk])
    response = client.get(url, {"pile": 2}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="pile")
    page = response.content.decode()
    assert page.lstrip().startswith('<section id="pile"')
    assert "label-form" not in page, "the form (and what the analyst typed) stays"
    size = settings.FAITHAUDIT_PILE_PAGE_SIZE
    assert shown_ranks(page, answer) == list(range(size + 1, 2 * size + 1))
    assert 'hx-swap-oob="true"' in page, "the quote's passage list follows the page"


def test_a_quote_on_a_passage_of_page_two_is_saved(long_pile):
    project, answer, claim, client = long_pile
    passage = answer.passages.get(rank=25)
    url = reverse("annotate:label-claim", args=[project.slug, claim.pk])
    page = client.get(url, {"pile": 2}).content.decode()
    assert f'data-passage-id="{passage.pk}"' in page
    assert f'<option value="{passage.pk}"' in page
    response = client.post(
        reverse("annotate:label-save", args=[project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": passage.pk,
            "start_utf16": 0,
            "end_utf16": len("Passage 25 says 25."),
            "quote": "Passage 25 says 25.",
        },
    )
    assert response.status_code == 302
    label = Label.objects.get(claim=claim)
    assert label.evidence_passage_id == passage.pk
    assert label.evidence_quote == "Passage 25 says 25."
    # Back on the claim, the saved quote's passage is offered even on page 1.
    again = client.get(url).content.decode()
    assert re.search(rf'<option value="{passage.pk}"[^>]* selected', again)


def test_the_answer_detail_page_shows_a_long_pile_one_page_at_a_time(long_pile, settings):
    project, answer, _, client = long_pile
    size = settings.FAITHAUDIT_PILE_PAGE_SIZE
    url = reverse("annotate:answer-detail", args=[project.slug, answer.pk])
    page = client.get(url).content.decode()
    assert shown_ranks(page, answer) == list(range(1, size + 1))
    assert f'href="{url}?pile=2"' in page
    second = client.get(url, {"pile": 150}).content.decode()
    assert shown_ranks(second, answer) == list(range(149 * size + 1, 150 * size + 1))


def test_a_long_claims_list_on_the_answer_detail_page_is_paged(settings):
    settings.FAITHAUDIT_PILE_PAGE_SIZE = 20
    project = ProjectFactory(slug="many-claims")
    answer = AnswerFactory(project=project)
    PassageFactory(answer=answer, rank=1)
    Claim.objects.bulk_create(
        Claim(project=project, answer=answer, text=f"Claim number {i}.", position=i)
        for i in range(300)
    )
    client = lead_client(project)
    url = reverse("annotate:answer-detail", args=[project.slug, answer.pk])
    page = client.get(url).content.decode()
    assert page.count("Claim number ") <= 100
    assert "Claim number 0." in page
    later = client.get(url, {"claims": 3}).content.decode()
    assert "Claim number 250." in later


def test_the_facts_page_shows_a_long_pile_one_page_at_a_time(long_pile, settings):
    project, answer, _, client = long_pile
    size = settings.FAITHAUDIT_PILE_PAGE_SIZE
    url = reverse("annotate:facts", args=[project.slug, answer.pk])
    page = client.get(url).content.decode()
    shown = re.findall(r'data-testid="passage-(\d+)"', page)
    assert [int(rank) for rank in shown] == list(range(1, size + 1))
    assert f'href="{url}?pile=2"' in page
    passage = answer.passages.get(rank=25)
    response = client.post(
        reverse("annotate:fact-add", args=[project.slug, answer.pk]),
        {"passage": passage.pk, "quote": "says 25"},
        HTTP_HX_REQUEST="true",
    )
    marked = response.content.decode()
    assert answer.facts.get().passage_id == passage.pk
    # The answer comes back on the page of the passage just marked.
    assert 'data-testid="passage-25"' in marked
    assert marked.count('data-testid="passage-') <= size


def test_the_adjudication_page_cuts_long_answers_and_passages_around_what_is_marked():
    """20 cards a page, each with its answer and quoted passages: cut to a window around the
    claim and the quote, the whole text one link away (the answer page)."""
    from tests.factories import LabelFactory, UserFactory

    project = ProjectFactory(slug="adjudicate-long")
    filler = "Filler sentence of the answer. " * 1000  # 31,000 characters each side
    answer = AnswerFactory(project=project, text=f"{filler}Refunds take 14 days. {filler}")
    passage = PassageFactory(
        answer=answer, rank=1, text=f"{filler}Refunds take 14 days here. {filler}"
    )
    start = len(filler)
    claim = ClaimFactory(
        answer=answer, text="Refunds take 14 days.", span_start=start, span_end=start + 21
    )
    LabelFactory(
        claim=claim,
        annotator=UserFactory(),
        verdict="SUPPORTED",
        evidence_passage=passage,
        evidence_start=start,
        evidence_end=start + 20,
        evidence_quote="Refunds take 14 days",
    )
    LabelFactory(claim=claim, annotator=UserFactory(), verdict="NOT_IN_PILE")
    client = lead_client(project)
    response = client.get(reverse("annotate:adjudicate", args=[project.slug]))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Refunds take 14 days." in page
    assert len(response.content) < 30_000, "not the 124,000 characters of answer and passage"
    assert reverse("annotate:answer-detail", args=[project.slug, answer.pk]) in page

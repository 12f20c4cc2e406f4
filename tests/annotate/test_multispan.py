"""Evidence in more than one span (issue 19, item 1): a decision that needs two sentences, in two
passages or two places of one. The first span stays in the label's own columns; the others are
`EvidenceSpan` rows, verified in code points like the first."""

import csv
import io
import json

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotate.models import EvidenceSpan, Fact, Label, LabelHistory, Role, Verdict
from annotate.services.label_undo import label_undo
from annotate.services.labels import LabelError, label_save
from annotate.services.review import facts_grounded_for_project
from interchange.importers.issues import ImportFailed
from interchange.services.exports import claims_export
from interchange.services.imports import answers_import
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
)

pytestmark = pytest.mark.django_db

HOURS = "Open Monday to Friday 9–17. Closed on Sunday 📚 and on public holidays."
FEES = "Late returns cost 20 cents a day. Lost books are charged at cost."
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pile():
    membership = MembershipFactory()
    answer = AnswerFactory(project=membership.project, question="When and at what cost?")
    hours = PassageFactory(answer=answer, rank=1, title="Hours", text=HOURS)
    fees = PassageFactory(answer=answer, rank=2, title="Fees", text=FEES)
    claim = ClaimFactory(answer=answer, text="Closed Sunday; late fees 20 cents.", queue_key=1)
    return membership, claim, hours, fees


def span(passage, quote, *, after=0):
    """`label_save`'s span dict for `quote`'s first place in `passage` (code points)."""
    start = passage.text.index(quote, after)
    return {"passage": passage, "start": start, "end": start + len(quote), "quote": quote}


def test_a_label_keeps_two_spans_in_two_passages_and_its_history_records_both():
    membership, claim, hours, fees = pile()
    first = span(hours, "Closed on Sunday")
    second = span(fees, "Late returns cost 20 cents a day.")
    label = label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED, **first,
        more=[second],
    )  # fmt: skip
    label.refresh_from_db()
    assert (label.evidence_passage, label.evidence_quote) == (hours, "Closed on Sunday")
    assert HOURS[label.evidence_start : label.evidence_end] == "Closed on Sunday"
    [extra] = label.more_spans.all()
    assert (extra.number, extra.passage, extra.quote) == (
        2,
        fees,
        "Late returns cost 20 cents a day.",
    )
    assert (extra.start, extra.end) == (0, 33)  # counted by hand in FEES
    [history] = LabelHistory.objects.filter(claim=claim)
    assert history.more_spans == [
        {"passage_id": fees.pk, "start": 0, "end": 33, "quote": "Late returns cost 20 cents a day."}
    ]


def test_two_places_of_one_passage_after_an_emoji_are_kept_in_code_points():
    membership, claim, hours, _ = pile()
    # "public holidays" lies after "📚": one code point (two UTF-16 units) before it.
    later = span(hours, "public holidays")
    assert later["start"] == HOURS.index("public")  # code points, as Python counts
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"), more=[later],
    )  # fmt: skip
    extra = EvidenceSpan.objects.get()
    assert HOURS[extra.start : extra.end] == "public holidays"


@pytest.mark.parametrize(
    ("second", "message"),
    [
        # overlapping the first span ("Sunday" is inside "Closed on Sunday")
        ({"start": 38, "end": 44, "quote": "Sunday"}, r"Span 2 overlaps span 1 in passage #1"),
        # the text is not what the passage says at those offsets
        ({"start": 0, "end": 4, "quote": "Shut"}, r"Span 2: .*not in the pile.*'Open'"),
        # offsets past the passage's end
        ({"start": 70, "end": 90, "quote": "x" * 20}, r"Span 2: .*runs past the end"),
        # a start after the end
        ({"start": 9, "end": 4, "quote": "x"}, r"Span 2: .*not a valid range"),
    ],
)
def test_a_wrong_second_span_is_refused_naming_it_and_nothing_is_saved(second, message):
    membership, claim, hours, _ = pile()
    with pytest.raises(LabelError, match=message):
        label_save(
            claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
            **span(hours, "Closed on Sunday"), more=[{"passage": hours, **second}],
        )  # fmt: skip
    assert not Label.objects.exists()
    assert not EvidenceSpan.objects.exists()


def test_spans_touching_without_overlapping_are_accepted():
    membership, claim, hours, _ = pile()
    first = span(hours, "Open Monday")
    touching = span(hours, " to Friday")  # starts where the first ends (11)
    assert touching["start"] == first["end"] == 11
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED, **first,
        more=[touching],
    )  # fmt: skip
    assert EvidenceSpan.objects.count() == 1


def test_the_third_span_overlapping_the_second_is_named():
    membership, claim, hours, fees = pile()
    with pytest.raises(LabelError, match=r"Span 3 overlaps span 2 in passage #2"):
        label_save(
            claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
            **span(hours, "Closed on Sunday"),
            more=[span(fees, "20 cents a day"), span(fees, "cents")],
        )  # fmt: skip


def test_a_span_from_another_answers_pile_is_refused():
    membership, claim, hours, _ = pile()
    elsewhere = PassageFactory(text=HOURS)
    with pytest.raises(LabelError, match=r"Span 2: The quoted passage is not in this answer"):
        label_save(
            claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
            **span(hours, "Closed on Sunday"), more=[span(elsewhere, "Open Monday")],
        )  # fmt: skip


def test_not_in_pile_refuses_extra_spans():
    membership, claim, hours, fees = pile()
    with pytest.raises(LabelError, match="NOT_IN_PILE label .* takes no quote"):
        label_save(
            claim=claim, annotator=membership.user, verdict=Verdict.NOT_IN_PILE,
            **span(hours, "Closed on Sunday"), more=[span(fees, "Late returns")],
        )  # fmt: skip
    assert not Label.objects.exists()


def test_more_than_five_spans_are_refused():
    membership, claim, hours, fees = pile()
    words = ["Late", "returns", "cost", "20", "cents"]
    with pytest.raises(LabelError, match="at most 5 spans; this one has 6"):
        label_save(
            claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
            **span(hours, "Closed on Sunday"), more=[span(fees, word) for word in words],
        )  # fmt: skip


def test_the_database_refuses_a_span_whose_offsets_disagree_with_its_quote():
    membership, claim, hours, fees = pile()
    label = label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"),
    )  # fmt: skip
    bad = [
        {"number": 2, "start": 0, "end": 3, "quote": "Late"},  # 3 ≠ 0 + len("Late")
        {"number": 2, "start": 0, "end": 0, "quote": ""},  # empty
        {"number": 1, "start": 0, "end": 4, "quote": "Late"},  # number 1 is the label's own
        {"number": 6, "start": 0, "end": 4, "quote": "Late"},  # past the limit
    ]
    for fields in bad:
        with pytest.raises(IntegrityError), transaction.atomic():
            EvidenceSpan.objects.create(label=label, passage=fees, **fields)
    EvidenceSpan.objects.create(label=label, passage=fees, number=2, start=0, end=4, quote="Late")
    with pytest.raises(IntegrityError), transaction.atomic():
        EvidenceSpan.objects.create(
            label=label, passage=fees, number=2, start=5, end=12, quote="returns"
        )


def test_saving_again_replaces_the_spans_and_undo_brings_the_earlier_ones_back():
    membership, claim, hours, fees = pile()
    user = membership.user
    first = span(hours, "Closed on Sunday")
    label_save(
        claim=claim, annotator=user, verdict=Verdict.SUPPORTED, **first,
        more=[span(fees, "20 cents a day"), span(hours, "public holidays")],
    )  # fmt: skip
    label_save(claim=claim, annotator=user, verdict=Verdict.SUPPORTED, **first)
    assert not EvidenceSpan.objects.exists()  # the second save quoted one span
    label_undo(user=user, project=claim.project)
    label = Label.objects.get()
    assert [(s.number, s.quote) for s in label.more_spans.all()] == [
        (2, "20 cents a day"),
        (3, "public holidays"),
    ]
    assert LabelHistory.objects.filter(claim=claim).last().more_spans[1]["quote"] == (
        "public holidays"
    )
    label_undo(user=user, project=claim.project)  # the creation: the label and its spans go
    assert not Label.objects.exists()
    assert not EvidenceSpan.objects.exists()


def _save_three_spans(client, claim, hours, fees, **extra):
    """Save "Open Monday", "Late" and "public holidays" as the screen sends them (UTF-16: the
    browser counts "📚" as two units, so "public" starts one unit later)."""
    holidays = HOURS.index("public holidays")
    return client.post(
        reverse("annotate:label-save", args=[claim.project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": hours.pk,
            "start_utf16": 0,
            "end_utf16": 11,
            "quote": "Open Monday",
            "more_passage": [fees.pk, hours.pk],
            "more_start_utf16": [0, holidays + 1],
            "more_end_utf16": [4, holidays + 1 + 15],
            "more_quote": ["Late", "public holidays"],
        },
        **extra,
    )


def test_the_screen_saves_two_spans_sent_in_utf16_and_shows_them_again(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    project = claim.project
    holidays = HOURS.index("public holidays")
    response = _save_three_spans(client, claim, hours, fees, **HTMX)
    assert response.status_code == 200
    label = Label.objects.get()
    assert [(s.number, s.passage_id, s.start, s.quote) for s in label.more_spans.all()] == [
        (2, fees.pk, 0, "Late"),
        (3, hours.pk, holidays, "public holidays"),
    ]
    html = client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk]))
    html = html.content.decode()
    assert html.count('class="quote-span"') == 2
    assert f'name="more_start_utf16" value="{holidays + 1}"' in html  # UTF-16 again
    assert 'passage #<span class="span-rank">2</span>' in html
    assert '<span class="visually-hidden">Span 3:</span>' in html


def test_the_screen_names_the_wrong_span_and_keeps_what_was_sent(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    project = claim.project
    response = client.post(
        reverse("annotate:label-save", args=[project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": hours.pk,
            "start_utf16": 0,
            "end_utf16": 11,
            "quote": "Open Monday",
            "more_passage": [fees.pk],
            "more_start_utf16": [0],
            "more_end_utf16": [4],
            "more_quote": ["Lost"],
        },
        **HTMX,
    )
    html = response.content.decode()
    assert "Span 2: The quote is not in the pile at that place" in html
    assert 'name="more_quote" value="Lost"' in html  # the form as sent, to correct it
    assert not Label.objects.exists()


def test_the_screen_refuses_a_span_offset_that_is_not_a_number(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    response = client.post(
        reverse("annotate:label-save", args=[claim.project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": hours.pk,
            "quote": "Open Monday",
            "more_passage": [fees.pk],
            "more_start_utf16": ["zero"],
            "more_end_utf16": [4],
            "more_quote": ["Late"],
        },
    )
    assert response.status_code == 422
    assert "Span 2: start_utf16 must be a whole number, not &#x27;zero&#x27;" in (
        response.content.decode()
    )


def test_the_screen_refuses_not_in_pile_with_a_second_span(client):
    membership, claim, _, fees = pile()
    client.force_login(membership.user)
    response = client.post(
        reverse("annotate:label-save", args=[claim.project.slug, claim.pk]),
        {
            "verdict": "NOT_IN_PILE",
            "more_passage": [fees.pk],
            "more_start_utf16": [0],
            "more_end_utf16": [4],
            "more_quote": ["Late"],
        },
    )
    assert response.status_code == 422
    assert "takes no quote" in response.content.decode()
    assert not Label.objects.exists()


def test_a_cleared_first_span_gives_its_place_to_the_second(client):
    membership, claim, _, fees = pile()
    client.force_login(membership.user)
    client.post(
        reverse("annotate:label-save", args=[claim.project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": "",
            "quote": "",
            "more_passage": [fees.pk],
            "more_start_utf16": [0],
            "more_end_utf16": [4],
            "more_quote": ["Late"],
        },
    )
    label = Label.objects.get()
    assert (label.evidence_passage_id, label.evidence_quote) == (fees.pk, "Late")
    assert not EvidenceSpan.objects.exists()


def test_undo_of_a_new_label_puts_both_spans_back_in_the_form(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    project = claim.project
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"), more=[span(fees, "20 cents a day")],
    )  # fmt: skip
    html = client.post(reverse("annotate:label-undo", args=[project.slug]), **HTMX)
    html = html.content.decode()
    assert not Label.objects.exists()
    assert 'name="more_quote" value="20 cents a day"' in html
    assert "Closed on Sunday</textarea>" in html


# -- formats ------------------------------------------------------------------------------------


def export(project, format):
    out = io.StringIO()
    claims_export(project=project, format=format, out=out)
    return out.getvalue()


def two_span_label():
    membership, claim, hours, fees = pile()
    membership.user.username = "ana"
    membership.user.save()
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"),
        more=[span(fees, "20 cents a day"), span(hours, "public holidays")],
    )  # fmt: skip
    return claim


def test_jsonl_export_carries_more_quotes_and_a_round_trip_keeps_every_span(tmp_path):
    claim = two_span_label()
    hours, fees = claim.answer.passages.order_by("rank")
    [record] = [json.loads(line) for line in export(claim.project, "jsonl").splitlines()]
    [label] = record["claims"][0]["labels"]
    # The pile's ids name the passages (unique source ids), offsets in code points: "public"
    # after the emoji is at 54 in HOURS counted by hand (28 + "Closed on Sunday " 17 + "📚 " 2
    # + "and on " 7; 55 in UTF-16).
    ref = {hours.pk: hours.source_id, fees.pk: fees.source_id}
    assert label["quote"] == {"passage": ref[hours.pk], "start": 28, "end": 44,
                              "text": "Closed on Sunday"}  # fmt: skip
    assert label["more_quotes"] == [
        {"passage": ref[fees.pk], "start": 18, "end": 32, "text": "20 cents a day"},
        {"passage": ref[hours.pk], "start": 54, "end": 69, "text": "public holidays"},
    ]
    path = tmp_path / "two-spans.jsonl"
    path.write_text(export(claim.project, "jsonl"), encoding="utf-8")
    fresh = MembershipFactory().project
    result = answers_import(project=fresh, path_or_file=path)
    assert result.labels == 1
    imported = Label.objects.get(claim__project=fresh)
    assert imported.evidence_quote == "Closed on Sunday"
    assert [(s.number, s.passage.rank, s.start, s.end, s.quote) for s in
            imported.more_spans.all()] == [
        (2, 2, 18, 32, "20 cents a day"),
        (3, 1, 54, 69, "public holidays"),
    ]  # fmt: skip
    [history] = LabelHistory.objects.filter(claim__project=fresh)
    assert [span["quote"] for span in history.more_spans] == ["20 cents a day", "public holidays"]
    # ... and exporting the import gives the same labels again
    [again] = [json.loads(line) for line in export(fresh, "jsonl").splitlines()]
    assert again["claims"][0]["labels"][0]["more_quotes"] == label["more_quotes"]


def test_an_old_file_without_more_quotes_imports_single_span_labels_unchanged(tmp_path):
    record = {
        "id": "a1",
        "question": "When?",
        "answer": "Closed Sunday.",
        "pile": [{"id": "hours", "text": HOURS}],
        "claims": [
            {
                "text": "Closed Sunday.",
                "labels": [
                    {
                        "annotator": "ana",
                        "verdict": "SUPPORTED",
                        "quote": {"passage": "hours", "start": 28, "end": 44},
                    }
                ],
            }
        ],
    }
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(record), encoding="utf-8")
    project = MembershipFactory().project
    assert answers_import(project=project, path_or_file=path).labels == 1
    label = Label.objects.get()
    assert label.evidence_quote == "Closed on Sunday"
    assert not EvidenceSpan.objects.exists()
    [line] = export(project, "jsonl").splitlines()
    assert "more_quotes" not in json.loads(line)["claims"][0]["labels"][0]


@pytest.mark.parametrize(
    ("more", "message"),
    [
        ([{"passage": "hours", "start": 38, "end": 44}], "overlaps span 1"),
        ([{"passage": "hours", "start": 0, "end": 4, "text": "Shut"}], "not in the pile"),
        ({"passage": "hours"}, "expected a list"),
    ],
)
def test_a_wrong_more_quote_in_a_file_is_an_issue_naming_its_field(tmp_path, more, message):
    record = {
        "id": "a1",
        "question": "When?",
        "answer": "Closed Sunday.",
        "pile": [{"id": "hours", "text": HOURS}],
        "claims": [
            {
                "text": "Closed Sunday.",
                "labels": [
                    {
                        "annotator": "ana",
                        "verdict": "SUPPORTED",
                        "quote": {"passage": "hours", "start": 28, "end": 44},
                        "more_quotes": more,
                    }
                ],
            }
        ],
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=MembershipFactory().project, path_or_file=path)
    text = str(failed.value)
    assert "claims[0].labels[0].more_quotes" in text
    assert message in text
    assert not Label.objects.exists()


def test_csv_export_puts_the_more_spans_in_one_json_column_per_analyst():
    claim = two_span_label()
    hours, fees = claim.answer.passages.order_by("rank")
    [row] = list(csv.DictReader(io.StringIO(export(claim.project, "csv"))))
    assert row["label:ana:quote_text"] == "Closed on Sunday"
    assert json.loads(row["label:ana:more_quotes"]) == [
        {"passage": fees.source_id, "start": 18, "end": 32, "text": "20 cents a day"},
        {"passage": hours.source_id, "start": 54, "end": 69, "text": "public holidays"},
    ]
    header = list(row)
    assert (
        header.index("label:ana:more_quotes") == header.index("label:ana:changed_after_reveal") + 1
    )


# -- the lead's pages and the reveal ------------------------------------------------------------


def contradicted_with_two_spans():
    """A claim ana marks CONTRADICTED with two spans and bo NOT_IN_PILE: waiting for a lead."""
    membership, claim, hours, fees = pile()
    claim.labels_required = 2
    claim.save()
    project = claim.project
    ana = membership.user
    bo = MembershipFactory(project=project).user
    label_save(
        claim=claim, annotator=ana, verdict=Verdict.CONTRADICTED,
        **span(hours, "Closed on Sunday"), more=[span(fees, "20 cents a day")],
        note="Two places decide it.",
    )  # fmt: skip
    label_save(claim=claim, annotator=bo, verdict=Verdict.NOT_IN_PILE)
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    return claim, lead, bo


def test_the_adjudication_card_marks_every_span_in_its_passage(client):
    claim, lead, _ = contradicted_with_two_spans()
    client.force_login(lead)
    html = client.get(reverse("annotate:adjudicate", args=[claim.project.slug])).content.decode()
    assert html.count('data-testid="quote-span"') == 2
    assert 'Open Monday to Friday 9–17. <mark class="quote">Closed on Sunday</mark>' in html
    assert 'Late returns cost <mark class="quote">20 cents a day</mark>.' in html
    assert '<span class="visually-hidden"> of 2</span> from passage #2' in html


def test_the_contradictions_page_and_its_csv_give_a_line_per_span(client):
    claim, lead, _ = contradicted_with_two_spans()
    client.force_login(lead)
    url = reverse("annotate:contradictions", args=[claim.project.slug])
    html = client.get(url).content.decode()
    assert '<mark class="quote">Closed on Sunday</mark>' in html
    assert '<mark class="quote">20 cents a day</mark>' in html
    rows = list(csv.DictReader(io.StringIO(client.get(url, {"format": "csv"}).content.decode())))
    assert [(row["passage_rank"], row["quote"]) for row in rows] == [
        ("1", "Closed on Sunday"),
        ("2", "20 cents a day"),
    ]


def test_a_colleague_sees_every_span_after_saving_when_the_project_reveals(client):
    claim, _, bo = contradicted_with_two_spans()
    project = claim.project
    project.reveal_after_save = True
    project.save()
    client.force_login(bo)
    html = client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk]))
    html = html.content.decode()
    assert "“Closed on Sunday” · “20 cents a day”" in html


def test_a_fact_quoted_only_by_a_second_span_counts_as_grounded():
    membership, claim, hours, fees = pile()
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"), more=[span(fees, "20 cents a day")],
    )  # fmt: skip
    assert claim.gold.verdict == Verdict.SUPPORTED  # one label required: unanimous gold
    cents = Fact.objects.create(
        answer=claim.answer, passage=fees, start=21, end=26, text="cents"
    )  # inside span 2 (18–32), counted by hand
    lost = Fact.objects.create(
        answer=claim.answer, passage=fees, start=34, end=44, text="Lost books"
    )
    assert FEES[21:26] == "cents"
    assert FEES[34:44] == "Lost books"
    grounded, every = facts_grounded_for_project(project=claim.project)
    assert grounded == {cents.pk}
    assert sorted(every) == sorted([cents.pk, lost.pk])


def test_the_reports_coverage_counts_a_fact_quoted_by_the_second_span():
    from metrics.services.report import report_compute

    membership, claim, hours, fees = pile()
    label_save(
        claim=claim, annotator=membership.user, verdict=Verdict.SUPPORTED,
        **span(hours, "Closed on Sunday"), more=[span(fees, "20 cents a day")],
    )  # fmt: skip
    Fact.objects.create(answer=claim.answer, passage=fees, start=21, end=26, text="cents")
    Fact.objects.create(answer=claim.answer, passage=fees, start=34, end=44, text="Lost books")
    coverage = report_compute(project=claim.project)["coverage"]
    # 1 of the 2 facts is grounded, and only by span 2 (span 1 is in the other passage).
    assert (coverage["numerator"], coverage["denominator"]) == (1, 2)


def _last_saved(html: str) -> str:
    start = html.index('aria-label="Last save"')
    return " ".join(html[start : html.index("</aside>", start)].split())


def test_the_saved_line_and_the_undo_name_every_span_of_the_quote(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    html = _save_three_spans(client, claim, hours, fees, **HTMX).content.decode()
    assert "with 3 quoted spans: “Open Monday”, “Late” and “public holidays”." in _last_saved(html)
    undone = client.post(reverse("annotate:label-undo", args=[claim.project.slug]), **HTMX)
    assert (
        "Label undone: your SUPPORTED label with 3 quoted spans: “Open Monday”, “Late” and "
        "“public holidays” on “Closed Sunday; late fees 20 cents.”"
    ) in undone.content.decode()


def test_without_javascript_the_saved_line_after_the_redirect_names_every_span(client):
    membership, claim, hours, fees = pile()
    client.force_login(membership.user)
    response = _save_three_spans(client, claim, hours, fees, follow=True)
    assert "3 quoted spans: “Open Monday”, “Late” and “public holidays”." in _last_saved(
        response.content.decode()
    )

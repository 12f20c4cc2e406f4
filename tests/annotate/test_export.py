"""Exporting claims: JSON Lines round-trips through import; CSV has a column group per analyst
and per judge instrument; both stream without a query per claim."""

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import IMPORTED_SUFFIX, Answer, Gold, Label, Verdict
from interchange.services.exports import claims_export
from interchange.services.imports import answers_import
from judges.models import JudgeVerdict
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    LabelFactory,
    PassageFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db

EMOJI_PASSAGE = "Fees 💶 are 5 EUR per month. שכר הטרחה הוא 5 אירו."


def quote(passage, text):
    start = passage.text.index(text)
    return {
        "evidence_passage": passage,
        "evidence_start": start,
        "evidence_end": start + len(text),
        "evidence_quote": text,
    }


def build_project(n_answers=2):
    project = ProjectFactory()
    # Users without a password: hashing one takes a second, and these never log in.
    ana, ben, lead = (
        get_user_model().objects.get_or_create(username=name)[0] for name in ("ana", "ben", "lead")
    )
    baseline = JudgeRunFactory(judge__project=project, judge__name="baseline", prompt_version="p-1")
    rerun = JudgeRunFactory(judge=baseline.judge, prompt_version="p-2")
    llm = JudgeRunFactory(judge__project=project, judge__name="gpt", prompt_version="abc123")
    for i in range(n_answers):
        answer = AnswerFactory(
            project=project,
            external_id=f"fee-{i}",
            text="Fees are 5 EUR 💶 a month.",
            risk_category="financial",
            metadata={"source": "test"},
        )
        first = PassageFactory(answer=answer, rank=1, source_id="fees", text=EMOJI_PASSAGE)
        # Two passages without a source id: quotes must name them by rank.
        second = PassageFactory(answer=answer, rank=2, source_id="", text="Cards 💳 are free.")
        PassageFactory(answer=answer, rank=3, source_id="", text="No other fees.")
        supported = ClaimFactory(
            answer=answer,
            position=0,
            text="Fees are 5 EUR a month.",
            tags=["numeric"],
            span_start=0,
            span_end=14,
        )
        supported.cited_passages.add(first)
        LabelFactory(
            claim=supported,
            annotator=ana,
            verdict=Verdict.SUPPORTED,
            **quote(first, "5 EUR per month"),
        )
        LabelFactory(
            claim=supported,
            annotator=ben,
            verdict=Verdict.SUPPORTED,
            note="Hebrew too",
            **quote(first, "שכר הטרחה הוא 5 אירו"),
        )
        GoldFactory(claim=supported, verdict=Verdict.SUPPORTED, source=Gold.Source.UNANIMOUS)
        JudgeVerdictFactory(run=baseline, claim=supported, verdict="SUPPORTED", confidence=0.75)
        JudgeVerdictFactory(run=rerun, claim=supported, verdict="SUPPORTED", confidence=0.8)
        JudgeVerdictFactory(run=llm, claim=supported, verdict="UNPARSEABLE", confidence=None)

        card = ClaimFactory(answer=answer, position=1, text="Cards cost 2 EUR.", origin="rule")
        LabelFactory(
            claim=card,
            annotator=ana,
            verdict=Verdict.CONTRADICTED,
            correct="no",
            **quote(second, "Cards 💳 are free."),
        )
        LabelFactory(claim=card, annotator=ben, verdict=Verdict.NOT_IN_PILE, correct="unknown")
        GoldFactory(
            claim=card,
            verdict=Verdict.CONTRADICTED,
            source=Gold.Source.ADJUDICATED,
            decided_by=lead,
            reason="The pile says cards are free.",
        )
        JudgeVerdictFactory(run=baseline, claim=card, verdict="NOT_IN_PILE", confidence=0.4)
    AnswerFactory(project=project, external_id="empty", text="I do not know.", abstention=True)
    return project


def comparable(project):
    """Claims with their labels, quotes, gold and judge verdicts, without database ids."""
    rows = []
    for answer in Answer.objects.filter(project=project).order_by("position"):
        pile = [(p.rank, p.source_id, p.text) for p in answer.passages.all()]
        for claim in answer.claims.order_by("position"):
            gold = (
                Gold.objects.filter(claim=claim)
                .select_related("decided_by", "imported_decided_by")
                .first()
            )
            rows.append(
                {
                    "answer": (
                        answer.external_id,
                        answer.question,
                        answer.text,
                        answer.risk_category,
                        answer.abstention,
                        answer.metadata,
                    ),
                    "pile": pile,
                    "claim": (
                        claim.position,
                        claim.text,
                        claim.origin,
                        claim.tags,
                        claim.span_start,
                        claim.span_end,
                    ),
                    "cited": [p.rank for p in claim.cited_passages.all()],
                    "labels": sorted(
                        (
                            # Names come back as the fresh project's imported annotators.
                            label.annotator_name.removesuffix(IMPORTED_SUFFIX),
                            label.verdict,
                            label.evidence_passage.rank if label.evidence_passage else None,
                            label.evidence_start,
                            label.evidence_end,
                            label.evidence_quote,
                            label.note,
                            label.correct,
                        )
                        for label in Label.objects.filter(claim=claim).select_related(
                            "annotator", "imported_annotator", "evidence_passage"
                        )
                    ),
                    "gold": gold
                    and (
                        gold.verdict,
                        gold.source,
                        gold.reason,
                        gold.decided_by.username
                        if gold.decided_by
                        else gold.imported_decided_by.name
                        if gold.imported_decided_by
                        else None,
                    ),
                    "judges": sorted(
                        (
                            v.run.judge.name,
                            v.run.prompt_version,
                            v.run.kind,
                            v.verdict,
                            v.confidence,
                        )
                        for v in JudgeVerdict.objects.filter(claim=claim).select_related(
                            "run__judge"
                        )
                    ),
                }
            )
    return rows


def export(project, format):
    out = io.StringIO()
    claims_export(project=project, format=format, out=out)
    return out.getvalue()


def test_export_jsonl_round_trips_into_a_fresh_project(tmp_path):
    project = build_project()
    text = export(project, "jsonl")
    lines = text.splitlines()
    assert len(lines) == 3  # one answer per line, the claimless one included
    first = json.loads(lines[0])
    assert first["pile"][0] == {"id": "fees", "title": "Refund policy", "text": EMOJI_PASSAGE}
    # A quote in a passage without a unique source id names it by rank.
    card_labels = first["claims"][1]["labels"]
    assert card_labels[0]["quote"]["passage"] == 2

    path = tmp_path / "export.jsonl"
    path.write_text(text, encoding="utf-8")
    fresh = ProjectFactory()
    result = answers_import(project=fresh, path_or_file=path)
    assert (result.answers, result.claims, result.labels, result.gold) == (3, 4, 8, 4)
    # baseline p-1, baseline p-2 and gpt stay three separate instruments.
    assert result.judge_runs == 3
    assert comparable(fresh) == comparable(project)
    assert len(comparable(project)) == 4


def test_export_jsonl_carries_method_and_prompt_version():
    project = build_project(n_answers=1)
    claim = json.loads(export(project, "jsonl").splitlines()[0])["claims"][0]
    assert claim["method"] == "manual labels by analysts, claim level, against the retrieved pile"
    by_version = {judge["prompt_version"]: judge for judge in claim["judges"]}
    assert set(by_version) == {"p-1", "p-2", "abc123"}
    assert by_version["p-1"]["confidence"] == 0.75
    assert by_version["abc123"]["verdict"] == "UNPARSEABLE"
    assert "prompt version p-1" in by_version["p-1"]["method"]


def test_export_csv_has_one_row_per_claim_and_column_groups():
    project = build_project()
    rows = list(csv.DictReader(io.StringIO(export(project, "csv"))))
    assert len(rows) == 4
    header = list(rows[0])
    assert header[:14] == [
        "answer_id",
        "claim_id",
        "position",
        "text",
        "origin",
        "tags",
        "citations",
        "risk_category",
        "abstention",
        "system",
        "question_id",
        "gold_verdict",
        "gold_source",
        "gold_reason",
    ]
    for user in ("ana", "ben"):
        for field in (
            "verdict",
            "quote_passage",
            "quote_start",
            "quote_end",
            "quote_text",
            "note",
            "correct",
        ):
            assert f"label:{user}:{field}" in header
    for instrument in ("baseline@p-1", "baseline@p-2", "gpt@abc123"):
        assert f"judge:{instrument}:verdict" in header
        assert f"judge:{instrument}:confidence" in header
    assert header[-1] == "method"

    supported, card = rows[0], rows[1]
    assert (supported["answer_id"], supported["position"], supported["text"]) == (
        "fee-0",
        "0",
        "Fees are 5 EUR a month.",
    )
    assert supported["tags"] == "numeric"
    assert supported["citations"] == "fees"
    assert supported["label:ana:verdict"] == "SUPPORTED"
    assert supported["label:ana:quote_text"] == "5 EUR per month"
    assert supported["label:ana:quote_passage"] == "fees"
    start = EMOJI_PASSAGE.index("5 EUR per month")
    assert (supported["label:ana:quote_start"], supported["label:ana:quote_end"]) == (
        str(start),
        str(start + 15),
    )
    assert supported["label:ben:quote_text"] == "שכר הטרחה הוא 5 אירו"
    assert supported["judge:baseline@p-1:verdict"] == "SUPPORTED"
    assert supported["judge:baseline@p-1:confidence"] == "0.75"
    assert supported["judge:baseline@p-2:confidence"] == "0.8"
    assert supported["judge:gpt@abc123:verdict"] == "UNPARSEABLE"
    assert supported["judge:gpt@abc123:confidence"] == ""
    assert (supported["gold_verdict"], supported["gold_source"]) == ("SUPPORTED", "unanimous")
    assert "prompt version abc123" in supported["method"]
    assert supported["method"].startswith("manual labels by analysts")

    assert card["origin"] == "rule"
    assert card["label:ana:quote_passage"] == "#2"
    assert card["label:ana:correct"] == "no"
    assert card["label:ben:verdict"] == "NOT_IN_PILE"
    assert card["label:ben:quote_text"] == ""
    assert card["gold_reason"] == "The pile says cards are free."
    assert card["judge:gpt@abc123:verdict"] == ""
    # Answers of no system: the system and question key cells are empty.
    assert (card["system"], card["question_id"]) == ("", "")


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_query_count_does_not_grow_with_claims(format):
    small = build_project(n_answers=1)
    with CaptureQueriesContext(connection) as few:
        export(small, format)
    big = build_project(n_answers=12)
    with CaptureQueriesContext(connection) as many:
        export(big, format)
    assert len(many) == len(few)


def test_export_of_an_empty_project():
    project = ProjectFactory()
    assert export(project, "jsonl") == ""
    assert export(project, "csv").splitlines()[0].startswith("answer_id,claim_id")

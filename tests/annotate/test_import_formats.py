"""Importing each format: native (JSON Lines, JSON list, CSV), RAGAS (JSON Lines, CSV, legacy
names) and RAGChecker (JSON with claims and checker labels), with emoji and right-to-left text."""

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Answer, Claim, Gold, Label, LabelHistory, Membership, Passage, Role
from annotate.queue_order import answer_queue_key, claim_labels_required, claim_queue_key
from interchange.services import imports
from interchange.services.imports import answers_import
from judges.models import Backend, Judge, JudgeRun, JudgeVerdict
from tests.factories import AnswerFactory, ProjectFactory

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.django_db

REFUND_PASSAGE = (
    "Refunds 💳 are processed within 14 days of the request. They are issued to the original card."
)
HEBREW_PASSAGE = "🏥 המינון המרבי הוא 4 גרם ביום. אין לעבור עליו."
ARABIC_PASSAGE = "💊 الجرعة القصوى للبالغين هي أربعة غرامات يوميا."


def native_snapshot(project):
    """What a user would see of an imported native file, independent of database ids."""
    answers = []
    for answer in Answer.objects.filter(project=project).order_by("position"):
        claims = []
        for claim in answer.claims.order_by("position"):
            claims.append(
                {
                    "text": claim.text,
                    "tags": claim.tags,
                    "cited": [p.source_id for p in claim.cited_passages.all()],
                    "labels": sorted(
                        (
                            label.annotator_name,
                            label.verdict,
                            label.evidence_passage.source_id if label.evidence_passage else None,
                            label.evidence_start,
                            label.evidence_end,
                            label.evidence_quote,
                            label.note,
                            label.correct,
                        )
                        for label in claim.labels.all()
                    ),
                    "gold": (claim.gold.verdict, claim.gold.source)
                    if Gold.objects.filter(claim=claim).exists()
                    else None,
                    "judges": sorted(
                        (v.run.judge.name, v.verdict, v.confidence)
                        for v in claim.judge_verdicts.all()
                    ),
                }
            )
        answers.append(
            {
                "id": answer.external_id,
                "question": answer.question,
                "text": answer.text,
                "risk": answer.risk_category,
                "answerable": answer.answerable,
                "reference": answer.reference,
                "pile": [(p.rank, p.source_id, p.title, p.text) for p in answer.passages.all()],
                "claims": claims,
            }
        )
    return answers


def test_answers_import_native_jsonl_writes_answers_pile_claims_labels_gold_and_judge():
    project = ProjectFactory(queue_seed=11, analysts_per_claim=1, double_labelled_share=0.5)
    result = answers_import(project=project, path_or_file=DATA / "native.jsonl")

    assert (result.format, result.container) == ("native", "jsonl")
    assert (result.answers, result.passages, result.claims) == (3, 5, 3)
    # One gold comes with the file; the other two claims' labels are unanimous and complete
    # (labels_required is 1 or 2 here), so they become gold as saved labels would.
    assert (result.labels, result.gold, result.judge_verdicts, result.judge_runs) == (5, 3, 3, 1)
    assert (result.annotator_names, result.annotator_names_mapped) == (3, 0)

    refund = Answer.objects.get(project=project, external_id="refund-1")
    assert refund.question == "How long do refunds take? 💸"
    assert refund.risk_category == "financial"
    assert refund.answerable is True
    assert refund.reference == "14 days."
    assert refund.metadata["citations"] == ["policy-7"]
    assert [p.source_id for p in refund.passages.all()] == ["policy-7", "policy-9"]
    assert refund.passages.get(rank=1).text == REFUND_PASSAGE

    claim = refund.claims.get(position=0)
    assert claim.project == project
    assert claim.origin == "manual"
    assert claim.tags == ["numeric"]
    assert [p.source_id for p in claim.cited_passages.all()] == ["policy-7"]
    expected_key = claim_queue_key(
        seed=11, answer_external_id="refund-1", position=0, text="Refunds take 14 days."
    )
    # An answer at a time (the default order); double-labelling follows the claim's own key.
    assert claim.queue_key == answer_queue_key(seed=11, answer_external_id="refund-1", position=0)
    assert claim.labels_required == claim_labels_required(
        analysts_per_claim=1, double_share=0.5, queue_key=expected_key
    )
    # The quote sits after an emoji: offsets are code points, not UTF-16 units.
    ana = claim.labels.get(imported_annotator__name="ana")
    start = REFUND_PASSAGE.index("processed")
    assert (ana.evidence_start, ana.evidence_end) == (start, start + 24)
    assert ana.evidence_quote == "processed within 14 days"
    assert ana.evidence_passage.source_id == "policy-7"
    ben = claim.labels.get(imported_annotator__name="ben")  # passage given by rank
    assert ben.evidence_passage == ana.evidence_passage
    assert ben.note == "clear"
    assert claim.gold.verdict == "SUPPORTED"
    assert claim.gold.source == Gold.Source.UNANIMOUS

    unfaithful = refund.claims.get(position=1)
    assert unfaithful.labels.get().correct == "no"
    assert unfaithful.labels_required == 1  # seeded: not in the double-labelled half
    assert unfaithful.gold.verdict == "NOT_IN_PILE"
    assert unfaithful.gold.source == Gold.Source.UNANIMOUS
    assert unfaithful.labels.get().evidence_passage is None

    judge = Judge.objects.get(project=project, name="gpt-judge")
    assert judge.backend == Backend.IMPORTED
    run = JudgeRun.objects.get(judge=judge)
    assert (run.kind, run.status, run.prompt_version) == ("verify", "done", "imported")
    assert (run.total, run.done, run.unparseable) == (3, 3, 0)
    assert sorted(JudgeVerdict.objects.filter(run=run).values_list("verdict", "confidence")) == [
        ("CONTRADICTED", 0.12),
        ("SUPPORTED", 0.8),
        ("SUPPORTED", 0.93),
    ]
    # Every label has its "created" history row, as label_save would leave.
    assert LabelHistory.objects.filter(action="created").count() == Label.objects.count() == 5


def test_answers_import_right_to_left_quotes_after_emoji():
    project = ProjectFactory()
    answers_import(project=project, path_or_file=DATA / "native.jsonl")
    dose = Answer.objects.get(project=project, external_id="dose-2")
    assert dose.question == "מה המינון המרבי?"
    assert dose.text == "🏥 המינון המרבי הוא 4 גרם ביום."
    claim = dose.claims.get()
    hebrew = claim.labels.get(imported_annotator__name="ana")
    assert hebrew.evidence_quote == "המינון המרבי הוא 4 גרם ביום"
    assert HEBREW_PASSAGE[hebrew.evidence_start : hebrew.evidence_end] == hebrew.evidence_quote
    assert hebrew.evidence_start == 2  # the emoji is one code point, then a space
    arabic = claim.labels.get(imported_annotator__name="dana")
    # No "text" in the file: the quote is taken from the span.
    assert arabic.evidence_quote == "الجرعة القصوى للبالغين"
    assert arabic.evidence_passage.text == ARABIC_PASSAGE


def test_answers_import_keeps_annotator_names_as_imported_annotators_never_accounts():
    project = ProjectFactory()
    existing = get_user_model().objects.create_user("ben", password="x")
    Membership.objects.create(project=project, user=existing, role=Role.LEAD)
    answers_import(project=project, path_or_file=DATA / "native.jsonl")

    assert not get_user_model().objects.filter(username__in=["ana", "dana"]).exists()
    assert list(Membership.objects.filter(project=project).values_list("user", "role")) == [
        (existing.pk, Role.LEAD)
    ]
    # Even a member's name is an imported annotator unless an owner maps it.
    assert set(project.imported_annotators.values_list("name", flat=True)) == {
        "ana",
        "ben",
        "dana",
    }
    assert not Label.objects.filter(annotator=existing).exists()
    existing.refresh_from_db()
    assert existing.has_usable_password()


@pytest.mark.parametrize("name", ["native.json", "native.csv"])
def test_answers_import_native_json_list_and_csv_match_jsonl(name):
    from_jsonl = ProjectFactory()
    answers_import(project=from_jsonl, path_or_file=DATA / "native.jsonl")
    other = ProjectFactory()
    result = answers_import(project=other, path_or_file=DATA / name)
    assert result.container == name.rsplit(".", 1)[1]
    assert result.format == "native"
    assert native_snapshot(other) == native_snapshot(from_jsonl)
    assert len(native_snapshot(other)) == 3


def test_answers_import_positions_continue_after_existing_answers():
    project = ProjectFactory()
    AnswerFactory(project=project, position=41)
    answers_import(project=project, path_or_file=DATA / "native.jsonl")
    positions = list(
        Answer.objects.filter(project=project)
        .order_by("position")
        .values_list("external_id", "position")
    )
    assert positions[1:] == [("refund-1", 42), ("dose-2", 43), ("fee-3", 44)]


def test_answers_import_ragas_jsonl():
    project = ProjectFactory()
    result = answers_import(project=project, path_or_file=DATA / "ragas.jsonl")
    assert (result.format, result.answers, result.passages, result.claims) == ("ragas", 2, 3, 0)
    bowl = Answer.objects.get(project=project, question="When was the first Super Bowl?")
    assert bowl.text == "The first Super Bowl was held on Jan 15, 1967 🏈."
    assert bowl.reference == "January 15, 1967"
    assert bowl.external_id.startswith("ragas-")
    assert [(p.rank, p.source_id) for p in bowl.passages.all()] == [(1, "ctx-1"), (2, "ctx-2")]
    assert bowl.passages.get(rank=2).text == "It was held in Los Angeles 🌴."
    assert bowl.metadata["faithfulness"] == 1.0
    paris = Answer.objects.get(project=project, question="ما هي عاصمة فرنسا؟")
    assert paris.passages.get().text == "🗼 باريس هي عاصمة فرنسا وأكبر مدنها."


def test_answers_import_ragas_csv_reads_json_and_python_literal_lists():
    project = ProjectFactory()
    result = answers_import(project=project, path_or_file=DATA / "ragas.csv")
    assert (result.format, result.container, result.answers) == ("ragas", "csv", 2)
    from_jsonl = ProjectFactory()
    answers_import(project=from_jsonl, path_or_file=DATA / "ragas.jsonl")
    # Same samples, same ids (the id is a hash of question, response and contexts).
    assert sorted(
        Answer.objects.filter(project=project).values_list("external_id", "text", "reference")
    ) == sorted(
        Answer.objects.filter(project=from_jsonl).values_list("external_id", "text", "reference")
    )
    paris = Answer.objects.get(project=project, question="ما هي عاصمة فرنسا؟")
    assert paris.passages.get().text == "🗼 باريس هي عاصمة فرنسا وأكبر مدنها."


def test_answers_import_ragas_legacy_names_in_a_json_list():
    project = ProjectFactory()
    result = answers_import(project=project, path_or_file=DATA / "ragas_legacy.json")
    assert (result.format, result.container, result.answers) == ("ragas", "json", 1)
    answer = Answer.objects.get(project=project)
    assert answer.question == "What is the late fee?"
    assert answer.text == "The late fee is 25 USD."
    assert answer.reference == "25 USD"
    assert answer.passages.get().text == "A late fee of 25 USD applies after the due date."


def test_answers_import_ragchecker_claims_become_judge_verdicts():
    project = ProjectFactory()
    result = answers_import(project=project, path_or_file=DATA / "ragchecker.json")
    assert (result.format, result.container) == ("ragchecker", "json")
    assert (result.answers, result.passages, result.claims, result.judge_verdicts) == (2, 4, 4, 4)

    river = Answer.objects.get(project=project, external_id="q-0")
    assert river.reference == "The Nile, about 6,650 km long."
    assert [p.source_id for p in river.passages.all()] == ["000", "001", "002"]
    assert river.metadata["answer2response"] == [
        "Entailment",
        "Entailment",
        "Contradiction",
        "Neutral",
    ]
    judge = Judge.objects.get(project=project, name="ragchecker")
    assert judge.backend == Backend.IMPORTED
    verdicts = {
        v.claim.position: v
        for v in JudgeVerdict.objects.filter(run__judge=judge).select_related("claim")
    }
    claims = list(river.claims.order_by("position").values_list("text", "origin"))
    assert claims[0] == ("Nile is the longest river", "llm:ragchecker")
    assert claims[3] == ("The Nile flows through Egypt.", "llm:ragchecker")
    # Entailment by any passage wins, then Contradiction, else not in the pile.
    assert [verdicts[i].verdict for i in range(4)] == [
        "SUPPORTED",
        "SUPPORTED",
        "CONTRADICTED",
        "NOT_IN_PILE",
    ]
    assert all(verdicts[i].confidence is None for i in range(4))
    assert json.loads(verdicts[2].raw_response) == {
        "retrieved2response": ["Neutral", "Neutral", "Contradiction"],
        "answer2response": "Contradiction",
    }
    assert not Claim.objects.filter(answer__external_id="q-1").exists()


def test_answers_import_from_an_uploaded_style_file_object():
    project = ProjectFactory()
    handle = io.BytesIO((DATA / "native.jsonl").read_bytes())
    handle.name = "upload.jsonl"
    result = answers_import(project=project, path_or_file=handle)
    assert result.answers == 3


def test_answers_import_reports_progress_per_batch(monkeypatch, tmp_path):
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)
    path = tmp_path / "five.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"a{i}", "question": "q", "answer": "a", "pile": []}) + "\n"
            for i in range(5)
        )
    )
    seen = []
    result = answers_import(project=ProjectFactory(), path_or_file=path, progress=seen.append)
    assert result.answers == 5
    assert seen == [2, 4, 5]


def test_answers_import_streams_json_across_buffer_refills(monkeypatch, tmp_path):
    from interchange.importers import jsonstream

    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 7)
    records = [
        {"id": f"n{i}", "question": "q 🌍", "answer": "x" * i, "pile": [{"text": "p" * 30}]}
        for i in range(12)
    ]
    path = tmp_path / "list.json"
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    project = ProjectFactory()
    assert answers_import(project=project, path_or_file=path).answers == 12
    assert list(
        Answer.objects.filter(project=project).order_by("position").values_list("text", flat=True)
    ) == ["x" * i for i in range(12)]
    assert Passage.objects.filter(answer__project=project).count() == 12

"""The export's exact output, against an expectation written out by hand from the data.

The project has three analysts, gold of both sources, two judge instruments (one of them run
twice), a canary run whose verdicts never reach a claim, a stale verdict, citations, passages named by source id
and by rank, answers whose order differs from their ids, and text with commas, quotes,
newlines and non-ASCII characters, so every cell of both formats is checked, in order.
"""

import csv
import io
import json
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.models import (
    Answer,
    Claim,
    EvidenceSpan,
    Gold,
    Label,
    Passage,
    Role,
    System,
    Verdict,
)
from interchange.services import exports
from interchange.services.exports import claims_export
from judges.models import Backend, Canary, JudgeRun, JudgeVerdict
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    LabelFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db

LABEL_METHOD = "manual labels by analysts, claim level, against the retrieved pile"
DOSE = 'Dose: 5 mg, twice\na day. Ünïcödé ✓ "quoted"'
FEES = "No fees, ever."


def evidence(passage, text):
    start = passage.text.index(text)
    return {
        "evidence_passage": passage,
        "evidence_start": start,
        "evidence_end": start + len(text),
        "evidence_quote": text,
    }


def user(name):
    # No password: hashing one takes a second, and these users never log in.
    return get_user_model().objects.get_or_create(username=name)[0]


@pytest.fixture
def world():
    project = ProjectFactory()
    ana, ben, zoe, lead = user("ana"), user("ben"), user("zoë"), user("lead")
    baseline = JudgeFactory(project=project, name="baseline", model="lexical-v1")
    gpt = JudgeFactory(project=project, name="gpt", backend=Backend.OPENAI, model="gpt-x")
    # Run ids: first < middle < rerun, so the rerun's verdict is the newer of baseline@v1's.
    first = JudgeRunFactory(judge=baseline, prompt_version="v1")
    middle = JudgeRunFactory(judge=gpt, prompt_version="abc")
    rerun = JudgeRunFactory(judge=baseline, prompt_version="v1")
    canary_run = JudgeRunFactory(judge=baseline, prompt_version="v1", kind=JudgeRun.Kind.CANARY)

    # Created first, listed second: answers go by position, not id.
    later = AnswerFactory(
        project=project, external_id="q-1", position=1, abstention=True, risk_category="none"
    )
    sole = PassageFactory(answer=later, rank=1, source_id="", text="Cards are free.")
    first_answer = AnswerFactory(
        project=project,
        external_id='q-2, "second"',
        position=0,
        question="How much, and how often?",
        text="Take 5 mg,\ntwice a day.",
        reference="5 mg twice daily",
        risk_category="health",
        answerable=True,
        metadata={"source": "tést", "n": 2},
        # Its system's cell is NAME@VERSION; the question key needs quoting in csv.
        system=System.objects.create(project=project, name="rag", version="2"),
        question_id='dose, "twice"',
    )
    dose = PassageFactory(answer=first_answer, rank=1, source_id="doc-a", title="Dosage", text=DOSE)
    fees = PassageFactory(answer=first_answer, rank=2, source_id="", title="", text=FEES)
    # Shares doc-a's source id: jsonl then names both by rank, csv keeps the source id.
    PassageFactory(answer=first_answer, rank=3, source_id="doc-a", title="Dup", text="Again.")
    AnswerFactory(project=project, external_id="q-3", position=2)  # no claims: no csv row

    # Created first, position 1: listed after `taken`.
    unlabelled = ClaimFactory(
        answer=first_answer, position=1, text="Unlabelled ünïcode claim", origin="llm:abc"
    )
    taken = ClaimFactory(
        answer=first_answer,
        position=0,
        text='Take 5 mg,\ntwice a day "daily"',
        tags=["numeric", "multi-part"],
        span_start=0,
        span_end=10,
    )
    taken.cited_passages.add(fees, dose)
    ana_label = LabelFactory(
        claim=taken,
        annotator=ana,
        verdict=Verdict.SUPPORTED,
        note="comma, newline\nnote",
        **evidence(dose, "5 mg, twice\na day"),
    )
    # A second span (issue 19): its cell is JSON, quotes and all. 25–43 counted by hand.
    assert DOSE[25:43] == 'Ünïcödé ✓ "quoted"'
    EvidenceSpan.objects.create(
        label=ana_label, number=2, passage=dose, start=25, end=43, quote='Ünïcödé ✓ "quoted"'
    )
    LabelFactory(
        claim=taken,
        annotator=zoe,
        verdict=Verdict.CONTRADICTED,
        correct="no",
        changed_after_reveal=True,
        **evidence(fees, FEES),
    )
    LabelFactory(claim=taken, annotator=ben, verdict=Verdict.NOT_IN_PILE)
    GoldFactory(
        claim=taken,
        verdict=Verdict.SUPPORTED,
        source=Gold.Source.ADJUDICATED,
        decided_by=lead,
        reason='Lead: "yes",\nfinal',
    )
    JudgeVerdictFactory(run=first, claim=taken, verdict="NOT_IN_PILE", confidence=0.25)
    JudgeVerdictFactory(run=middle, claim=taken, verdict="SUPPORTED", confidence=None)
    JudgeVerdictFactory(run=rerun, claim=taken, verdict="SUPPORTED", confidence=0.5)

    cards = ClaimFactory(answer=later, position=0, text="Cards are free.", tags=[])
    LabelFactory(claim=cards, annotator=ben, verdict=Verdict.SUPPORTED, **evidence(sole, "free"))
    GoldFactory(claim=cards, verdict=Verdict.SUPPORTED, source=Gold.Source.UNANIMOUS)
    JudgeVerdictFactory(run=middle, claim=cards, verdict="CONTRADICTED", confidence=0.9)
    # Judged the claim's previous text: counts nowhere, the export included.
    JudgeVerdictFactory(
        run=first, claim=cards, verdict="SUPPORTED", stale=True, stale_claim_text="Cards cost."
    )

    # A canary verdict is about the canary's text on `later`'s pile, never about a claim.
    canary = Canary.objects.create(
        project=project, text="Paris is in France.", pile_answer=later, source="list"
    )
    JudgeVerdictFactory(run=canary_run, claim=None, canary=canary, verdict="SUPPORTED")

    # Another project's analyst and claim stay out of this export.
    elsewhere = ClaimFactory()
    LabelFactory(claim=elsewhere, annotator=user("outsider"))

    def method(run):
        judge = run.judge
        return (
            f"judge {judge.name} ({judge.backend}, model {judge.model}), prompt version "
            f"{run.prompt_version}, {run.kind} run {run.pk}"
        )

    return {
        "project": project,
        "claims": (taken, unlabelled, cards),
        "runs": (first, middle, rerun),
        "method": method,
    }


def export(project, format):
    out = io.StringIO()
    claims_export(project=project, format=format, out=out)
    return out.getvalue()


def expected_csv(world):
    taken, unlabelled, cards = world["claims"]
    first, middle, rerun = world["runs"]
    method = world["method"]
    fields = ("verdict", "quote_passage", "quote_start", "quote_end", "quote_text", "note")
    header = [
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
    for name in ("ana", "ben", "zoë"):
        header += [
            f"label:{name}:{field}"
            for field in (*fields, "correct", "changed_after_reveal", "more_quotes")
        ]
    for instrument in ("baseline@v1 (canary)", "baseline@v1", "gpt@abc"):
        header += [f"judge:{instrument}:verdict", f"judge:{instrument}:confidence"]
    header.append("method")

    def row(**cells):
        return [str(cells.get(column, "")) for column in header]

    dose_start = DOSE.index("5 mg, twice\na day")
    rows = [
        row(
            answer_id='q-2, "second"',
            claim_id=taken.pk,
            position=0,
            text='Take 5 mg,\ntwice a day "daily"',
            origin="manual",
            tags="numeric; multi-part",
            citations="doc-a; #2",
            risk_category="health",
            abstention="false",
            system="rag@2",
            question_id='dose, "twice"',
            gold_verdict="SUPPORTED",
            gold_source="adjudicated",
            gold_reason='Lead: "yes",\nfinal',
            **{
                "label:ana:verdict": "SUPPORTED",
                "label:ana:quote_passage": "doc-a",
                "label:ana:quote_start": dose_start,
                "label:ana:quote_end": dose_start + 17,
                "label:ana:quote_text": "5 mg, twice\na day",
                "label:ana:note": "comma, newline\nnote",
                "label:ana:more_quotes": '[{"passage": "doc-a", "start": 25, "end": 43, '
                '"text": "Ünïcödé ✓ \\"quoted\\""}]',
                "label:ben:verdict": "NOT_IN_PILE",
                "label:zoë:verdict": "CONTRADICTED",
                "label:zoë:quote_passage": "#2",
                "label:zoë:quote_start": 0,
                "label:zoë:quote_end": len(FEES),
                "label:zoë:quote_text": FEES,
                "label:zoë:correct": "no",
                "label:zoë:changed_after_reveal": "true",
                "judge:baseline@v1:verdict": "SUPPORTED",
                "judge:baseline@v1:confidence": "0.5",
                "judge:gpt@abc:verdict": "SUPPORTED",
                "method": "; ".join([LABEL_METHOD, method(first), method(middle), method(rerun)]),
            },
        ),
        row(
            answer_id='q-2, "second"',
            claim_id=unlabelled.pk,
            position=1,
            text="Unlabelled ünïcode claim",
            origin="llm:abc",
            risk_category="health",
            abstention="false",
            system="rag@2",
            question_id='dose, "twice"',
            method=LABEL_METHOD,
        ),
        row(
            answer_id="q-1",
            claim_id=cards.pk,
            position=0,
            text="Cards are free.",
            origin="manual",
            risk_category="none",
            abstention="true",
            gold_verdict="SUPPORTED",
            gold_source="unanimous",
            **{
                "label:ben:verdict": "SUPPORTED",
                "label:ben:quote_passage": "#1",
                "label:ben:quote_start": 10,
                "label:ben:quote_end": 14,
                "label:ben:quote_text": "free",
                "judge:gpt@abc:verdict": "CONTRADICTED",
                "judge:gpt@abc:confidence": "0.9",
                "method": f"{LABEL_METHOD}; {method(middle)}",
            },
        ),
    ]
    return [header, *rows]


def expected_jsonl(world):
    taken, unlabelled, cards = world["claims"]
    first, middle, rerun = world["runs"]
    method = world["method"]

    def judge(run, verdict, confidence):
        return {
            "name": run.judge.name,
            "verdict": verdict,
            "confidence": confidence,
            "prompt_version": run.prompt_version,
            "model": run.judge.model,
            "backend": run.judge.backend,
            "kind": "verify",
            "run": run.pk,
            "method": method(run),
        }

    dose_start = DOSE.index("5 mg, twice\na day")
    return [
        {
            "id": 'q-2, "second"',
            "question": "How much, and how often?",
            "answer": "Take 5 mg,\ntwice a day.",
            "pile": [
                {"id": "doc-a", "title": "Dosage", "text": DOSE},
                {"id": "", "title": "", "text": FEES},
                {"id": "doc-a", "title": "Dup", "text": "Again."},
            ],
            "reference": "5 mg twice daily",
            "risk_category": "health",
            "answerable": True,
            "abstention": False,
            "metadata": {"source": "tést", "n": 2},
            "system": {"name": "rag", "version": "2"},
            "question_id": 'dose, "twice"',
            "claims": [
                {
                    "claim_id": taken.pk,
                    "position": 0,
                    "text": 'Take 5 mg,\ntwice a day "daily"',
                    "origin": "manual",
                    "tags": ["numeric", "multi-part"],
                    # doc-a is not unique in this pile: passages are named by rank.
                    "citations": [1, 2],
                    "labels": [
                        {
                            "annotator": "ana",
                            "verdict": "SUPPORTED",
                            "quote": {
                                "passage": 1,
                                "start": dose_start,
                                "end": dose_start + 17,
                                "text": "5 mg, twice\na day",
                            },
                            "more_quotes": [
                                {"passage": 1, "start": 25, "end": 43, "text": 'Ünïcödé ✓ "quoted"'}
                            ],  # fmt: skip
                            "note": "comma, newline\nnote",
                        },
                        {
                            "annotator": "zoë",
                            "verdict": "CONTRADICTED",
                            "quote": {"passage": 2, "start": 0, "end": len(FEES), "text": FEES},
                            "correct": "no",
                            "changed_after_reveal": True,
                        },
                        {"annotator": "ben", "verdict": "NOT_IN_PILE"},
                    ],
                    "method": LABEL_METHOD,
                    "span": {"start": 0, "end": 10},
                    "gold": {
                        "verdict": "SUPPORTED",
                        "source": "adjudicated",
                        "reason": 'Lead: "yes",\nfinal',
                        "decided_by": "lead",
                    },
                    "judges": [
                        judge(first, "NOT_IN_PILE", 0.25),
                        judge(middle, "SUPPORTED", None),
                        judge(rerun, "SUPPORTED", 0.5),
                    ],
                },
                {
                    "claim_id": unlabelled.pk,
                    "position": 1,
                    "text": "Unlabelled ünïcode claim",
                    "origin": "llm:abc",
                    "tags": [],
                    "citations": [],
                    "labels": [],
                    "method": LABEL_METHOD,
                    "judges": [],
                },
            ],
        },
        {
            "id": "q-1",
            "question": "How long do refunds take?",
            "answer": "Refunds take 14 days and are issued to the original card.",
            "pile": [{"id": "", "title": "Refund policy", "text": "Cards are free."}],
            "reference": "",
            "risk_category": "none",
            "answerable": None,
            "abstention": True,
            "metadata": {},
            "claims": [
                {
                    "claim_id": cards.pk,
                    "position": 0,
                    "text": "Cards are free.",
                    "origin": "manual",
                    "tags": [],
                    "citations": [],
                    "labels": [
                        {
                            "annotator": "ben",
                            "verdict": "SUPPORTED",
                            "quote": {"passage": 1, "start": 10, "end": 14, "text": "free"},
                        }
                    ],
                    "method": LABEL_METHOD,
                    "gold": {"verdict": "SUPPORTED", "source": "unanimous"},
                    "judges": [judge(middle, "CONTRADICTED", 0.9)],
                }
            ],
        },
        {
            "id": "q-3",
            "question": "How long do refunds take?",
            "answer": "Refunds take 14 days and are issued to the original card.",
            "pile": [],
            "reference": "",
            "risk_category": "none",
            "answerable": None,
            "abstention": False,
            "metadata": {},
            "claims": [],
        },
    ]


def test_export_csv_matches_the_expected_cells(world):
    text = export(world["project"], "csv")
    assert list(csv.reader(io.StringIO(text, newline=""))) == expected_csv(world)


def test_export_jsonl_matches_the_expected_records(world):
    lines = export(world["project"], "jsonl").splitlines()
    assert [json.loads(line) for line in lines] == expected_jsonl(world)
    # Key order is part of the format people diff and read.
    assert list(json.loads(lines[0])["claims"][0]) == [
        "claim_id",
        "position",
        "text",
        "origin",
        "tags",
        "citations",
        "labels",
        "method",
        "span",
        "gold",
        "judges",
    ]


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_is_the_same_whatever_the_batch_size(world, monkeypatch, format):
    whole = export(world["project"], format)
    monkeypatch.setattr(exports, "CSV_ANSWER_BATCH", 1)
    monkeypatch.setattr(exports, "JSONL_ANSWER_BATCH", 1)
    assert export(world["project"], format) == whole


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(),
            st.text(alphabet=',"\r\n a💶'),
            st.text(alphabet='=+-@\t\r,"\n a'),
            st.none(),
            st.integers(),
            st.floats(allow_nan=False),
        ),
        min_size=2,
        max_size=8,
    )
)
def test_csv_cell_writes_what_csv_writer_writes(row):
    # The export joins csv_cell()s itself (most of a row's cells are empty): the line must be
    # what csv.writer (excel dialect) would write, byte for byte, of the row neutralised by
    # OWASP's rule (a text starting with = + - @ tab or CR gets a leading '; numbers stay).
    out = io.StringIO()
    csv.writer(out).writerow([owasp_neutral(value) for value in row])
    assert ",".join(map(exports.csv_cell, row)) + "\r\n" == out.getvalue()


def _export_one_answer_a_batch(world, monkeypatch, format) -> list[str]:
    """Export with one answer a batch; the names of the threads that read the batches."""
    monkeypatch.setattr(exports, "CSV_ANSWER_BATCH", 1)
    monkeypatch.setattr(exports, "JSONL_ANSWER_BATCH", 1)
    threads = []
    read = exports._batch_read

    def spied(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(exports, "_batch_read", spied)
    text = export(world["project"], format)
    if format == "csv":
        assert list(csv.reader(io.StringIO(text, newline=""))) == expected_csv(world)
    else:
        assert [json.loads(line) for line in text.splitlines()] == expected_jsonl(world)
    assert len(threads) == 3  # one batch per answer
    return threads


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_outside_a_transaction_in_batches_is_the_expected_output(world, monkeypatch, format):
    _export_one_answer_a_batch(world, monkeypatch, format)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_reads_ahead_outside_a_transaction(world, monkeypatch, format):
    """Outside a transaction PostgreSQL reads the next batch on a thread's own connection."""
    assert connection.vendor == "postgresql"
    threads = _export_one_answer_a_batch(world, monkeypatch, format)
    assert all(name.startswith("export-read") for name in threads)
    # The reading thread's connection is closed with it (its server process leaves a
    # moment after the client closes; autovacuum's are not client backends).
    others = None
    for _ in range(50):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
            others = cursor.fetchone()[0]
        if others == 0:
            break
        time.sleep(0.1)
    assert others == 0


def owasp_neutral(value):
    """OWASP CSV Injection: prefix a text starting with = + - @ tab or CR with a quote."""
    if isinstance(value, str) and value and value[0] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


@pytest.mark.parametrize(
    "text",
    ["", "plain", "a,b", 'say "hi"', '"', "line\nbreak", "cr\rhere", "x\r\n", "💶, ünï", "%_\\"]
    + ["=1+2", "+1", "-1", "@SUM(A1)", "\tx", "\rx", '="a,b"', '-2,"x"', "a=1", "'=1"],
)
def test_csv_sql_quotes_as_csv_cell(text):
    # The database writes most csv cells (exports.csv_sql): the same text as csv_cell.
    sql = exports.csv_sql("CAST(%s AS TEXT)")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql}", [text] * sql.count("%s"))
        cell = cursor.fetchone()[0]
    assert cell == exports.csv_cell(text)
    # Read back by Python's csv module: the text, neutralised by OWASP's rule.
    assert list(csv.reader(io.StringIO(cell, newline=""))) == (
        [[owasp_neutral(text)]] if text else []
    )


@pytest.mark.parametrize("between", [3, 150], ids=["dense-ids", "scattered-ids"])
def test_export_reads_only_the_projects_rows_whatever_their_ids(monkeypatch, between):
    """Another project's rows written between this one's: inside the id range read (3), or
    spreading the ids so that they are read by IN lists (150; 2 ids per list here)."""
    monkeypatch.setattr(exports, "IN_LIST_MAX", 2)
    project, other = ProjectFactory(), ProjectFactory()
    ana, bob = user("ana"), user("bob")
    run = JudgeRunFactory(judge__project=project, judge__name="mine", prompt_version="v1")
    theirs = JudgeRunFactory(judge__project=other, judge__name="theirs", prompt_version="v1")
    for i in range(4):
        answer = AnswerFactory(project=project, external_id=f"a{i}", position=i)
        passage = PassageFactory(answer=answer, rank=1, source_id=f"s{i}", text="Fees: 5 EUR.")
        claim = ClaimFactory(answer=answer, position=0, text=f"claim {i}")
        LabelFactory(
            claim=claim, annotator=ana, verdict=Verdict.SUPPORTED, **evidence(passage, "5 EUR")
        )
        GoldFactory(claim=claim, verdict=Verdict.SUPPORTED)
        JudgeVerdictFactory(run=run, claim=claim, verdict="SUPPORTED", confidence=0.5)
        answers = Answer.objects.bulk_create(
            Answer(project=other, external_id=f"o{i}-{k}", position=k, question="?", text="!")
            for k in range(between)
        )
        Passage.objects.bulk_create(
            Passage(answer=answer, rank=1, source_id="theirs", text="x") for answer in answers
        )
        claims = Claim.objects.bulk_create(
            Claim(project=other, answer=answer, text="theirs") for answer in answers
        )
        Label.objects.bulk_create(
            Label(claim=claim, annotator=bob, verdict=Verdict.NOT_IN_PILE) for claim in claims
        )
        Gold.objects.bulk_create(
            Gold(claim=claim, verdict=Verdict.CONTRADICTED, source="unanimous") for claim in claims
        )
        JudgeVerdict.objects.bulk_create(
            JudgeVerdict(run=theirs, claim=claim, verdict="CONTRADICTED") for claim in claims
        )

    with CaptureQueriesContext(connection) as queries:
        rows = list(csv.DictReader(io.StringIO(export(project, "csv"))))
    labels_read = [q["sql"] for q in queries if "evidence_quote" in q["sql"]]
    assert all((" BETWEEN " in sql) == (between == 3) for sql in labels_read)
    assert len(labels_read) == (1 if between == 3 else 2)  # 4 claims, 2 per IN list
    assert "label:bob:verdict" not in rows[0]
    assert [
        (
            row["answer_id"],
            row["text"],
            row["label:ana:verdict"],
            row["label:ana:quote_passage"],
            row["gold_verdict"],
            row["judge:mine@v1:verdict"],
            row["judge:mine@v1:confidence"],
        )
        for row in rows
    ] == [
        (f"a{i}", f"claim {i}", "SUPPORTED", f"s{i}", "SUPPORTED", "SUPPORTED", "0.5")
        for i in range(4)
    ]
    records = [json.loads(line) for line in export(project, "jsonl").splitlines()]
    assert [
        (
            record["id"],
            [passage["id"] for passage in record["pile"]],
            [
                (
                    claim["text"],
                    [label["annotator"] for label in claim["labels"]],
                    claim["gold"]["verdict"],
                    [judge["name"] for judge in claim["judges"]],
                )
                for claim in record["claims"]
            ],
        )
        for record in records
    ] == [(f"a{i}", [f"s{i}"], [(f"claim {i}", ["ana"], "SUPPORTED", ["mine"])]) for i in range(4)]


@pytest.mark.django_db(transaction=True)
def test_export_download_streams_the_expected_cells_outside_a_transaction(world, client):
    """The download (StreamingHttpResponse) as a lead gets it, reading ahead on PostgreSQL."""
    project = world["project"]
    MembershipFactory(project=project, user=user("lea"), role=Role.LEAD)
    client.force_login(user("lea"))
    response = client.get(reverse("annotate:export", args=[project.slug]), {"format": "csv"})
    assert response.status_code == 200
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    assert list(csv.reader(io.StringIO(body, newline=""))) == expected_csv(world)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_export_download_reads_ahead_on_postgresql(world, client, monkeypatch):
    """The streamed download reads its batches on the read-ahead thread on PostgreSQL."""
    assert connection.vendor == "postgresql"
    monkeypatch.setattr(exports, "CSV_ANSWER_BATCH", 1)
    threads = []
    read = exports._batch_read

    def spied(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(exports, "_batch_read", spied)
    project = world["project"]
    MembershipFactory(project=project, user=user("lea"), role=Role.LEAD)
    client.force_login(user("lea"))
    response = client.get(reverse("annotate:export", args=[project.slug]), {"format": "csv"})
    body = b"".join(response.streaming_content).decode()
    assert list(csv.reader(io.StringIO(body, newline=""))) == expected_csv(world)
    assert len(threads) == 3
    assert all(name.startswith("export-read") for name in threads)

"""Generation of a test set: the offline rule baseline on a hand-written document, the LLM
generator against a loopback endpoint answering a planted mix, the Celery task and resume."""

import json

import pytest

from tests.factories import ProjectFactory, UserFactory
from tests.generation_server import start_generation_server
from testsets.models import GenerationDrop, GenerationJob, ItemQuote, TestItem
from testsets.services import llm_generator
from testsets.services.documents import documents_import
from testsets.services.generate import generation_estimate, generation_execute, generation_start

pytestmark = pytest.mark.django_db
SECRET = "sk-generation-secret-4242"

TRAVEL = (
    "# Travel rules\n\n"
    "Refund requests must be submitted within 90 days. Our office opens at nine.\n\n"
    "Passwords must never be shared. Children under 12 travel free."
)


def _counts(test_set) -> dict:
    return test_set.generator["counts"]


def test_offline_generator_writes_the_questions_derived_by_hand():
    project = ProjectFactory()
    documents_import(project=project, files=[("travel.md", TRAVEL.encode())])
    job = generation_start(
        project=project, user=UserFactory(), name="travel", kind="offline", per_document=5
    )
    assert (job.status, job.done, job.total) == ("done", 1, 1)
    items = list(job.test_set.items.order_by("position"))
    # The heading and "Our office opens at nine." carry no marker ("nine" is no figure).
    assert [(i.question, i.answer, i.risk_category) for i in items] == [
        (
            "What does “Travel rules” state for: “Refund requests must be submitted within ….”?",
            "Refund requests must be submitted within 90 days.",
            "financial",  # "refund"
        ),
        (
            "What is the rule in “Travel rules” on passwords?",  # the words before "must"
            "Passwords must never be shared.",
            "security",  # "passwords"
        ),
        (
            "What does “Travel rules” state for: “Children … travel free.”?",  # "under 12"
            "Children under 12 travel free.",
            "eligibility",  # an age, no risk keyword
        ),
    ]
    assert {i.language for i in items} == {"en"}
    assert [i.external_id for i in items] == ["travel-1", "travel-2", "travel-3"]
    document = items[0].document
    for item in items:
        (quote,) = item.quotes.all()
        assert quote.text == item.answer
        assert quote.passage.text[quote.start : quote.end] == quote.text
        assert document.text[quote.passage.start + quote.start :].startswith(quote.text)
    assert job.test_set.generator["baseline"] is True
    assert _counts(job.test_set) == {
        "generated": 3,
        "kept": 3,
        "dropped": dict.fromkeys(
            [
                "malformed",
                "quote_not_found",
                "wrong_language",
                "not_supported",
                "duplicate",
                "quota",
            ],
            0,
        ),
    }


def test_the_quota_drops_what_is_over_it_and_counts_it():
    project = ProjectFactory()
    documents_import(project=project, files=[("travel.md", TRAVEL.encode())])
    job = generation_start(
        project=project, user=UserFactory(), name="travel", kind="offline", per_document=2
    )
    assert job.test_set.items.count() == 2
    (drop,) = GenerationDrop.objects.filter(test_set=job.test_set)
    assert (drop.reason, drop.detail) == ("quota", "the document already has its 2 items")
    assert drop.raw["answer"] == "Children under 12 travel free."
    assert _counts(job.test_set)["dropped"]["quota"] == 1


P0 = "Refund requests must be submitted within 90 days of the cancellation date. Refunds are paid to the original card."
P1 = "A late fee of €40 applies to changes made less than 24 hours before departure. Children under 12 must travel with an adult."


def _item(question, answer, quote, passage, risk="financial"):
    return {
        "question": question,
        "answer": answer,
        "quotes": [{"passage": passage, "text": quote}],
        "risk": risk,
        "language": "en",
    }


DEADLINE = "Refund requests must be submitted within 90 days of the cancellation date."
FEE = "A late fee of €40 applies to changes made less than 24 hours before departure."
CHILDREN = "Children under 12 must travel with an adult."
PLANTED = [
    # kept: exact quotes whose sentence says the answer
    _item("Within how many days must refund requests be submitted?", DEADLINE, DEADLINE, 0),
    _item("How much is the late fee for changes?", FEE, FEE, 1),
    _item("Who must children under 12 travel with?", CHILDREN, CHILDREN, 1, "safety"),
    # quote_not_found: one word altered (90 -> 60)
    _item("What is the refund deadline?", DEADLINE, DEADLINE.replace("90", "60"), 0),
    # quote_not_found: the quote is verbatim, but in passage 1, not the passage 0 it names
    _item("Can children travel alone?", CHILDREN, CHILDREN, 0, "safety"),
    # not_supported: no sentence of the quote covers the answer's words (2 of 5)
    _item("Where are refunds paid?", "Refunds are paid in cash at the airport counter.",
          "Refunds are paid to the original card.", 0),
    # not_supported: the figure differs (€60 against €40): contradicted
    _item("What is the late fee?", FEE.replace("€40", "€60"), FEE, 1),
    # duplicate: the first question again, in other case and punctuation
    _item("WITHIN how many days must refund requests be submitted ??", DEADLINE, DEADLINE, 0),
    # wrong_language: a French question on an English document
    _item("Dans quel délai les demandes de remboursement doivent-elles être envoyées ?",
          DEADLINE, DEADLINE, 0),
    # malformed: no answer
    {"question": "What is missing?", "quotes": [{"passage": 0, "text": DEADLINE}]},
]  # fmt: skip


def _planted_reply(prompt: str):
    if "Document: Refund rules" in prompt:
        return "```json\n" + json.dumps({"items": PLANTED}, ensure_ascii=False) + "\n```"
    return "Sorry, I cannot help with that."  # the second document: not JSON at all


@pytest.fixture
def planted(settings, monkeypatch, llm_endpoints):
    base_url, ctl = start_generation_server(_planted_reply)
    monkeypatch.setenv("GEN_TEST_KEY", SECRET)
    llm_endpoints(
        {"name": "gen", "base_url": base_url, "api_key_env": "GEN_TEST_KEY", "models": ["m1"]}
    )
    settings.FAITHAUDIT_DOCUMENT_PASSAGE_CHARS = 130
    yield ctl
    ctl.stop()


def _knowledge_base(project):
    rows = [
        {"id": "refunds", "title": "Refund rules", "text": f"{P0}\n\n{P1}", "language": "en"},
        {"id": "site", "title": "Site rules", "text": "Helmets must be worn on site."},
    ]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()
    documents_import(project=project, files=[("kb.jsonl", data)])


def test_llm_generator_keeps_every_good_item_and_drops_every_planted_bad_one(planted):
    project = ProjectFactory()
    _knowledge_base(project)
    job = generation_start(
        project=project, user=UserFactory(), name="planted", kind="llm", endpoint_name="gen"
    )
    assert (job.status, job.done, job.total) == ("done", 2, 2)
    test_set = job.test_set
    kept = list(test_set.items.order_by("position"))
    assert [i.question for i in kept] == [
        PLANTED[0]["question"],
        PLANTED[1]["question"],
        PLANTED[2]["question"],
    ]
    assert [i.risk_category for i in kept] == ["financial", "financial", "safety"]
    # Offsets of each kept quote in its passage: P0 starts with the deadline sentence; the
    # children sentence follows the 79-character fee sentence and a space in P1.
    quotes = [
        (q.passage.position, q.start, q.end)
        for q in ItemQuote.objects.filter(item__in=kept).order_by("item__position")
    ]
    assert quotes == [
        (0, 0, len(DEADLINE)),
        (1, 0, len(FEE)),
        (1, len(FEE) + 1, len(FEE) + 1 + len(CHILDREN)),
    ]
    drops = {}
    for drop in GenerationDrop.objects.filter(test_set=test_set):
        drops.setdefault(drop.reason, []).append(drop.detail)
    assert {reason: len(d) for reason, d in drops.items()} == {
        "quote_not_found": 2,
        "not_supported": 2,
        "duplicate": 1,
        "wrong_language": 1,
        "malformed": 2,
    }
    assert "quote 1 is not verbatim in passage 0 (it is in passage 1)" in " ".join(
        drops["quote_not_found"]
    )
    assert any(
        d.startswith("the entailment check says CONTRADICTED") for d in drops["not_supported"]
    )
    assert drops["duplicate"] == [
        f"near-duplicate of the kept question {'within how many days must refund requests be submitted'!r}"
    ]
    assert drops["wrong_language"][0].startswith("the question reads as French")
    assert sorted(d.split(":")[0] for d in drops["malformed"]) == [
        "field 'answer'",
        "the reply is not JSON (Expecting value)",
    ]
    # The counts on the test set equal the planted ones: 10 items and 1 unreadable reply.
    assert _counts(test_set) == {
        "generated": 11,
        "kept": 3,
        "dropped": {
            "malformed": 2,
            "quote_not_found": 2,
            "wrong_language": 1,
            "not_supported": 2,
            "duplicate": 1,
            "quota": 0,
        },
    }
    assert test_set.generator["prompt_version"] == llm_generator.PROMPT_VERSION
    assert test_set.generator["prompt_hash"] == llm_generator.PROMPT_HASH
    assert (test_set.generator["endpoint"], test_set.generator["model"]) == ("gen", "m1")
    assert job.usage == {"calls": 2, "tokens_in": 200, "tokens_out": 100}
    # The endpoint saw the passages numbered, and the key only in the Authorization header.
    # Documents are asked concurrently, so the prompts arrive in any order: the travel
    # document's one prompt holds both its passages.
    travel = [prompt for prompt in planted.prompts if f"[P0] {P0}" in prompt]
    assert len(travel) == 1
    assert f"[P1] {P1}" in travel[0]
    assert planted.authorization == f"Bearer {SECRET}"
    job.refresh_from_db()
    assert SECRET not in json.dumps([job.error, job.counts, job.usage, test_set.generator])


def test_estimate_counts_documents_prompts_and_tokens_before_the_start(planted):
    project = ProjectFactory()
    _knowledge_base(project)
    estimate = generation_estimate(project=project, kind="llm", endpoint_name="gen", per_document=4)
    prompt = len(llm_generator.GENERATION_PROMPT)
    sizes = [len(P0) + 2 + len(P1), len("Helmets must be worn on site.")]
    assert estimate == {
        "documents": 2,
        "prompts_per_document": 1,
        "calls": 2,
        "tokens_in": sum((prompt + n) // 4 + 1 for n in sizes),
        "tokens_out": 2 * 4 * 150,
        "price": None,  # the endpoint declares no price
        "currency": "",
    }
    offline = generation_estimate(project=project, kind="offline", per_document=4)
    assert (offline["calls"], offline["tokens_in"], offline["price"]) == (0, 0, None)


def test_an_endpoint_not_declared_is_refused_before_anything_is_made(planted):
    from testsets.services.generate import GenerationRefused

    project = ProjectFactory()
    _knowledge_base(project)
    with pytest.raises(GenerationRefused, match=r"endpoint 'nope' is not declared"):
        generation_start(project=project, user=None, name="x", kind="llm", endpoint_name="nope")
    assert not GenerationJob.objects.exists()


def test_the_celery_task_runs_and_a_killed_job_resumes_without_duplicates(monkeypatch):
    from config.celery import app

    project = ProjectFactory()
    documents_import(
        project=project,
        files=[("travel.md", TRAVEL.encode()), ("fees.txt", b"A fee of 5% applies to refunds.")],
    )
    app.conf.task_always_eager = False  # made, not run: we run it by hand, then kill it
    monkeypatch.setattr(app.tasks["testsets.generate_testset"], "delay", lambda job_id: None)
    job = generation_start(project=project, user=None, name="t", kind="offline", per_document=5)
    assert generation_execute(job_id=job.pk, limit=1) == "running"
    job.refresh_from_db()
    assert (job.done, job.total, job.test_set.items.count()) == (1, 2, 3)
    monkeypatch.undo()
    app.conf.task_always_eager = True
    result = app.tasks["testsets.generate_testset"].delay(job.pk).get()
    job.refresh_from_db()
    assert (result, job.status, job.done, job.total) == ("done", "done", 2, 2)
    # travel's 3 items once each, and the fee sentence of fees.txt
    assert sorted(TestItem.objects.filter(test_set=job.test_set).values_list("external_id", flat=True)) == [
        "fees-4", "travel-1", "travel-2", "travel-3",
    ]  # fmt: skip
    assert _counts(job.test_set)["kept"] == 4


def test_generate_testset_command_prints_the_estimate_and_the_counts(capsys):
    from django.core.management import call_command

    project = ProjectFactory(slug="cmd")
    documents_import(project=project, files=[("travel.md", TRAVEL.encode())])
    call_command("generate_testset", "cmd", "--name", "critical", "--per-document", "2")
    out = capsys.readouterr().out
    assert "1 documents, 0 calls" in out
    assert "(offline baseline: no LLM)" in out
    assert "3 generated, 2 kept; dropped: quota 1" in out
    assert TestItem.objects.filter(test_set__name="critical").count() == 2


def test_the_estimate_is_priced_at_the_endpoints_declared_rates(planted, llm_endpoints):
    from judges.endpoints import EndpointsError, endpoints_parse

    base_url = "http://127.0.0.1:9/v1"
    llm_endpoints(
        {
            "name": "priced",
            "base_url": base_url,
            "models": ["m1"],
            "price_per_million_input_tokens": 2.0,
            "price_per_million_output_tokens": 8.0,
            "price_currency": "USD",
        }
    )
    project = ProjectFactory()
    _knowledge_base(project)
    estimate = generation_estimate(
        project=project, kind="llm", endpoint_name="priced", per_document=4
    )
    tokens_in, tokens_out = estimate["tokens_in"], estimate["tokens_out"]
    assert tokens_out == 1200  # 2 documents × 4 items × 150 tokens
    assert estimate["price"] == round((tokens_in * 2.0 + 1200 * 8.0) / 1_000_000, 4)
    assert estimate["currency"] == "USD"
    with pytest.raises(EndpointsError, match=r"field 'price_per_million_input_tokens'"):
        endpoints_parse([{"name": "x", "base_url": base_url, "price_per_million_input_tokens": -1}])


def test_the_projects_judge_can_be_the_entailment_check(llm_endpoints):
    from tests.factories import JudgeFactory
    from tests.llm_server import start_server

    # The judge's loopback endpoint says SUPPORTED when the claim is in the context, except
    # for the passwords sentence, which it is scripted to find NOT_MENTIONED.
    base_url, ctl = start_server(script={"Passwords must never be shared.": "NOT_MENTIONED"})
    try:
        llm_endpoints(judge=base_url)
        project = ProjectFactory()
        judge = JudgeFactory(project=project, backend="openai", model="m", endpoint="judge")
        documents_import(project=project, files=[("travel.md", TRAVEL.encode())])
        job = generation_start(
            project=project, user=None, name="t", kind="offline", per_document=5, judge=judge
        )
    finally:
        ctl.stop()
    assert job.status == "done"
    assert [i.answer for i in job.test_set.items.order_by("position")] == [
        "Refund requests must be submitted within 90 days.",
        "Children under 12 travel free.",
    ]
    (drop,) = GenerationDrop.objects.filter(test_set=job.test_set)
    assert drop.reason == "not_supported"
    assert drop.detail.startswith("the entailment check says NOT_IN_PILE")
    assert ctl.calls_for("Passwords must never be shared.") == 1
    assert job.test_set.generator["entailment"] == f"judge {judge.name}"


def test_offline_questions_are_written_in_the_documents_language():
    project = ProjectFactory()
    text = "Les demandes doivent être envoyées dans un délai de 30 jours."
    row = {"id": "fr", "title": "Remboursements", "text": text, "language": "fr"}
    documents_import(project=project, files=[("kb.jsonl", json.dumps(row).encode())])
    job = generation_start(project=project, user=None, name="fr", kind="offline")
    (item,) = job.test_set.items.all()
    # "30 jours" is the deadline: left out of the French template's question.
    assert item.question == (
        "Que dit « Remboursements » pour : « Les demandes doivent être envoyées dans un délai "
        "de …. » ?"
    )
    assert (item.answer, item.language) == (text, "fr")


def test_a_job_whose_key_is_missing_fails_plainly_and_carries_on_later(
    monkeypatch, llm_endpoints, settings
):
    from testsets.services.generate import generation_resume

    settings.FAITHAUDIT_DOCUMENT_PASSAGE_CHARS = 130  # the planted passages, as above
    base_url, ctl = start_generation_server(_planted_reply)
    try:
        llm_endpoints({"name": "gen", "base_url": base_url, "api_key_env": "GEN_MISSING_KEY"})
        monkeypatch.delenv("GEN_MISSING_KEY", raising=False)
        project = ProjectFactory()
        _knowledge_base(project)
        job = generation_start(
            project=project, user=None, name="k", kind="llm", endpoint_name="gen", model="m1"
        )
        assert (job.status, job.done) == ("failed", 0)
        assert "GEN_MISSING_KEY" not in job.error  # the variable's name stays with the operator
        assert job.error == (
            "the API key of endpoint 'gen' is not set in the environment of the process "
            "making the call (see its api_key_env)"
        )
        assert ctl.prompts == []
        monkeypatch.setenv("GEN_MISSING_KEY", SECRET)
        assert generation_resume(job=job) is True
    finally:
        ctl.stop()
    job.refresh_from_db()
    assert (job.status, job.done, job.counts["kept"]) == ("done", 2, 3)

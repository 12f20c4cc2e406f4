"""A small project with planted gold, judge verdicts, labels, facts, citations and canaries.

Every number the report tests expect is computed in the tests from the planted lists here,
never by calling the report code.
"""

from dataclasses import dataclass, field

from annotate.models import Fact, Gold, Label, Role
from judges.models import Canary, JudgeRun, JudgeVerdict
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
PASSAGE = "Refunds are processed within 14 days. They are issued to the original card."
FACT_1 = (0, 37)  # "Refunds are processed within 14 days."
FACT_2 = (38, 75)  # "They are issued to the original card."

# 40 gold claims in 10 answers (4 each). Answers 0–4 health, 5–9 legal.
GOLD = [S, S, S, C,  S, S, N, S,  S, C, S, S,  N, S, S, S,  S, S, C, N,
        S, S, S, S,  C, S, N, S,  S, S, S, C,  S, N, S, S,  S, S, S, N]  # fmt: skip
# The judge on the same 40 claims: lenient (marks some non-supported SUPPORTED).
JUDGE = [S, S, S, S,  S, C, N, S,  S, C, S, S,  S, S, S, S,  S, S, C, S,
         S, S, N, S,  S, S, N, S,  S, S, S, C,  S, S, S, S,  S, S, S, N]  # fmt: skip
CONF = [0.9, 0.8, 0.95, 0.7, 0.85, 0.3, 0.1, 0.9, 0.75, 0.2, 0.8, 0.9, 0.6, 0.85, 0.9, 0.95,
        0.9, 0.7, 0.15, 0.65, 0.9, 0.8, 0.35, 0.9, 0.6, 0.85, 0.1, 0.95, 0.9, 0.8, 0.9, 0.2,
        0.85, 0.55, 0.9, 0.95, 0.8, 0.9, 0.85, 0.25]  # fmt: skip
# 20 more claims in answers 10–14 judged but never audited (no gold).
REST = [S, S, N, S,  S, C, S, S,  S, S, S, N,  S, S, S, S,  N, S, S, C]  # fmt: skip
REST_CONF = [0.9, 0.8, 0.2, 0.7, 0.9, 0.1, 0.8, 0.85, 0.9, 0.75, 0.8, 0.3, 0.9, 0.9, 0.6,
             0.8, 0.2, 0.9, 0.7, 0.15]  # fmt: skip
TAGS = {0: ["numeric"], 3: ["numeric"], 6: ["negation"], 9: ["numeric", "negation"],
        12: ["negation"], 18: ["numeric"], 19: ["multi-part"], 24: ["numeric"]}  # fmt: skip
# Analyst A labels all 40; analyst B the first 20. Where they differ from gold:
A_DIFF = {3: S, 12: S, 25: N, 33: S}
B_DIFF = {3: S, 6: S, 9: N}
# Correctness marks on unfaithful gold claims (analyst A): claim index -> "yes" / "no".
CORRECT = {3: "yes", 6: "no", 9: "no", 12: "yes", 18: "unknown"}
CITED = [0, 1, 3, 5]  # claims that cite a passage
CITATION = {0: S, 1: S, 3: S, 5: N}  # verdicts of the citation run
CANARY = [N, N, S, N, "UNPARSEABLE"]


@dataclass
class Planted:
    project: object
    judge: object
    lead: object
    analyst: object
    claims: list = field(default_factory=list)  # the 40 gold claims
    rest: list = field(default_factory=list)  # the 20 unaudited claims
    answers: list = field(default_factory=list)


def build_planted_project() -> Planted:
    project = ProjectFactory(slug="planted", name="Planted")
    lead = UserFactory(username="lead")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    analyst_a = UserFactory(username="ana")
    analyst_b = UserFactory(username="bob")
    MembershipFactory(project=project, user=analyst_a, role=Role.ANALYST)
    MembershipFactory(project=project, user=analyst_b, role=Role.ANALYST)
    judge = JudgeFactory(project=project, name="lenient", model="m-1")
    answers = []
    for index in range(15):
        answers.append(
            AnswerFactory(
                project=project,
                external_id=f"a{index}",
                risk_category="health" if index < 5 else ("legal" if index < 10 else "none"),
                answerable=True if index % 3 == 0 else (False if index % 3 == 1 else None),
            )
        )
    # Two abstentions (answerable / unanswerable), each with a claim that must not count.
    abstentions = [
        AnswerFactory(project=project, external_id="x0", abstention=True, answerable=True),
        AnswerFactory(project=project, external_id="x1", abstention=True, answerable=False),
    ]
    passages = [PassageFactory(answer=answer, rank=1, text=PASSAGE) for answer in answers]
    claims = []
    for index, verdict in enumerate(GOLD):
        claim = ClaimFactory(answer=answers[index // 4], tags=TAGS.get(index, []))
        Gold.objects.create(
            claim=claim, verdict=verdict, source="adjudicated" if index % 10 == 0 else "unanimous"
        )
        claims.append(claim)
    rest = [ClaimFactory(answer=answers[10 + index // 4]) for index in range(len(REST))]
    abstention_claims = [ClaimFactory(answer=answer) for answer in abstentions]
    for claim in abstention_claims:
        Gold.objects.create(claim=claim, verdict=N, source="unanimous")

    # Facts: answers 0 and 1 have two facts each; claim 0's quote grounds fact 1 of answer 0.
    for answer, passage in zip(answers[:2], passages[:2], strict=True):
        for start, end in (FACT_1, FACT_2):
            Fact.objects.create(
                answer=answer, passage=passage, start=start, end=end, text=PASSAGE[start:end]
            )

    for index, claim in enumerate(claims):
        verdict = A_DIFF.get(index, GOLD[index])
        evidence = {}
        if verdict == S and index == 0:
            evidence = {
                "evidence_passage": passages[0],
                "evidence_start": 0,
                "evidence_end": 20,
                "evidence_quote": PASSAGE[0:20],
            }
        Label.objects.create(
            claim=claim,
            annotator=analyst_a,
            verdict=verdict,
            correct=CORRECT.get(index, "") if GOLD[index] != S else "",
            **evidence,
        )
        if index < 20:
            Label.objects.create(
                claim=claim, annotator=analyst_b, verdict=B_DIFF.get(index, GOLD[index])
            )

    # Verify runs of one instrument: an older run over everything, a newer one that changes
    # claim 2's verdict and answers claim 1 unparseably (so the older verdict stands).
    old = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for claim, verdict, conf in zip(claims + rest, JUDGE + REST, CONF + REST_CONF, strict=True):
        older = N if claim is claims[2] else verdict
        JudgeVerdict.objects.create(run=old, claim=claim, verdict=older, confidence=conf)
    for claim in abstention_claims:
        JudgeVerdict.objects.create(run=old, claim=claim, verdict=S, confidence=0.9)
    new = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    JudgeVerdict.objects.create(run=new, claim=claims[2], verdict=JUDGE[2], confidence=CONF[2])
    JudgeVerdict.objects.create(run=new, claim=claims[1], verdict="UNPARSEABLE", confidence=None)
    # A failed run never counts.
    failed = JudgeRunFactory(
        judge=judge, prompt_version="p-1", model="m-1", status=JudgeRun.Status.FAILED
    )
    JudgeVerdict.objects.create(run=failed, claim=claims[0], verdict=C, confidence=0.1)

    # Citations and canaries.
    for index in CITED:
        claims[index].cited_passages.add(passages[index // 4])
    citation = JudgeRunFactory(judge=judge, kind=JudgeRun.Kind.CITATION, prompt_version="p-1")
    for index, verdict in CITATION.items():
        JudgeVerdict.objects.create(
            run=citation, claim=claims[index], verdict=verdict, confidence=0.5
        )
    canary_run = JudgeRunFactory(
        judge=judge, kind=JudgeRun.Kind.CANARY, prompt_version="p-1", model="m-1"
    )
    for index, verdict in enumerate(CANARY):
        canary = Canary.objects.create(
            project=project, text=f"canary {index}", pile_answer=answers[0], source="list"
        )
        JudgeVerdict.objects.create(run=canary_run, canary=canary, verdict=verdict)
    return Planted(
        project=project,
        judge=judge,
        lead=lead,
        analyst=analyst_a,
        claims=claims,
        rest=rest,
        answers=answers,
    )


def add_second_instrument(planted: Planted) -> None:
    """A newer prompt version judged the first 8 claims: a new instrument with its own audit."""
    run = JudgeRunFactory(judge=planted.judge, prompt_version="p-2", model="m-1")
    for claim in planted.claims[:8]:
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=S, confidence=0.99)


# --- a project large enough for every branch of the frontier and the CRC cut -----------------
# 44 audited answers of 5 claims (so 22 calibration answers: at α = 0.10 the budget
# (n+1)α − B = 1.3 admits a finite cut) and 8 more answers judged but never audited. The lists
# are drawn once from a seeded generator and are the planted truth the tests recompute from.
CRC_AUDITED_ANSWERS, CRC_REST_ANSWERS, CRC_K = 44, 8, 5


def _crc_lists():
    import numpy as np

    rng = np.random.default_rng(2026)
    total = (CRC_AUDITED_ANSWERS + CRC_REST_ANSWERS) * CRC_K
    truth = rng.random(total) < 0.75
    conf = np.where(truth, rng.beta(5, 1.6, total), rng.beta(1.6, 3, total))
    conf = np.round(np.clip(conf, 0.01, 0.99), 2)
    audited = CRC_AUDITED_ANSWERS * CRC_K
    gold = [S if t else (C if i % 3 == 0 else N) for i, t in enumerate(truth[:audited])]
    judge = [S if c >= 0.5 else N for c in conf]
    return gold, judge, conf.tolist()


CRC_GOLD, CRC_JUDGE, CRC_CONF = _crc_lists()


@dataclass
class CrcPlanted:
    project: object
    judge: object
    lead: object
    answers: list = field(default_factory=list)  # audited answers first, then the unaudited


def build_crc_project() -> CrcPlanted:
    """Gold on the first 44 answers' claims; one verify run judging every claim with a confidence."""
    project = ProjectFactory(slug="crc", name="CRC")
    lead = UserFactory(username="crc-lead")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    judge = JudgeFactory(project=project, name="calibrated", model="m-c")
    answers = [
        AnswerFactory(project=project, external_id=f"c{index:02d}")
        for index in range(CRC_AUDITED_ANSWERS + CRC_REST_ANSWERS)
    ]
    claims = [ClaimFactory(answer=answers[i // CRC_K]) for i in range(len(CRC_CONF))]
    Gold.objects.bulk_create(
        Gold(claim=claim, verdict=verdict, source="unanimous")
        for claim, verdict in zip(claims, CRC_GOLD, strict=False)
    )
    run = JudgeRunFactory(judge=judge, prompt_version="p-c", model="m-c")
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(run=run, claim=claim, verdict=verdict, confidence=conf)
        for claim, verdict, conf in zip(claims, CRC_JUDGE, CRC_CONF, strict=True)
    )
    return CrcPlanted(project=project, judge=judge, lead=lead, answers=answers)


def read_only_scope(fixture_name, config) -> str:
    """One report per module, except under mutmut: it maps a mutant to the tests that call the
    mutated function, and a module fixture's calls belong to the module's first test only."""
    import os

    return "function" if os.environ.get("MUTANT_UNDER_TEST") else "module"


def report_rolled_back(build, django_db_blocker, *, built: bool = False):
    """Build a planted project, compute its report, roll every row back: a report for
    module-scoped fixtures of read-only tests, so each module pays for one build, not one a test.
    `built`: the whole `Report` (its data and the CRC inputs kept beside it)."""
    from django.db import transaction

    from metrics.services import report_build

    with django_db_blocker.unblock(), transaction.atomic():
        planted = build()
        report = report_build(project=planted.project, judge=planted.judge)
        transaction.set_rollback(True)
    return report if built else report.data

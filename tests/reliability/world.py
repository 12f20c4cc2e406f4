"""A small project with one of everything a URL can point at, for the reliability tests.

`world_build(marker)` puts `marker` into every text a user can write or import (question,
answer, passage, claim, label note, fact, gold reason, judge name, canary), so a test can look
for one project's marker in another project's pages and exports.
"""

from dataclasses import dataclass

from django.utils import timezone

from annotate.models import (
    Answer,
    Claim,
    ClaimSkip,
    Fact,
    Gold,
    ImportJob,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    System,
    Verdict,
)
from api.models import ApiToken
from api.tokens import token_create
from judges.models import Canary, Judge, JudgeRun, JudgeVerdict, SplitJob
from metrics.models import ReportSnapshot
from monitor.models import Alert, AnchorSet, MonitoredStream
from tests.factories import UserFactory
from testsets.models import (
    Document,
    DocumentPassage,
    GenerationJob,
    ItemQuote,
    SutRun,
    TestItem,
    TestSet,
)

ROLES = ("owner", "lead", "analyst")


@dataclass
class World:
    project: Project
    users: dict  # role -> User (members of this project)
    answer: Answer
    passage: Passage
    claims: list
    label: Label
    fact: Fact
    judge: Judge
    run: JudgeRun
    snapshot: ReportSnapshot
    canary: Canary
    memberships: dict  # role -> Membership
    import_job: ImportJob
    split_job: SplitJob
    skip: ClaimSkip
    token: ApiToken
    systems: tuple[System, System]
    test_set: TestSet  # a draft with one pending item quoting the knowledge base
    test_item: TestItem
    sut_run: SutRun
    generation_job: GenerationJob
    stream: MonitoredStream  # paused (imports into the world are not sampled), one alert
    alert: Alert

    def ids(self) -> dict[str, int]:
        """The object id each URL keyword names."""
        return {
            "answer_id": self.answer.pk,
            "claim_id": self.claims[0].pk,
            "membership_id": self.memberships["analyst"].pk,
            "fact_id": self.fact.pk,
            "judge_id": self.judge.pk,
            "run_id": self.run.pk,
            "snapshot_id": self.snapshot.pk,
            "import_job_id": self.import_job.pk,
            "split_job_id": self.split_job.pk,
            "skip_id": self.skip.pk,
            "token_id": self.token.pk,
            # the two systems of the analysts' pairwise queue (/pairwise/<a>/<b>/)
            "a": self.systems[0].pk,
            "b": self.systems[1].pk,
            "testset_id": self.test_set.pk,
            "item_id": self.test_item.pk,
            "sut_run_id": self.sut_run.pk,
            "generation_job_id": self.generation_job.pk,
            "stream_id": self.stream.pk,
            "alert_id": self.alert.pk,
        }


def world_build(marker: str, *, slug: str | None = None, users: dict | None = None) -> World:
    """A project full of `marker`; `users` (role -> User) reuses existing accounts."""
    slug = slug or marker.lower().replace("_", "-")
    project = Project.objects.create(
        slug=slug, name=f"Project {marker}", description=f"About {marker}", queue_seed=3
    )
    users = dict(users or {})
    memberships = {}
    for role in ROLES:
        user = users.get(role) or UserFactory(username=f"{slug}-{role}")
        users[role] = user
        memberships[role] = Membership.objects.create(project=project, user=user, role=role)
    passage_text = f"The {marker} policy says refunds take 14 days. Gift cards are final."
    answer = Answer.objects.create(
        project=project,
        external_id=f"{marker}-a1",
        question=f"How long do {marker} refunds take?",
        text=f"{marker} refunds take 14 days. Gift cards are final.",
        risk_category="financial",
    )
    passage = Passage.objects.create(
        answer=answer,
        rank=1,
        source_id=f"{marker}-doc",
        title=f"{marker} policy",
        text=passage_text,
    )
    claims = [
        Claim.objects.create(
            project=project,
            answer=answer,
            text=f"{marker} refunds take 14 days.",
            position=0,
            queue_key=11,
            labels_required=2,
        ),
        Claim.objects.create(
            project=project,
            answer=answer,
            text=f"{marker} gift cards are final.",
            position=1,
            queue_key=22,
            labels_required=2,
        ),
    ]
    quote = "refunds take 14 days"
    start = passage_text.index(quote)
    label = Label.objects.create(
        claim=claims[0],
        annotator=users["analyst"],
        verdict=Verdict.SUPPORTED,
        evidence_passage=passage,
        evidence_start=start,
        evidence_end=start + len(quote),
        evidence_quote=quote,
        note=f"note by {marker}",
    )
    LabelHistory.objects.create(
        label_id_at_time=label.pk,
        claim=claims[0],
        annotator=users["analyst"],
        action=LabelHistory.Action.CREATED,
        verdict=label.verdict,
        note=label.note,
    )
    Label.objects.create(
        claim=claims[0], annotator=users["lead"], verdict=Verdict.NOT_IN_PILE, note=marker
    )
    # The counters label_save keeps (so undo and the progress bar stay consistent).
    Claim.objects.filter(pk=claims[0].pk).update(label_count=2)
    Membership.objects.filter(pk__in=[memberships["analyst"].pk, memberships["lead"].pk]).update(
        labels_saved=1
    )
    Project.objects.filter(pk=project.pk).update(claims_complete=1)
    Gold.objects.create(
        claim=claims[1], verdict=Verdict.SUPPORTED, source="adjudicated", reason=f"{marker} gold"
    )
    fact = Fact.objects.create(
        answer=answer,
        passage=passage,
        start=start,
        end=start + len(quote),
        text=quote,
        created_by=users["analyst"],
    )
    judge = Judge.objects.create(
        project=project, name=f"judge-{marker}", backend="baseline", model="lexical-baseline"
    )
    run = JudgeRun.objects.create(
        judge=judge,
        project=project,
        backend="baseline",
        model="lexical-baseline",
        prompt_text=f"prompt {marker}",
        prompt_version="v-world",
        status=JudgeRun.Status.DONE,
        total=2,
        done=2,
    )
    for claim in claims:
        JudgeVerdict.objects.create(
            run=run, claim=claim, verdict="SUPPORTED", confidence=0.8, raw_response=marker
        )
    # all systems pooled: the web pages' default for a project of two systems (issue 32)
    snapshot = ReportSnapshot.objects.create(project=project, judge=judge, all_systems=True)
    canary = Canary.objects.create(
        project=project, text=f"{marker} canary statement", pile_answer=answer, source="list"
    )
    import_job = ImportJob.objects.create(
        project=project,
        created_by=users["lead"],
        file_name=f"{marker}.jsonl",
        status=ImportJob.Status.DONE,
        result={"answers": 1, "format": "native", "container": "jsonl"},
    )
    split_job = SplitJob.objects.create(
        project=project, judge=judge, answer=answer, status=SplitJob.Status.DONE, total=1, done=1
    )
    # The analyst skipped the last claim (the leads' list of skipped claims shows it).
    skip = ClaimSkip.objects.create(
        claim=claims[-1], user=users["analyst"], reason=ClaimSkip.Reason.NOT_CHECKABLE
    )
    # The owner's API token (the account page revokes it by id).
    token = token_create(user=users["owner"], name=f"{marker} token").token
    # Two systems, so the analysts' pairwise queue has a pair of systems to open.
    systems = tuple(
        System.objects.create(project=project, name=f"{marker} system", version=version)
        for version in ("1", "2")
    )
    test_set, test_item, sut_run = _test_set_build(project, marker)
    # A finished generation of the test set (the job page, issue 27).
    generation_job = GenerationJob.objects.create(
        project=project, test_set=test_set, kind="offline", status="done", total=0
    )
    # A monitored stream, paused so later imports into the world are not sampled, with an
    # anchor set and a judge-drift alert (the monitoring pages, issue 29).
    stream = MonitoredStream.objects.create(project=project, judge=judge, active=False)
    AnchorSet.objects.create(stream=stream).claims.set([claims[1]])
    alert = Alert.objects.create(
        stream=stream,
        kind=Alert.Kind.JUDGE_DRIFT,
        raised_at=timezone.now(),
        evidence={"rate": "specificity", "direction": "up"},
        sentence="The judge changed, not necessarily the system.",
    )
    return World(
        project=project,
        users=users,
        answer=answer,
        passage=passage,
        claims=claims,
        label=label,
        fact=fact,
        judge=judge,
        run=run,
        snapshot=snapshot,
        canary=canary,
        memberships=memberships,
        import_job=import_job,
        split_job=split_job,
        skip=skip,
        token=token,
        systems=systems,
        test_set=test_set,
        test_item=test_item,
        sut_run=sut_run,
        generation_job=generation_job,
        stream=stream,
        alert=alert,
    )


def _test_set_build(project: Project, marker: str) -> tuple[TestSet, TestItem, SutRun]:
    """A knowledge-base document of one passage, a draft test set of one pending item that
    quotes it, and a finished system-under-test run over that set."""
    text = f"The {marker} policy says refunds take 14 days."
    document = Document.objects.create(
        project=project, external_id=f"{marker}-kb", title=f"{marker} handbook", text=text,
        sha256="0" * 64,
    )  # fmt: skip
    passage = DocumentPassage.objects.create(
        document=document, position=0, start=0, end=len(text), text=text
    )
    test_set = TestSet.objects.create(
        project=project, name=f"ts-{marker.lower()}", generator={"kind": "offline"}
    )
    item = TestItem.objects.create(
        test_set=test_set,
        external_id=f"{marker}-q1",
        question=f"How long do {marker} refunds take?",
        answer="14 days.",
        risk_category="financial",
        document=document,
    )
    quote = "refunds take 14 days"
    start = text.index(quote)
    ItemQuote.objects.create(item=item, passage=passage, start=start, end=start + len(quote),
                             text=quote)  # fmt: skip
    sut_run = SutRun.objects.create(
        project=project, test_set=test_set, endpoint="reference", system_name=f"{marker}-sut",
        status=SutRun.Status.DONE,
    )  # fmt: skip
    return test_set, item, sut_run

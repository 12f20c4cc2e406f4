"""Gold verdicts (unanimous or adjudicated), facts for coverage, and the reads that show them.

Gold is what the judge is audited against:
- unanimous: at least `claim.labels_required` counted labels, all the same verdict, none
  waiting for review → gold automatically (`gold_recompute_for_claim`, called whenever labels
  change). A label changed after a reveal (`Label.changed_after_reveal`: its analyst saw the
  judge's or a colleague's verdict, then changed theirs) is not counted unless the project's
  `count_changed_after_reveal` says so: it neither makes nor breaks unanimity, so a claim
  whose other labels are too few waits for a lead (or, with labels to spare, is decided by
  the others);
- otherwise the claim waits for a lead, who picks the verdict with a reason
  (`gold_adjudicate`). A lead's decision stands until a lead changes it.

The read functions at the end (`adjudication_claims`, `contradiction_rows`,
`facts_grounded_for_project`) live beside the writes because nothing else uses them yet.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from annotate import sql
from annotate.models import (
    ROLE_RANK,
    Claim,
    EvidenceSpan,
    Fact,
    Gold,
    Label,
    Membership,
    Passage,
    Project,
    Role,
    Verdict,
)
from annotate.quotes import QuoteError, quote_verify
from annotate.splitting import sentences
from annotate.sql import StatementBatch


class ReviewError(ValueError):
    """An adjudication or fact that cannot be saved as given; the message is for the user."""


def _role_of(*, project, user) -> str | None:
    membership = Membership.objects.filter(project=project, user=user).first()
    return membership.role if membership else None


def _require_role(*, project, user, role: str, action: str) -> str:
    current = _role_of(project=project, user=user)
    if current is None or ROLE_RANK[Role(current)] < ROLE_RANK[Role(role)]:
        who = "a member" if role == Role.ANALYST else f"a {role}"
        raise ReviewError(f"Only {who} of this project can {action}.")
    return current


# ---------------------------------------------------------------------------------------------
# Gold


@transaction.atomic
def gold_recompute_for_claim(*, claim: Claim) -> Gold | None:
    """Bring the claim's unanimous gold in line with its labels; return its gold, if any.

    Call it after every change to the claim's labels (save, undo, flag). It locks the claim row
    so two analysts saving at once are counted one after the other: the second sees the first's
    committed label, and the claim gets its gold. An adjudicated gold is left alone.
    """
    claim = Claim.objects.select_for_update().get(pk=claim.pk)
    return gold_recompute_locked(claim=claim)


@dataclass(frozen=True)
class GoldDecision:
    """What a claim's labels make of its unanimous gold (see `gold_decide`)."""

    action: str  # "keep" (nothing to write), "create", "update" or "delete"
    verdict: str = ""
    reason: str = ""
    review_cleared: bool = False  # the claim's needs_review flag goes off


def gold_decide(
    *,
    labels_required: int,
    claim_needs_review: bool,
    labels: list[tuple[str, bool, bool]],
    gold: tuple[str, str, str] | None,
    count_changed: bool = False,
) -> GoldDecision:
    """The unanimous-gold rule on values alone: `labels` are the (verdict, needs_review,
    changed_after_reveal) of every label of the claim, `gold` its current gold as (verdict,
    source, reason) or None, `count_changed` the project's `count_changed_after_reveal`.

    Unanimous: at least `labels_required` counted labels (and at least one), all one verdict,
    none waiting for review and the claim not flagged. Counted: every label, except, unless
    `count_changed`, those changed after a reveal, which are left out entirely (they neither
    make the count nor break the agreement). An adjudicated gold is never touched. When every
    label is fresh again after an edit flagged the claim, the flag goes off first.
    """
    if gold is not None and gold[1] == Gold.Source.ADJUDICATED:
        return GoldDecision("keep")
    any_review = any(review for _, review, _ in labels)
    review_cleared = bool(claim_needs_review and labels and not any_review)
    needs_review = claim_needs_review and not review_cleared
    counted = [label for label in labels if count_changed or not label[2]]
    verdicts = {verdict for verdict, _, _ in counted}
    unanimous = (
        len(counted) >= max(labels_required, 1)
        and len(verdicts) == 1
        and not any_review
        and not needs_review
    )
    if not unanimous:
        action = "delete" if gold is not None else "keep"
        return GoldDecision(action, review_cleared=review_cleared)
    verdict = verdicts.pop()
    reason = f"All {len(counted)} analysts labelled it {verdict}."
    if len(counted) < len(labels):
        left_out = len(labels) - len(counted)
        reason += (
            f" {left_out} label{'s' if left_out != 1 else ''} changed after a reveal not counted."
        )
    if gold is None:
        action = "create"
    elif gold[0] != verdict or gold[2] != reason:
        action = "update"
    else:
        action = "keep"
    return GoldDecision(action, verdict, reason, review_cleared)


def gold_recompute_locked(*, claim: Claim) -> Gold | None:
    """`gold_recompute_for_claim` for a caller already inside a transaction that holds the
    claim's row lock, with `claim` read under that lock (no second lock, no savepoint)."""
    gold = Gold.objects.filter(claim=claim).first()
    labels = list(claim.labels.values_list("verdict", "needs_review", "changed_after_reveal"))
    decision = gold_decide(
        labels_required=claim.labels_required,
        claim_needs_review=claim.needs_review,
        labels=labels,
        gold=(gold.verdict, gold.source, gold.reason) if gold else None,
        count_changed=Project.objects.filter(pk=claim.project_id)
        .values_list("count_changed_after_reveal", flat=True)
        .get(),
    )
    batch = StatementBatch()
    gold_apply(batch, claim=claim, decision=decision, gold_id=gold.pk if gold else None)
    batch.run()
    if decision.action == "keep":
        return gold
    if decision.action == "delete":
        return None
    return Gold.objects.filter(claim=claim).first()


def gold_recompute_changed_after_reveal(*, project: Project) -> int:
    """After the project's `count_changed_after_reveal` changed: bring the unanimous gold of
    every claim with a label changed after a reveal in line; returns how many claims."""
    ids = list(
        Claim.objects.filter(project=project, labels__changed_after_reveal=True)
        .distinct()
        .values_list("pk", flat=True)
    )
    for claim_id in ids:
        gold_recompute_for_claim(claim=Claim(pk=claim_id, project_id=project.pk))
    return len(ids)


def gold_apply(
    batch: StatementBatch, *, claim: Claim, decision: GoldDecision, gold_id: int | None, now=None
) -> None:
    """Queue on `batch` the writes `decision` asks of the claim's gold (row `gold_id`, if any);
    moves `claim.needs_review` in memory too. Plain SQL, so a label's save sends them with its
    other writes in one round trip (`annotate.sql`)."""
    moment = connection.ops.adapt_datetimefield_value(now or timezone.now())
    if decision.review_cleared:
        # Every analyst has labelled the claim again since it was edited.
        sql.claim_review_clear(batch, claim_id=claim.pk)
        claim.needs_review = False
    if decision.action == "delete":
        sql.gold_delete(batch, gold_id=gold_id)
    elif decision.action == "create":
        sql.gold_unanimous_insert(
            batch,
            claim_id=claim.pk,
            verdict=decision.verdict,
            reason=decision.reason,
            moment=moment,
        )
    elif decision.action == "update":
        sql.gold_update(
            batch, gold_id=gold_id, verdict=decision.verdict, reason=decision.reason, moment=moment
        )


def gold_unanimous_bulk(*, project: Project) -> int:
    """Give every claim of the project without gold its unanimous gold, in bulk; return how many.

    The rule is `gold_decide`'s, called once per claim (labels changed after a reveal left out
    with their sentence in the reason unless the project counts them; a claim's review flag
    cleared when every label is fresh again), for labels written in bulk by an import. One
    pass over the labels of claims without gold, ordered by claim; the golds in one bulk insert
    and the cleared flags in one update.
    """
    rows = (
        Label.objects.filter(claim__project=project, claim__gold__isnull=True)
        .order_by("claim_id")
        .values_list(
            "claim_id",
            "claim__labels_required",
            "claim__needs_review",
            "verdict",
            "needs_review",
            "changed_after_reveal",
        )
    )
    golds: list[Gold] = []
    cleared: list[int] = []

    def decide(claim_id: int, required: int, claim_review: bool, labels: list) -> None:
        decision = gold_decide(
            labels_required=required,
            claim_needs_review=claim_review,
            labels=labels,
            gold=None,
            count_changed=project.count_changed_after_reveal,
        )
        if decision.review_cleared:
            cleared.append(claim_id)
        if decision.action == "create":
            golds.append(
                Gold(
                    claim_id=claim_id,
                    verdict=decision.verdict,
                    source=Gold.Source.UNANIMOUS,
                    reason=decision.reason,
                )
            )

    current, labels, meta = None, [], (0, False)
    for claim_id, required, claim_review, verdict, review, changed in rows.iterator(
        chunk_size=5000
    ):
        if claim_id != current:
            if current is not None:
                decide(current, *meta, labels)
            current, labels, meta = claim_id, [], (required, claim_review)
        labels.append((verdict, review, changed))
    if current is not None:
        decide(current, *meta, labels)
    if cleared:
        Claim.objects.filter(pk__in=cleared).update(needs_review=False)
    Gold.objects.bulk_create(golds, batch_size=2000)
    return len(golds)


@transaction.atomic
def gold_adjudicate(*, claim: Claim, verdict: str, reason: str, user) -> Gold:
    """A lead's gold verdict for a claim, with the reason (required). Clears its review flag."""
    claim = Claim.objects.select_for_update().select_related("project").get(pk=claim.pk)
    _require_role(project=claim.project, user=user, role=Role.LEAD, action="adjudicate")
    if verdict not in Verdict.values:
        raise ReviewError(
            f"Unknown verdict {verdict!r}: choose SUPPORTED, CONTRADICTED or NOT_IN_PILE."
        )
    reason = (reason or "").strip()
    if not reason:
        raise ReviewError("Give the reason for the gold verdict: it is what an auditor reads.")
    gold, _ = Gold.objects.update_or_create(
        claim=claim,
        defaults={
            "verdict": verdict,
            "source": Gold.Source.ADJUDICATED,
            "decided_by": user,
            "reason": reason,
        },
    )
    if claim.needs_review:
        claim.needs_review = False
        claim.save(update_fields=["needs_review"])
    return gold


# ---------------------------------------------------------------------------------------------
# Facts


@transaction.atomic
def fact_add(*, passage: Passage, start: int, end: int, quote: str, user) -> Fact:
    """Mark passage text [start, end) (code points) as a supportable fact, verified by quote."""
    answer = passage.answer
    _require_role(project=answer.project, user=user, role=Role.ANALYST, action="mark facts")
    try:
        quote_verify(passage_text=passage.text, start=start, end=end, quote=quote)
    except QuoteError as error:
        raise ReviewError(str(error)) from error
    if Fact.objects.filter(passage=passage, start=start, end=end).exists():
        raise ReviewError("That span is already marked as a fact.")
    return Fact.objects.create(
        answer=answer, passage=passage, start=start, end=end, text=quote, created_by=user
    )


@transaction.atomic
def fact_delete(*, fact: Fact, user) -> None:
    """Delete a fact: its author may, and so may a lead."""
    role = _role_of(project=fact.answer.project, user=user)
    is_lead = role is not None and ROLE_RANK[Role(role)] >= ROLE_RANK[Role.LEAD]
    if not is_lead and not (role and fact.created_by_id == user.pk):
        raise ReviewError("Only a lead or the analyst who marked a fact can delete it.")
    fact.delete()


@dataclass(frozen=True)
class Span:
    passage_id: int
    start: int
    end: int


def _span_of(item) -> tuple[int | None, int | None, int | None]:
    if isinstance(item, tuple | list):
        return tuple(item[-3:])
    return (
        getattr(item, "evidence_passage_id", getattr(item, "passage_id", None)),
        getattr(item, "evidence_start", getattr(item, "start", None)),
        getattr(item, "evidence_end", getattr(item, "end", None)),
    )


def facts_grounded(labels_or_quotes: Iterable, facts: Iterable) -> set[int]:
    """Ids of the facts that at least one evidence span overlaps.

    `labels_or_quotes`: the supported gold claims' evidence, as (passage id, start, end) tuples,
    Label objects, or `annotate.quotes.Quote`s. `facts`: (fact id, passage id, start, end)
    tuples or Fact objects. Spans are half-open [start, end) in code points; two spans overlap
    when they share at least one character of the same passage (touching ends do not count).
    """
    by_passage: dict[int, list[tuple[int, int]]] = {}
    for item in labels_or_quotes:
        passage_id, start, end = _span_of(item)
        if passage_id is None or start is None or end is None:
            continue
        by_passage.setdefault(passage_id, []).append((start, end))
    grounded = set()
    for fact in facts:
        if isinstance(fact, tuple | list):
            fact_id, passage_id, start, end = fact
        else:
            fact_id, passage_id, start, end = fact.pk, fact.passage_id, fact.start, fact.end
        if any(s < end and start < e for s, e in by_passage.get(passage_id, ())):
            grounded.add(fact_id)
    return grounded


def facts_grounded_for_project(*, project: Project) -> tuple[set[int], list[int]]:
    """(grounded fact ids, all fact ids) of a project, for coverage.

    Evidence counted: the quotes (every span) of SUPPORTED labels on claims whose gold is
    SUPPORTED, in answers not confirmed as abstentions.
    """
    evidence = list(
        Label.objects.filter(
            claim__project=project,
            claim__gold__verdict=Verdict.SUPPORTED,
            claim__answer__abstention=False,
            verdict=Verdict.SUPPORTED,
            evidence_passage__isnull=False,
        ).values_list("evidence_passage_id", "evidence_start", "evidence_end")
    )
    # and every span after a label's first
    evidence += EvidenceSpan.objects.filter(
        label__claim__project=project,
        label__claim__gold__verdict=Verdict.SUPPORTED,
        label__claim__answer__abstention=False,
        label__verdict=Verdict.SUPPORTED,
    ).values_list("passage_id", "start", "end")
    facts = list(
        Fact.objects.filter(answer__project=project).values_list("pk", "passage_id", "start", "end")
    )
    return facts_grounded(evidence, facts), [f[0] for f in facts]


# ---------------------------------------------------------------------------------------------
# Reads for the pages


def adjudication_claims(*, project: Project) -> QuerySet[Claim]:
    """Claims waiting for a lead: analysts disagree, or a label or the claim needs review
    (edited after labelling), or (unless the project counts them) a label changed after a
    reveal left the claim with all its labels and no gold. Claims a lead already decided drop
    out until edited again."""
    adjudicated = Gold.objects.filter(claim=OuterRef("pk"), source=Gold.Source.ADJUDICATED)
    waiting = Q(n_verdicts__gt=1) | Q(n_review__gt=0)
    if not project.count_changed_after_reveal:
        waiting |= (
            Q(n_changed__gt=0)
            & Q(label_count__gte=F("labels_required"))
            & ~Exists(Gold.objects.filter(claim=OuterRef("pk")))
        )
    return (
        Claim.objects.filter(project=project)
        .annotate(
            n_labels=Count("labels", distinct=True),
            n_verdicts=Count("labels__verdict", distinct=True),
            n_review=Count("labels", filter=Q(labels__needs_review=True), distinct=True),
            n_changed=Count("labels", filter=Q(labels__changed_after_reveal=True), distinct=True),
            adjudicated=Exists(adjudicated),
        )
        .filter(n_labels__gt=0)
        .filter(Q(needs_review=True) | (Q(adjudicated=False) & waiting))
        .select_related("answer")
        .order_by("answer__position", "answer_id", "position", "id")
    )


def claim_labels_for_review(*, claim: Claim) -> list[Label]:
    return list(
        claim.labels.select_related("annotator", "imported_annotator", "evidence_passage").order_by(
            "annotator__username", "imported_annotator__name"
        )
    )


@dataclass(frozen=True)
class Marked:
    """Text cut around a highlighted span, for templates: before, mark, after."""

    before: str
    mark: str
    after: str


def text_marked(text: str, start: int | None, end: int | None) -> Marked:
    if start is None or end is None or not 0 <= start <= end <= len(text):
        return Marked(text, "", "")
    return Marked(text[:start], text[start:end], text[end:])


@dataclass(frozen=True)
class TextSegment:
    """A run of text and what marks it (claims, facts): templates highlight runs with marks."""

    text: str
    marks: tuple


def text_segments(text: str, spans: Iterable[tuple[int, int, object]]) -> list[TextSegment]:
    """Cut `text` at every span boundary; each run lists the payloads of the spans over it.

    Spans are (start, end, payload) in code points; empty or out-of-range spans are ignored,
    overlapping ones are fine (a run under two spans carries both payloads).
    """
    spans = [
        (s, e, p)
        for s, e, p in spans
        if s is not None and e is not None and 0 <= s < e <= len(text)
    ]
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    return [
        TextSegment(text[a:b], tuple(p for s, e, p in spans if s <= a and b <= e))
        for a, b in zip(cuts, cuts[1:], strict=False)
        if a < b
    ]


def passage_line(text: str, start: int, end: int) -> Marked:
    """The sentence(s) of a passage around a quote, the quote marked: "the passage's line"."""
    around = [s for s in sentences(text) if s.start < end and start < s.end]
    lo = min([s.start for s in around] + [start])
    hi = max([s.end for s in around] + [end])
    return Marked(text[lo:start], text[start:end], text[end:hi])


def answer_sentence(claim: Claim) -> str:
    """What the answer says for this claim: its source span, else the claim's text."""
    if claim.span_start is not None and claim.span_end is not None:
        return claim.answer.text[claim.span_start : claim.span_end]
    return claim.text


@dataclass(frozen=True)
class ContradictionRow:
    claim: Claim
    gold: str
    said: str
    quotes: list  # [(Label, Marked, Passage, quoted text)]: each span of each label


def contradiction_rows(*, project: Project) -> list[ContradictionRow]:
    """Every claim with gold CONTRADICTED, or no gold and a CONTRADICTED label, with the
    answer's sentence and each contradicting label's quoted line (one per span of its quote)."""
    contradicting = (
        Label.objects.filter(verdict=Verdict.CONTRADICTED)
        .select_related("evidence_passage", "annotator", "imported_annotator")
        .prefetch_related(
            Prefetch("more_spans", queryset=EvidenceSpan.objects.select_related("passage"))
        )
    )
    claims = (
        Claim.objects.filter(project=project)
        .filter(
            Q(gold__verdict=Verdict.CONTRADICTED)
            | Q(gold__isnull=True, labels__verdict=Verdict.CONTRADICTED)
        )
        .distinct()
        .select_related("answer", "gold")
        .prefetch_related(Prefetch("labels", queryset=contradicting, to_attr="contradicting"))
        .order_by("answer__position", "answer_id", "position", "id")
    )
    rows = []
    for claim in claims:
        quotes = []
        for label in claim.contradicting:
            if label.evidence_passage is None:
                continue
            spans = [
                (label.evidence_passage, label.evidence_start, label.evidence_end, label.evidence_quote),
                *((s.passage, s.start, s.end, s.quote) for s in label.more_spans.all()),
            ]  # fmt: skip
            quotes += [
                (label, passage_line(passage.text, start, end), passage, quote)
                for passage, start, end, quote in spans
            ]
        gold = claim.gold.verdict if hasattr(claim, "gold") else ""
        rows.append(ContradictionRow(claim, gold, answer_sentence(claim), quotes))
    return rows

"""Writing claims: splitting an answer (by rule or LLM), editing by hand, abstentions.

Labels are never moved silently. Editing, splitting or merging a claim that has labels keeps
them (and their history) on the claim, marks the claim and each label `needs_review`, and
writes a FLAGGED history row per label; the claim then waits on the adjudication page until
its analysts re-label it or a lead decides. Nothing here deletes a label unless a lead asked
for exactly that (`claim_delete(..., discard_labels=True)`).

Judge verdicts are treated alike: a change to a claim's text marks the verdicts made on the old
text `stale` (kept, with that text, but counted nowhere: report, agreement, audit card, export),
so a judge run with scope "unjudged" judges the claim again. The services that change a claim's
text say how many verdicts went stale in `claim.verdicts_retired`, for the editor to tell the lead.
"""

import re

from django.db import transaction
from django.db.models import Count, F, Q

from annotate import hooks
from annotate.limits import SETTINGS, limits_current, too_long
from annotate.models import (
    ROLE_RANK,
    Answer,
    Claim,
    EvidenceSpan,
    LabelHistory,
    Membership,
    Project,
    Role,
)
from annotate.queue_order import claim_queue_fields
from annotate.services.label_history import more_spans_record
from annotate.services.review import gold_recompute_for_claim
from annotate.splitting import ClaimDraft, abstention_detect, align_claims, claim_tags, split_rule

METHODS = ("rule", "llm")
ORIGIN_MANUAL = "manual"
ORIGIN_RULE = "rule"


class ClaimsError(ValueError):
    """A claim edit that cannot be made as asked; the message is for the lead."""


def _require_lead(*, project, user) -> None:
    """Commands pass no user (the operator at the shell); everyone else must be a lead."""
    if user is None:
        return
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None or ROLE_RANK[Role(membership.role)] < ROLE_RANK[Role.LEAD]:
        raise ClaimsError("Only a lead of this project can change its claims.")


def _claim_text_check(text: str) -> None:
    """The operator's limit on a claim's length (FAITHAUDIT_MAX_CLAIM_CHARS), for every writer."""
    message = too_long(text, "claim_chars", "The claim")
    if message:
        raise ClaimsError(f"{message}. Split it into shorter claims.")


def _claims_room_check(*, answer: Answer, total: int) -> None:
    """Refuse a change that would leave `answer` with `total` claims, over the limit."""
    most = limits_current().claims_per_answer
    if total > most:
        raise ClaimsError(
            f"Answer {answer.external_id} would have {total} claims; at most {most} claims are "
            f"allowed per answer (operator setting {SETTINGS['claims_per_answer']})."
        )


def _protected(claim: Claim) -> bool:
    """A claim whose removal would lose human work: it has labels or a gold verdict."""
    return bool(getattr(claim, "n_labels", 0)) or hasattr(claim, "gold")


def _queue_fields(*, answer: Answer, position: int, text: str) -> dict:
    project = answer.project
    key, required = claim_queue_fields(
        seed=project.queue_seed,
        answer_external_id=answer.external_id,
        position=position,
        text=text,
        by_answer=project.queue_order == Project.QueueOrder.ANSWER,
        analysts_per_claim=project.analysts_per_claim,
        double_share=project.double_labelled_share,
    )
    return {"queue_key": key, "labels_required": required}


def _positions_renumber(answer: Answer) -> None:
    claims = list(answer.claims.order_by("position", "id"))
    changed = []
    for index, claim in enumerate(claims):
        if claim.position != index:
            claim.position = index
            changed.append(claim)
    Claim.objects.bulk_update(changed, ["position"])


def _labels_flag(*, claim: Claim) -> int:
    """Mark the claim and its labels for review, with a FLAGGED history row per label."""
    labels = list(claim.labels.select_for_update().order_by("id"))
    if not labels:
        return 0

    more = {}
    for span in EvidenceSpan.objects.filter(label__in=labels).order_by("label_id", "number"):
        more.setdefault(span.label_id, []).append(span)
    claim.needs_review = True
    claim.save(update_fields=["needs_review"])
    history = []
    for label in labels:
        label.needs_review = True
        label.save(update_fields=["needs_review", "updated_at"])
        history.append(
            LabelHistory(
                label_id_at_time=label.pk,
                claim_id=claim.pk,
                annotator_id=label.annotator_id,
                imported_annotator_id=label.imported_annotator_id,
                action=LabelHistory.Action.FLAGGED,
                verdict=label.verdict,
                evidence_passage_id_at_time=label.evidence_passage_id,
                evidence_start=label.evidence_start,
                evidence_end=label.evidence_end,
                evidence_quote=label.evidence_quote,
                more_spans=more_spans_record(more.get(label.pk, ())),
                note=label.note,
                correct=label.correct,
            )
        )
    LabelHistory.objects.bulk_create(history)

    gold_recompute_for_claim(claim=claim)
    return len(labels)


def _verdicts_retire(*, claim: Claim, old_text: str) -> int:
    """Mark the judge verdicts made on `old_text` stale; return how many stopped counting.

    Call inside the transaction that changes the claim's text, holding its row lock.
    """
    # Asked of judges through a hook: judges depends on annotate, not the other way round.
    return hooks.claim_verdicts_retire(claim_id=claim.pk, old_text=old_text)


def _verdicts_counting(claim_ids: list[int]) -> int:
    """How many judge verdicts on these claims still count (not stale)."""
    return hooks.claims_verdicts_counting(claim_ids=claim_ids)


def _locate(*, answer_text: str, text: str, within: tuple[int | None, int | None] = (None, None)):
    """The span of `text` in the answer (inside `within` when given), or (None, None)."""
    start, end = within
    if start is None or end is None:
        start, end = 0, len(answer_text)
    needle = text.strip().rstrip(".").casefold()
    if not needle or len(needle) != len(text.strip().rstrip(".")):
        return None, None
    index = answer_text[start:end].casefold().find(needle)
    if index < 0:
        return None, None
    return start + index, start + index + len(needle)


def _trim_span(answer_text: str, start: int, end: int) -> tuple[int | None, int | None]:
    """[start, end) without edge whitespace, punctuation and coordinators ("and", "but")."""
    piece = answer_text[start:end]
    lead = re.match(r"^[\s,;:]*(?:(?:and|but|or)\b)?[\s,;:]*", piece).end()
    tail = re.search(r"[\s,;:]*(?:\b(?:and|but|or))?[\s,;:]*$", piece[lead:]).start()
    if tail == 0:
        return None, None
    return start + lead, start + lead + tail


def claims_split(
    *,
    answer: Answer,
    method: str = "rule",
    texts: list[str] | None = None,
    origin: str = "",
    user=None,
    force: bool = False,
) -> list[Claim]:
    """Split `answer` into claims by rule, or write the claims an LLM split it into.

    By LLM the caller has already called the model (judges' split job, on a worker) and hands
    over the claim `texts` and their `origin` (`llm:<prompt version>`); here they are aligned
    to the answer's text and written. Nothing here calls an endpoint.

    An answer that already has claims is refused unless `force`. With `force`, a claim the new
    split reproduces exactly is kept as it is (labels, gold and judge verdicts included); other
    claims without labels (or gold) are replaced, their judge verdicts going with them; other
    claims with labels stay where they are, text unchanged, flagged for review, so a lead
    decides about them (never silently moved or deleted). No kept claim changes its text, so
    no judge verdict goes stale here. Also records whether the answer looks
    like an abstention (`abstention_suggested`) for a lead to confirm.
    """
    if method not in METHODS:
        raise ClaimsError(f"Unknown split method {method!r}: use rule or llm.")
    answer = Answer.objects.select_related("project").get(pk=answer.pk)
    _require_lead(project=answer.project, user=user)
    _refuse_resplit(answer=answer, force=force)
    if method == "rule":
        drafts, origin = split_rule(answer.text), ORIGIN_RULE
    else:
        if texts is None or not origin.startswith("llm:"):
            raise ClaimsError(
                "Splitting by LLM runs as a job with a judge's decompose prompt "
                "(the claims page's “Split by LLM”)."
            )
        texts = [t.strip() for t in texts if t and t.strip()]
        if not texts:
            raise ClaimsError("The LLM returned no claims for this answer.")
        drafts = align_claims(answer.text, texts)
    return _claims_replace(answer=answer, drafts=drafts, origin=origin, force=force)


def _refuse_resplit(*, answer: Answer, force: bool) -> None:
    count = answer.claims.count()
    if count and not force:
        raise ClaimsError(
            f"Answer {answer.external_id} already has {count} claims; "
            "re-split it only on purpose (force)."
        )


@transaction.atomic
def _claims_replace(
    *, answer: Answer, drafts: list[ClaimDraft], origin: str, force: bool
) -> list[Claim]:
    answer = Answer.objects.select_for_update().select_related("project").get(pk=answer.pk)
    _refuse_resplit(answer=answer, force=force)  # again, under the lock: a split may have won
    existing = list(
        answer.claims.select_related("gold").annotate(n_labels=Count("labels")).order_by("position")
    )
    drafted = {(d.text, d.span_start, d.span_end) for d in drafts}
    # A claim the new split reproduces exactly stays the same row, with its labels and judge
    # verdicts (they judged this very text); other claims without human work are replaced.
    kept = [claim for claim in existing if _protected(claim)]
    reproduced = {(c.text, c.span_start, c.span_end) for c in kept}
    for claim in existing:
        key = (claim.text, claim.span_start, claim.span_end)
        if not _protected(claim) and key in drafted and key not in reproduced:
            kept.append(claim)
            reproduced.add(key)
    kept_ids = {c.pk for c in kept}
    Claim.objects.filter(pk__in=[c.pk for c in existing if c.pk not in kept_ids]).delete()
    new_drafts: list[ClaimDraft] = [
        d for d in drafts if (d.text, d.span_start, d.span_end) not in reproduced
    ]
    _claims_room_check(answer=answer, total=len(kept) + len(new_drafts))
    for draft in new_drafts:
        _claim_text_check(draft.text)
    for claim in kept:
        if (claim.text, claim.span_start, claim.span_end) not in drafted:
            _labels_flag(claim=claim)

    created = Claim.objects.bulk_create(
        Claim(
            project=answer.project,
            answer=answer,
            text=draft.text,
            origin=origin,
            span_start=draft.span_start,
            span_end=draft.span_end,
            tags=list(draft.tags),
            position=0,
        )
        for draft in new_drafts
    )
    # Order by where each claim comes from in the answer; claims without a span go last.
    ordered = sorted(
        [*kept, *created],
        key=lambda c: (c.span_start is None, c.span_start or 0, c.position, c.pk or 0),
    )
    new_ids = {c.pk for c in created}
    for index, claim in enumerate(ordered):
        claim.position = index
        if claim.pk in new_ids:
            for field, value in _queue_fields(
                answer=answer, position=index, text=claim.text
            ).items():
                setattr(claim, field, value)
    Claim.objects.bulk_update(ordered, ["position", "queue_key", "labels_required"])

    answer.abstention_suggested = bool(abstention_detect(answer.text)) and not answer.abstention
    answer.save(update_fields=["abstention_suggested"])
    return [c for c in ordered if c.pk in new_ids]


@transaction.atomic
def claim_edit(*, claim: Claim, text: str, user) -> Claim:
    """Change a claim's text by hand; labels it had are kept and flagged for review, judge
    verdicts on the old text stop counting (`claim.verdicts_retired` says how many)."""
    claim = Claim.objects.select_for_update().select_related("answer", "project").get(pk=claim.pk)
    _require_lead(project=claim.project, user=user)
    text = text.strip()
    if not text:
        raise ClaimsError("A claim cannot be empty: delete it instead.")
    _claim_text_check(text)
    claim.verdicts_retired = 0
    if text == claim.text:
        return claim
    old_text = claim.text
    claim.text = text
    claim.tags = claim_tags(text)
    claim.origin = ORIGIN_MANUAL
    claim.save(update_fields=["text", "tags", "origin"])
    _labels_flag(claim=claim)
    claim.verdicts_retired = _verdicts_retire(claim=claim, old_text=old_text)
    return claim


@transaction.atomic
def claim_split_at(*, claim: Claim, at: int, user) -> tuple[Claim, Claim]:
    """Cut a claim in two at code-point offset `at` of its text.

    The first part stays the same claim (its labels kept and flagged for review, its judge
    verdicts stale: `first.verdicts_retired`); the second is a new claim right after it,
    unlabelled and unjudged, with its own place in the queue.
    """
    claim = Claim.objects.select_for_update().select_related("answer", "project").get(pk=claim.pk)
    _require_lead(project=claim.project, user=user)
    if not 0 < at < len(claim.text):
        raise ClaimsError(
            f"Split point {at} is not inside the claim (1–{max(len(claim.text) - 1, 1)})."
        )
    first, second = claim.text[:at].strip(), claim.text[at:].strip()
    if not first or not second:
        raise ClaimsError("Both parts of a split need some text.")
    _claims_room_check(answer=claim.answer, total=claim.answer.claims.count() + 1)
    answer = claim.answer
    within = (claim.span_start, claim.span_end)
    first_span = _locate(answer_text=answer.text, text=first, within=within)
    second_span = _locate(answer_text=answer.text, text=second, within=within)
    if claim.span_start is not None:
        # A part not found verbatim (a carried subject) takes the rest of the old span.
        if first_span[0] is not None and second_span[0] is None:
            second_span = _trim_span(answer.text, first_span[1], claim.span_end)
        elif second_span[0] is not None and first_span[0] is None:
            first_span = _trim_span(answer.text, claim.span_start, second_span[0])
    old_text = claim.text
    claim.text = first
    claim.tags = claim_tags(first)
    claim.origin = ORIGIN_MANUAL
    claim.span_start, claim.span_end = first_span
    claim.save(update_fields=["text", "tags", "origin", "span_start", "span_end"])
    answer.claims.filter(position__gt=claim.position).update(position=F("position") + 1)
    position = claim.position + 1
    new = Claim.objects.create(
        project=claim.project,
        answer=answer,
        text=second,
        origin=ORIGIN_MANUAL,
        span_start=second_span[0],
        span_end=second_span[1],
        tags=claim_tags(second),
        position=position,
        **_queue_fields(answer=answer, position=position, text=second),
    )
    _labels_flag(claim=claim)
    claim.verdicts_retired = _verdicts_retire(claim=claim, old_text=old_text)
    _positions_renumber(answer)
    return claim, new


@transaction.atomic
def claims_merge(*, first: Claim, second: Claim, user) -> Claim:
    """Merge two neighbouring claims of one answer into one.

    The claim that has labels survives with the joined text and its labels flagged for
    review; the other (unlabelled) one is removed. When both have labels the merge is refused:
    it would have to throw one analyst's work away or attach it to a claim they never saw.
    Judge verdicts of both stop counting: the survivor's are kept as stale, the removed
    claim's go with it (`survivor.verdicts_retired` counts both).
    """
    pair = list(
        Claim.objects.select_for_update()
        .filter(pk__in=[first.pk, second.pk])
        .select_related("answer", "project")
        .order_by("position", "id")
    )
    if len(pair) != 2 or pair[0].answer_id != pair[1].answer_id:
        raise ClaimsError("Only two claims of the same answer can be merged.")
    first, second = pair
    _require_lead(project=first.project, user=user)
    between = first.answer.claims.filter(
        Q(position__gt=first.position, position__lt=second.position)
    ).exists()
    if between:
        raise ClaimsError("Only neighbouring claims can be merged.")
    counts = dict(
        Claim.objects.filter(pk__in=[first.pk, second.pk])
        .annotate(n=Count("labels"))
        .values_list("pk", "n")
    )
    gold_ids = set(
        Claim.objects.filter(pk__in=[first.pk, second.pk], gold__isnull=False).values_list(
            "pk", flat=True
        )
    )
    work = {pk: counts.get(pk, 0) or (pk in gold_ids) for pk in (first.pk, second.pk)}
    if work[first.pk] and work[second.pk]:
        raise ClaimsError(
            "Both claims have labels: merging would discard one analyst's work or attach it "
            "to text they never saw. Delete one of them first (its labels go with it, after "
            "you confirm), then merge."
        )
    survivor, absorbed = (second, first) if work[second.pk] else (first, second)
    _claim_text_check(f"{first.text.rstrip()} {second.text.lstrip()}")
    old_text = survivor.text
    absorbed_verdicts = _verdicts_counting([absorbed.pk])
    survivor.text = f"{first.text.rstrip()} {second.text.lstrip()}"
    survivor.tags = claim_tags(survivor.text)
    survivor.origin = ORIGIN_MANUAL
    spans = [(c.span_start, c.span_end) for c in (first, second) if c.span_start is not None]
    if spans:
        survivor.span_start = min(s for s, _ in spans)
        survivor.span_end = max(e for _, e in spans)
    survivor.position = first.position
    absorbed.delete()
    survivor.save(update_fields=["text", "tags", "origin", "span_start", "span_end", "position"])
    _labels_flag(claim=survivor)
    survivor.verdicts_retired = absorbed_verdicts + _verdicts_retire(
        claim=survivor, old_text=old_text
    )
    _positions_renumber(survivor.answer)
    return survivor


@transaction.atomic
def claim_delete(*, claim: Claim, user, discard_labels: bool = False) -> None:
    """Delete a claim; one with labels or gold only when the lead confirmed discarding them."""
    claim = Claim.objects.select_for_update().select_related("answer", "project").get(pk=claim.pk)
    _require_lead(project=claim.project, user=user)
    n_labels = claim.labels.count()
    if (n_labels or hasattr(claim, "gold")) and not discard_labels:
        raise ClaimsError(
            f"This claim has {n_labels} label(s){' and a gold verdict' if hasattr(claim, 'gold') else ''}"
            ": confirm that they are to be deleted with it."
        )
    answer = claim.answer
    _counters_forget(claim=claim)
    claim.delete()
    _positions_renumber(answer)


def _counters_forget(*, claim: Claim) -> None:
    """Take a deleted claim's labels out of the labelling counters (label_save keeps them)."""
    for annotator_id in claim.labels.values_list("annotator_id", flat=True):
        Membership.objects.filter(
            project_id=claim.project_id, user_id=annotator_id, labels_saved__gt=0
        ).update(labels_saved=F("labels_saved") - 1)
    if claim.label_count and claim.label_count >= claim.labels_required:
        Project.objects.filter(pk=claim.project_id, claims_complete__gt=0).update(
            claims_complete=F("claims_complete") - 1
        )


@transaction.atomic
def claim_add(*, answer: Answer, text: str, user, after: Claim | None = None) -> Claim:
    """Add a claim by hand, after `after` or at the end; its span is found when verbatim."""
    answer = Answer.objects.select_for_update().select_related("project").get(pk=answer.pk)
    _require_lead(project=answer.project, user=user)
    text = text.strip()
    if not text:
        raise ClaimsError("Type the claim's text.")
    if after is not None and after.answer_id != answer.pk:
        raise ClaimsError("That claim belongs to another answer.")
    _claim_text_check(text)
    _claims_room_check(answer=answer, total=answer.claims.count() + 1)
    if after is None:
        position = answer.claims.count()
    else:
        position = after.position + 1
        answer.claims.filter(position__gte=position).update(position=F("position") + 1)
    span = _locate(answer_text=answer.text, text=text)
    claim = Claim.objects.create(
        project=answer.project,
        answer=answer,
        text=text,
        origin=ORIGIN_MANUAL,
        span_start=span[0],
        span_end=span[1],
        tags=claim_tags(text),
        position=position,
        **_queue_fields(answer=answer, position=position, text=text),
    )
    _positions_renumber(answer)
    return claim


@transaction.atomic
def answer_abstention_set(*, answer: Answer, abstention: bool, user) -> Answer:
    """Confirm (or reject) that an answer abstains; either way the suggestion is dealt with."""
    answer = Answer.objects.select_for_update().select_related("project").get(pk=answer.pk)
    _require_lead(project=answer.project, user=user)
    answer.abstention = abstention
    answer.abstention_suggested = False
    answer.save(update_fields=["abstention", "abstention_suggested"])
    return answer

"""Labels and gold (`/projects/{slug}/claims/{claim_id}/labels`, `…/gold`): a label saved and
read back as the labelling screen does (others' verdicts only as it reveals them), a lead's
adjudication as the adjudication screen."""

import re

from django.core.exceptions import PermissionDenied
from ninja import Query, Router, Status

from annotate.models import Label, Membership, Project, Role
from annotate.selectors import claim_get_for_project, claim_reveal_for_user
from annotate.services.label_history import reveal_record
from annotate.services.labels import ClaimHeld, LabelError, LabelSaveConflict, label_save_and_next
from annotate.services.queue import QueueError, claim_next_for_user
from annotate.services.review import ReviewError, gold_adjudicate
from annotate.vocabulary import Verdict
from api import schemas as s
from api import selectors
from api.problems import Problem
from api.routes.access import ERRORS, WRITE_ERRORS, invalid, project_get_for_request

router = Router()


def _label_out(label: Label) -> dict:
    return {
        "annotator": str(
            label.annotator.username if label.annotator_id else label.imported_annotator
        ),
        "verdict": label.verdict,
        "quote": label.evidence_quote or "",
        "passage_rank": label.evidence_passage.rank if label.evidence_passage_id else None,
        "more_quotes": [
            {"passage_rank": span.passage.rank, "quote": span.quote}
            for span in label.more_spans.all()
        ],
        "note": label.note,
        "updated_at": label.updated_at,
    }


@router.get(
    "/projects/{slug}/claims/{claim_id}/labels",
    response={200: s.LabelsOut, **ERRORS},
    tags=["labels"],
)
def labels_read(request, slug: str, claim_id: int):
    """Your own label; the judges' verdicts and colleagues' labels only as the labelling
    screen reveals them (after your own label, in a project that reveals after saving).
    Leads and owners see every label, as on the review screens."""
    project, membership = project_get_for_request(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    own = selectors.label_of_user(claim=claim, user=request.user)
    out = {"own": _label_out(own) if own else None, "revealed": None, "all": None}
    reveal = claim_reveal_for_user(claim=claim, user=request.user, project=project)
    if reveal is not None:
        out["revealed"] = {
            "judge_verdicts": [
                {"judge": v.run.judge.name, "verdict": v.verdict, "confidence": v.confidence}
                for v in reveal["judge_verdicts"]
            ],
            "colleague_labels": [_label_out(label) for label in reveal["colleague_labels"]],
        }
    if membership.role in (Role.LEAD, Role.OWNER):
        out["all"] = [_label_out(label) for label in selectors.labels_for_claim(claim=claim)]
    shown_others = (
        reveal is not None and (reveal["judge_verdicts"] or reveal["colleague_labels"])
    ) or (out["all"] is not None and len(out["all"]) > 1)
    if own is not None and shown_others:
        # as the labelling screen does: a later change of this label is then marked
        # changed_after_reveal (the answer just carried others' verdicts beside it)
        reveal_record(claim_id=claim.pk, user=request.user, verdict=own.verdict)
    return out


@router.post(
    "/projects/{slug}/claims/{claim_id}/labels",
    response={201: s.LabelOut, **WRITE_ERRORS, 503: s.ProblemOut},
    tags=["labels"],
)
def labels_create(request, slug: str, claim_id: int, payload: s.LabelIn):
    """Save your label on a claim through the labelling screen's service and checks (the
    quote is looked up in the passage of that rank)."""
    project, membership = project_get_for_request(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    passage_id, more = _spans_resolve(claim, payload)
    try:
        label_save_and_next(
            project=project,
            membership=membership,
            annotator=request.user,
            claim_id=claim.pk,
            verdict=payload.verdict,
            passage_id=passage_id,
            quote=payload.quote,
            more=more,
            note=payload.note,
            correct=payload.correct if payload.verdict != Verdict.SUPPORTED else "",
        )
    except ClaimHeld as error:
        raise _claim_held(request, project, membership, str(error)) from None
    except (LabelError, QueueError) as error:
        raise invalid(str(error), _label_error_field(str(error))) from None
    except LabelSaveConflict as error:
        raise Problem(503, str(error), headers={"Retry-After": "1"}) from None
    label = selectors.label_get(claim_id=claim.pk, user=request.user)
    return Status(201, _label_out(label))


def _spans_resolve(claim, payload: s.LabelIn) -> tuple[int | None, list[dict]]:
    """The label's quoted passages by id, from the ranks the payload gives (a 422 naming the
    span whose rank is not in the pile)."""
    passage_id = None
    if payload.passage_rank is not None:
        passage_id = selectors.passage_ids_by_rank(
            answer=claim.answer, ranks=[payload.passage_rank]
        ).get(payload.passage_rank)
        if passage_id is None:
            raise invalid(
                f"The pile has no passage of rank {payload.passage_rank}.", "passage_rank"
            )
    more = []
    if payload.more_quotes:
        ranks = selectors.passage_ids_by_rank(
            answer=claim.answer, ranks=[span.passage_rank for span in payload.more_quotes]
        )
        for index, span in enumerate(payload.more_quotes):
            if span.passage_rank not in ranks:
                raise invalid(
                    f"Span {index + 2}: the pile has no passage of rank {span.passage_rank}.",
                    f"more_quotes[{index}].passage_rank",
                )
            more.append(
                {"passage_id": ranks[span.passage_rank], "start_utf16": None,
                 "end_utf16": None, "quote": span.quote}
            )  # fmt: skip
    return passage_id, more


def _claim_held(request, project: Project, membership: Membership, why: str) -> Problem:
    """409 for a save on a claim a colleague holds: the problem names the caller's next claim
    (`next_claim`, reserved for them as the labelling screen would; null when their queue is
    empty), so a client moves on instead of retrying."""
    try:
        following = claim_next_for_user(
            project=project, user=request.user, stratum=membership.queue_stratum
        )
    except QueueError:
        following = None
    return Problem(
        409,
        f"{why} Label the claim given as next_claim instead.",
        slug="claim-reserved",
        extra={"next_claim": following.pk if following else None},
    )


def _label_error_field(message: str) -> str:
    """The field a label's error is about: a span after the first ("Span 3: …", "Span 3
    overlaps span 1 …": more_quotes[1]), the verdict, else the quote."""
    if match := re.match(r"Span (\d+)\b", message):
        number = int(match.group(1))
        return f"more_quotes[{number - 2}]" if number >= 2 else "quote"
    return "verdict" if "verdict" in message.lower() else "quote"


@router.get("/projects/{slug}/gold", response={200: s.GoldPage, **ERRORS}, tags=["labels"])
def gold_list(request, slug: str, after: int = 0, limit: int = Query(500, ge=1, le=5000)):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    rows = selectors.gold_rows_for_project(project=project)
    return selectors.keyset_page(rows, after, limit, claim="claim_id")


@router.post(
    "/projects/{slug}/claims/{claim_id}/gold",
    response={201: s.GoldOut, **WRITE_ERRORS},
    tags=["labels"],
)
def gold_create(request, slug: str, claim_id: int, payload: s.GoldIn):
    """A lead's adjudication, as the adjudication screen."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    try:
        gold = gold_adjudicate(
            claim=claim, verdict=payload.verdict, reason=payload.reason, user=request.user
        )
    except (ReviewError, PermissionDenied) as error:
        raise invalid(str(error), "verdict") from None
    return Status(
        201,
        {
            "id": gold.pk,
            "claim": claim.pk,
            "verdict": gold.verdict,
            "source": gold.source,
            "reason": gold.reason,
        },
    )

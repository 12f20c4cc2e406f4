"""An analyst's skips: a claim taken out of their own queue with a reason, taken back by them,
or sent back by a lead."""

from django.db import transaction
from django.http import Http404

from annotate.models import Claim, ClaimSkip, Label, Project, Reservation
from annotate.services.queue import QueueError, claim_reserve


@transaction.atomic
def claim_skip(*, project: Project, user, claim_id: int, reason: str, note: str = "") -> ClaimSkip:
    """Take claim `claim_id` out of `user`'s queue with the reason (a lead sees it in the list
    of skipped claims and may send it back, `claim_skip_return`); their reservation on it goes.
    QueueError for an unknown reason or a claim they have labelled; Http404 for another
    project's claim."""
    if reason not in ClaimSkip.Reason.values:
        raise QueueError(
            "Say why you skip the claim: not checkable, not atomic (badly split) or needs "
            "expertise."
        )
    claim = Claim.objects.select_for_update().filter(project=project, pk=claim_id).first()
    if claim is None:
        raise Http404("No such claim in this project.")
    if Label.objects.filter(claim=claim, annotator=user).exists():
        raise QueueError("You have labelled this claim: change or undo your label instead.")
    skip, _ = ClaimSkip.objects.update_or_create(
        claim=claim, user=user, defaults={"reason": reason, "note": note}
    )
    Reservation.objects.filter(claim=claim, user=user).delete()
    return skip


@transaction.atomic
def claim_skip_undo(*, user, project: Project, skip_id: int) -> Claim | None:
    """Take back `user`'s skip `skip_id`: the claim returns to their queue and, if the quota
    leaves room, is held for them. None when the skip is gone already (a lead sent it back)."""
    skip = (
        ClaimSkip.objects.select_for_update()
        .select_related("claim")
        .filter(user=user, claim__project=project, pk=skip_id)
        .first()
    )
    if skip is None:
        return None
    claim = skip.claim
    skip.delete()
    claim_reserve(claim=claim, user=user)
    return claim


def claim_skip_return(*, project: Project, skip_id: int) -> None:
    """A lead sends a skipped claim back into the analyst's queue."""
    deleted, _ = ClaimSkip.objects.filter(claim__project=project, pk=skip_id).delete()
    if not deleted:
        raise Http404("No such skipped claim.")

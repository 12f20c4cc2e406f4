"""A claim's comment thread: adding a comment (issue 32)."""

from django.db import transaction
from django.db.models import F

from annotate.models import COMMENT_LENGTH_MAX, Claim, ClaimComment


class CommentError(ValueError):
    """A comment refused, with the reason in words; nothing is saved."""


def comment_add(*, claim: Claim, author, text: str) -> ClaimComment:
    """Add `author`'s comment to `claim`'s thread; CommentError when it is empty or too long.
    The caller has checked that `author` is a member of the claim's project."""
    text = (text or "").strip()
    if not text:
        raise CommentError("text: the comment is empty; write what is hard about this claim.")
    if len(text) > COMMENT_LENGTH_MAX:
        raise CommentError(
            f"text: {len(text)} characters; a comment holds at most {COMMENT_LENGTH_MAX}."
        )
    with transaction.atomic():
        comment = ClaimComment.objects.create(claim=claim, author=author, text=text)
        Claim.objects.filter(pk=claim.pk).update(comment_count=F("comment_count") + 1)
    claim.comment_count += 1
    return comment

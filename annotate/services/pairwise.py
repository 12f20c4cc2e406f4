"""Writing analysts' pairwise preferences: the only writer of `PairwisePreference`."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from annotate.models import Answer, PairwisePreference, Project, System
from annotate.pairwise import first_system_on_left, question_key

NOTE_MAX = 5000


class PairwiseError(ValueError):
    """A preference that cannot be saved; the message names the field."""


def _pair_answers(
    *, project: Project, system_1: System, system_2: System, ids: tuple[int, int]
) -> tuple[Answer, Answer, str]:
    """The two answers `ids` names, checked to be a pair of the queue: system_1's and
    system_2's first answers (lowest id) to one question key."""
    found = {a.pk: a for a in Answer.objects.filter(project=project, pk__in=ids)}
    first, second = found.get(ids[0]), found.get(ids[1])
    if first is None or second is None:
        raise PairwiseError("pair: one of its answers no longer exists; reload the page.")
    key = question_key(first.question_id, first.question)
    if (
        first.system_id != system_1.pk
        or second.system_id != system_2.pk
        or question_key(second.question_id, second.question) != key
    ):
        raise PairwiseError("pair: these answers are not a pair of this queue; reload the page.")
    same_key = Q(question_id=key) | Q(question_id="", question=key)
    for answer in (first, second):
        earlier = Answer.objects.filter(
            project=project, system_id=answer.system_id, id__lt=answer.pk
        )
        if earlier.filter(same_key).exists():
            raise PairwiseError("pair: not a pair of this queue; reload the page.")
    return first, second, key


@transaction.atomic
def pairwise_preference_save(
    *,
    project: Project,
    analyst,
    system_1: System,
    system_2: System,
    answer_ids: tuple[int, int],
    choice: str,
    note: str = "",
) -> PairwisePreference:
    """Save (or replace) `analyst`'s preference on the pair of answers `answer_ids` (system_1's,
    system_2's) of systems `system_1` < `system_2`, read by the view from the analyst's pair
    token (`annotate.selectors.pairwise_pair_for_user`). `choice` is the side pressed (left,
    right or tie); it is resolved to the system shown on that side for this analyst
    (`first_system_on_left`), never taken from the form."""
    if system_1.pk >= system_2.pk:
        raise ValueError("system_1 must be the system with the lower id")
    if choice not in PairwisePreference.SCREEN_CHOICES:
        raise PairwiseError("choice: press a (left), b (right) or = (tie).")
    if len(note) > NOTE_MAX:
        raise PairwiseError(f"note: at most {NOTE_MAX} characters.")
    first, second, key = _pair_answers(
        project=project, system_1=system_1, system_2=system_2, ids=answer_ids
    )
    left, right = (
        (system_1, system_2)
        if first_system_on_left(analyst_id=analyst.pk, answer_1_id=first.pk, answer_2_id=second.pk)
        else (system_2, system_1)
    )
    preferred = {"left": left, "right": right, "tie": None}[choice]
    preference, _ = PairwisePreference.objects.update_or_create(
        analyst=analyst,
        answer_1=first,
        answer_2=second,
        defaults={
            "project": project,
            "question_key": key,
            "system_1": system_1,
            "system_2": system_2,
            "left_system": left,
            "choice": choice,
            "preferred_system": preferred,
            "note": note,
        },
    )
    return preference


@transaction.atomic
def pairwise_preference_undo(
    *, project: Project, analyst, system_1: System, system_2: System
) -> PairwisePreference | None:
    """Delete `analyst`'s most recently saved preference in this queue (its pair is unmarked
    again) and return it, or None when there is none."""
    last = (
        PairwisePreference.objects.select_for_update()
        .filter(project=project, analyst=analyst, system_1=system_1, system_2=system_2)
        .order_by("-changed_at", "-id")
        .first()
    )
    if last is None:
        return None
    last.delete()
    return last

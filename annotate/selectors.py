"""Reads shared by views, tasks and commands.

Permission-checked fetches are named `<entity>_get_for_user`: they raise Http404 both when the
object does not exist and when the user may not see it, so another project's objects are never
confirmed to exist.
"""

import statistics
from collections import Counter

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Sum
from django.http import Http404
from django.utils.functional import cached_property

from annotate import hooks
from annotate.models import (
    ROLE_RANK,
    Answer,
    Claim,
    ClaimComment,
    EvidenceSpan,
    Label,
    LabelTime,
    Membership,
    PairwisePreference,
    Passage,
    Project,
    Role,
    System,
)
from annotate.pairwise import (
    Pair,
    first_system_on_left,
    pair_find,
    pair_order_key,
    question_key,
)
from annotate.sql import project_membership_get


def membership_get(*, user, project: Project) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(project=project, user=user).first()


def project_get_for_user(
    *, user, slug: str, role: str = Role.ANALYST, read: tuple | None = None
) -> tuple[Project, Membership]:
    """The project with this slug if `user` is a member with at least `role`, else Http404.
    `read`: (a user's id, their membership in it or None) read already (`annotate.access`),
    used when it is this user's and the membership, if any, is theirs in this project (else it
    is read again: a read handed down for another user or project never decides access)."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    if read is not None and read[0] == user.pk and _read_is_of(read[1], user, slug):
        membership = read[1]
    else:  # one hand-written statement (annotate.sql)
        membership = project_membership_get(slug=slug, user_id=user.pk)
    if membership is None or ROLE_RANK[Role(membership.role)] < ROLE_RANK[Role(role)]:
        raise Http404("No such project.")
    return membership.project, membership


def _read_is_of(membership: Membership | None, user, slug: str) -> bool:
    return membership is None or (membership.user_id == user.pk and membership.project.slug == slug)


def project_list_for_user(*, user) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user).order_by("name")


def answer_get_for_project(*, project: Project, answer_id: int) -> Answer:
    answer = Answer.objects.filter(project=project, pk=answer_id).first()
    if answer is None:
        raise Http404("No such answer.")
    return answer


def claim_get_for_project(*, project: Project, claim_id: int, lock: bool = False) -> Claim:
    """The claim with its answer; with `lock`, the claim alone, row-locked (call inside a
    transaction)."""
    claims = Claim.objects.filter(project=project, pk=claim_id)
    claims = claims.select_for_update() if lock else claims.select_related("answer")
    claim = claims.first()
    if claim is None:
        raise Http404("No such claim.")
    return claim


# Labelling screen --------------------------------------------------------------------------

PROJECT_TOTAL_CACHE_SECONDS = 60


def labelling_progress(*, project: Project, user, membership: Membership | None = None) -> dict:
    """The analyst's label count and the project's claims with enough labels, cheaply.

    Both come from counters kept by `label_save`/`label_undo`: read from `membership` and
    `project` as the request loaded them when `membership` is given (no query), else one
    indexed row read. The project's claim total (abstentions left out) is cached for a minute,
    since recounting 100k claims on every save would cost more than the save.
    """
    if membership is not None:
        row = {
            "labels_saved": membership.labels_saved,
            "project__claims_complete": project.claims_complete,
        }
    else:
        row = (
            Membership.objects.filter(project=project, user=user)
            .values("labels_saved", "project__claims_complete")
            .first()
        ) or {"labels_saved": 0, "project__claims_complete": 0}
    key = f"labelling:claims-total:{project.pk}:{project.created_at.timestamp()}"
    total = cache.get(key)
    if total is None:
        # Two index scans (all claims; the few of abstentions) beat one join over every claim.
        total = (
            Claim.objects.filter(project=project).count()
            - Claim.objects.filter(project=project, answer__abstention=True).count()
        )
        cache.set(key, total, PROJECT_TOTAL_CACHE_SECONDS)
    complete = min(row["project__claims_complete"], total)
    return {
        "labelled": row["labels_saved"],
        "complete": complete,
        "total": total,
        "percent": round(100 * complete / total) if total else 0,
    }


def claim_siblings(*, claim: Claim) -> list[Claim]:
    """The claims of `claim`'s answer in reading order (for `j`/`k`)."""
    return list(Claim.objects.filter(answer_id=claim.answer_id).order_by("position", "id"))


def claim_reveal_for_user(*, claim: Claim, user, project: Project) -> dict | None:
    """What the judges and colleagues said about `claim`, or None while it must stay blind.

    Blind by default: only with `project.reveal_after_save`, and only once `user` has saved
    their own label on the claim. The one gate every labelling page goes through.
    """
    if not project.reveal_after_save:
        return None
    if not Label.objects.filter(claim=claim, annotator=user).exists():
        return None
    judge_verdicts = hooks.claim_judge_verdicts(claim=claim)  # filled in by judges
    colleagues = (
        Label.objects.filter(claim=claim)
        .exclude(annotator=user)
        .select_related("annotator", "imported_annotator")
        .prefetch_related(
            Prefetch("more_spans", queryset=EvidenceSpan.objects.select_related("passage"))
        )
        .order_by("created_at", "id")
    )
    return {"judge_verdicts": judge_verdicts, "colleague_labels": list(colleagues)}


# An answer's claims listed on its page, this many at a time.
CLAIMS_PAGE_SIZE = 100


def _page_number(value) -> int | None:
    text = str(value or "").strip()
    # isascii: "²".isdigit() is true, int("²") raises.
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def pile_page_get(
    *, answer: Answer, page=None, passages: list | None = None, chosen_passage_id=None
) -> dict:
    """One page of `answer`'s pile in rank order (FAITHAUDIT_PILE_PAGE_SIZE passages), so no
    screen grows with the pile, and the passages a quote may be taken from on that page.

    `page` is the page asked for (a bad or missing one: the page of the chosen passage, else
    the first; past the end: the last). `chosen_passage_id` is the passage the analyst's quote
    names (their saved label, or what they just sent): it stays among `quote_passages` on
    every page, so paging never drops the quote. `passages`, when the caller has read the
    whole pile already (the queue does), is paged instead of the database.
    """
    size = max(1, int(settings.FAITHAUDIT_PILE_PAGE_SIZE))
    chosen_id = _page_number(chosen_passage_id)
    chosen = None
    if chosen_id is not None:
        if passages is not None:
            chosen = next((p for p in passages if p.pk == chosen_id), None)
        else:
            chosen = Passage.objects.filter(pk=chosen_id, answer_id=answer.pk).first()
    number = _page_number(page)
    if number is None and chosen is not None:
        before = (
            sum(1 for p in passages if p.rank < chosen.rank)
            if passages is not None
            else answer.passages.filter(rank__lt=chosen.rank).count()
        )
        number = before // size + 1
    source = passages if passages is not None else answer.passages.order_by("rank", "id")
    current: Page = Paginator(source, size).get_page(number or 1)
    shown = list(current.object_list)
    options = shown
    if chosen is not None and all(p.pk != chosen.pk for p in shown):
        options = [chosen, *shown]
    return {"pile_page": current, "passages": shown, "quote_passages": options}


def answer_claims_page(*, answer: Answer, page=None) -> Page:
    """One page of `answer`'s claims in reading order (CLAIMS_PAGE_SIZE at a time)."""
    claims = answer.claims.order_by("position", "id")
    return Paginator(claims, CLAIMS_PAGE_SIZE).get_page(_page_number(page) or 1)


def label_screen_get(
    *,
    project: Project,
    user,
    claim: Claim,
    from_queue: bool = False,
    pile=None,
    chosen_passage_id=None,
) -> dict:
    """What the labelling screen shows for `claim`: its answer with the claim marked, one page
    of the pile (`pile`, see `pile_page_get`), the claim's neighbours in the answer, the user's
    own label, and (only once that label exists, and only if the project reveals) the judges'
    and colleagues' verdicts.

    `from_queue`: the queue just served `claim`, so the user has no label on it (the queue
    never serves a claim they labelled) and nothing is looked up for one.
    `chosen_passage_id`: the passage of the quote the analyst just sent, if any (else their
    saved label's) is kept among the quote's passages whatever the page.
    """
    answer = claim.answer
    # The queue reads a served claim's siblings with it (annotate.services.queue).
    siblings = getattr(claim, "answer_claims", None)
    if siblings is None:
        siblings = claim_siblings(claim=claim)
    own_label = (
        None
        if from_queue
        else Label.objects.select_related("evidence_passage")
        .filter(claim=claim, annotator=user)
        .first()
    )
    if chosen_passage_id is None and own_label is not None:
        chosen_passage_id = own_label.evidence_passage_id
    # The queue reads a served claim's pile with it, too (an empty pile is a read pile).
    pile_context = pile_page_get(
        answer=answer,
        page=pile,
        passages=getattr(claim, "answer_passages", None),
        chosen_passage_id=chosen_passage_id,
    )
    index = next(i for i, sibling in enumerate(siblings) if sibling.pk == claim.pk)
    has_span = claim.span_start is not None and claim.span_end is not None
    has_span = has_span and claim.span_end <= len(answer.text)
    return {
        "answer": answer,
        **pile_context,
        "own_label": own_label,
        "siblings": siblings,
        "position": index + 1,
        "previous": siblings[index - 1] if index > 0 else None,
        "following": siblings[index + 1] if index + 1 < len(siblings) else None,
        "answer_parts": (
            (
                answer.text[: claim.span_start],
                answer.text[claim.span_start : claim.span_end],
                answer.text[claim.span_end :],
            )
            if has_span
            else None
        ),
        "reveal": (
            None if from_queue else claim_reveal_for_user(claim=claim, user=user, project=project)
        ),
    }


class _CountedPaginator(Paginator):
    """A Paginator told its total instead of counting the rows."""

    def __init__(self, object_list, per_page, *, count: int):
        super().__init__(object_list, per_page)
        self._known_count = count

    @cached_property
    def count(self) -> int:
        return self._known_count


ANSWER_SORTS = {
    "position": ("position", "id"),
    "id": ("external_id", "id"),
    "question": ("question", "id"),
    "risk": ("risk_category", "position", "id"),
    "-claims": ("-n_claims_sorted", "position", "id"),
    "claims": ("n_claims_sorted", "position", "id"),
}


def answers_filtered(
    *,
    project: Project,
    search: str = "",
    risk_category: str = "",
    system_id: int | None = None,
    has_gold: str = "",
    disagreement: bool = False,
    needs_review: bool = False,
    judge_verdict: str = "",
) -> QuerySet[Answer]:
    """The project's answers narrowed by the answers list's filters (none: all of them).

    `has_gold` "yes": every claim has gold (answers with claims only); "no": some claim lacks
    it. `disagreement`: some claim's labels disagree (two verdicts or more) and it has no gold
    yet. `needs_review`: some claim is flagged for a lead. `judge_verdict`: some claim has a
    verdict, still counting, of that value from any judge (asked through annotate.hooks:
    annotate knows nothing of judges)."""
    answers = Answer.objects.filter(project=project)
    if search:
        answers = answers.filter(
            Q(question__icontains=search)
            | Q(text__icontains=search)
            | Q(external_id__icontains=search)
        )
    if risk_category:
        answers = answers.filter(risk_category=risk_category)
    if system_id is not None:
        answers = answers.filter(system_id=system_id)
    claims = Claim.objects.filter(answer_id=OuterRef("pk"))
    if has_gold == "yes":
        answers = answers.filter(Exists(claims)).exclude(Exists(claims.filter(gold__isnull=True)))
    elif has_gold == "no":
        answers = answers.filter(Exists(claims.filter(gold__isnull=True)))
    if disagreement:
        split = (
            Label.objects.filter(claim__answer_id=OuterRef("pk"), claim__gold__isnull=True)
            .values("claim_id")
            .annotate(verdicts=Count("verdict", distinct=True))
            .filter(verdicts__gt=1)
        )
        answers = answers.filter(Exists(split))
    if needs_review:
        answers = answers.filter(Exists(claims.filter(needs_review=True)))
    if judge_verdict:
        answers = answers.filter(
            pk__in=hooks.answers_with_judge_verdict(project=project, verdict=judge_verdict)
        )
    return answers


def answers_page(*, project: Project, page, per_page: int = 50, sort: str = "position", **filters):
    """One page of the project's answers (`answers_filtered`'s filters, `sort` one of
    ANSWER_SORTS), each with `n_claims`.

    Unfiltered in import order nothing here grows with the project: the total is the
    project's stored `answers_count` (counting 250k answers took 70-90 ms), the page is read
    along the (project, position, id) index, and claims are counted for the page's 50 answers
    only. A filter or another sort counts (and sorts) what it selects.
    """
    narrowed = any(value not in ("", None, False) for value in filters.values())
    answers = (
        answers_filtered(project=project, **filters)
        .select_related("system")
        .only(
            "id",
            "project_id",
            "external_id",
            "position",
            "question",
            "risk_category",
            "abstention",
            "abstention_suggested",
            "system__name",
            "system__version",
        )
    )
    if sort in ("claims", "-claims"):
        answers = answers.annotate(n_claims_sorted=Count("claims"))
    answers = answers.order_by(*ANSWER_SORTS.get(sort, ANSWER_SORTS["position"]))
    if narrowed:
        current = Paginator(answers, per_page).get_page(page)
    else:
        current = _CountedPaginator(answers, per_page, count=project.answers_count).get_page(page)
    ids = [answer.pk for answer in current.object_list]
    counts = dict(
        Claim.objects.filter(answer_id__in=ids)
        .values("answer_id")
        .annotate(n=Count("id"))
        .values_list("answer_id", "n")
    )
    for answer in current.object_list:
        answer.n_claims = counts.get(answer.pk, 0)
    return current


def labels_by_guideline_version(*, project: Project) -> list[dict]:
    """The project's labels counted by the guidelines version they were saved under (newest
    first; None last: imported, or saved before versions were kept), each marked `current`."""
    rows = (
        Label.objects.filter(claim__project=project)
        .values("guideline_version")
        .annotate(labels=Count("id"))
        .order_by(F("guideline_version").desc(nulls_last=True))
    )
    return [
        {**row, "current": row["guideline_version"] == project.guidelines_version} for row in rows
    ]


# -- the analysts' pairwise queue (annotate/pairwise.py) ---------------------------------------


def first_answers(*, project: Project, system_ids: list[int]) -> dict[int, dict[str, int]]:
    """{system id: {question key: its first answer's id}} for the given systems."""
    found: dict[int, dict[str, int]] = {pk: {} for pk in system_ids}
    rows = (
        Answer.objects.filter(project=project, system_id__in=system_ids)
        .order_by("id")
        .values_list("id", "system_id", "question_id", "question")
    )
    for answer_id, system_id, question_id, question in rows:
        found[system_id].setdefault(question_key(question_id, question), answer_id)
    return found


def pairwise_pairs(*, project: Project, system_1: System, system_2: System) -> list[Pair]:
    """Every pair (`annotate.pairwise.Pair`) of two systems, `system_1` the one with the lower
    id, in the queue's order (a hash of the project's queue seed and the question key)."""
    first = first_answers(project=project, system_ids=[system_1.pk, system_2.pk])
    one, two = first[system_1.pk], first[system_2.pk]
    pairs = [Pair(key, one[key], two[key]) for key in one.keys() & two.keys()]
    return sorted(pairs, key=lambda pair: pair_order_key(seed=project.queue_seed, key=pair.key))


def pairwise_pair_for_user(
    *, project: Project, user, system_1: System, system_2: System, token: str
) -> Pair | None:
    """The pair of this queue that `token` names in `user`'s pages (`annotate.pairwise.
    pair_token`), or None: a token of another queue, another analyst, or no token at all."""
    pairs = pairwise_pairs(project=project, system_1=system_1, system_2=system_2)
    return pair_find(pairs, token=token, analyst_id=user.pk)


def pairwise_systems_get(*, project: Project, a: int, b: int) -> tuple[System, System]:
    """The project's systems `a` and `b` as (lower id, higher id); 404 when either is not one
    of the project's systems or both are the same."""
    systems = {s.pk: s for s in System.objects.filter(project=project, pk__in=[a, b])}
    if a == b or len(systems) != 2:
        raise Http404("No such pair of systems in this project.")
    return systems[min(a, b)], systems[max(a, b)]


def pairwise_queues_for_user(*, project: Project, user) -> list[dict]:
    """Every pair of the project's systems that share a question: {"system_1", "system_2",
    "pairs", "marked"} (`marked`: the user's preferences on its pairs)."""
    systems = list(System.objects.filter(project=project).order_by("id"))
    first = first_answers(project=project, system_ids=[s.pk for s in systems])
    own = Counter(
        PairwisePreference.objects.filter(project=project, analyst=user).values_list(
            "system_1_id", "system_2_id"
        )
    )
    queues = []
    for index, one in enumerate(systems):
        for two in systems[index + 1 :]:
            shared = len(first[one.pk].keys() & first[two.pk].keys())
            if shared:
                queues.append(
                    {
                        "system_1": one,
                        "system_2": two,
                        "pairs": shared,
                        "marked": own[(one.pk, two.pk)],
                    }
                )
    return queues


def pairwise_screen_get(
    *, project: Project, user, system_1: System, system_2: System, token: str | None = None
) -> dict:
    """What the pairwise screen shows: the pair `token` names, else the first pair the user has
    not marked; its token for the user (`pair_token`: the page never carries answer ids); its
    question; its two answers as "left" and "right" (each with its own pile,
    the left one drawn by `first_system_on_left`); the user's own preference on it; progress.
    Nothing in it names a system: the screen is blind."""
    pairs = pairwise_pairs(project=project, system_1=system_1, system_2=system_2)
    own = {
        (pref.answer_1_id, pref.answer_2_id): pref
        for pref in PairwisePreference.objects.filter(
            project=project, analyst=user, system_1=system_1, system_2=system_2
        )
    }
    marked = sum(1 for pair in pairs if (pair.answer_1, pair.answer_2) in own)
    if token:
        pair = pair_find(pairs, token=token, analyst_id=user.pk)
        if pair is None:
            raise Http404("No such pair in this queue.")
    else:
        pair = next((p for p in pairs if (p.answer_1, p.answer_2) not in own), None)
    context: dict = {
        "pair": pair,
        "progress": {
            "marked": marked,
            "total": len(pairs),
            "percent": int(100 * marked / len(pairs)) if pairs else 100,
        },
    }
    if pair is None:
        return context
    answers = {a.pk: a for a in Answer.objects.filter(pk__in=[pair.answer_1, pair.answer_2])}
    piles: dict[int, list[Passage]] = {pair.answer_1: [], pair.answer_2: []}
    for passage in Passage.objects.filter(answer_id__in=list(piles)).order_by("answer_id", "rank"):
        piles[passage.answer_id].append(passage)
    first_left = first_system_on_left(
        analyst_id=user.pk, answer_1_id=pair.answer_1, answer_2_id=pair.answer_2
    )
    left, right = (pair.answer_1, pair.answer_2) if first_left else (pair.answer_2, pair.answer_1)
    context.update(
        pair_token=pair.token_for(user.pk),
        question=answers[pair.answer_1].question,
        left={"text": answers[left].text, "passages": piles[left]},
        right={"text": answers[right].text, "passages": piles[right]},
        own=own.get((pair.answer_1, pair.answer_2)),
    )
    return context


def label_pace(*, project: Project) -> dict:
    """Time per label (issue 32) from the labelling screen's measures (`LabelTime`): per
    analyst, their timed labels and the median seconds a label (a claim's time is the sum over
    its saves, an edit included), and the team's median over every timed label. Labels saved
    without a measure (imports, the API, saves before timing existed) are not counted."""
    per_label = (
        LabelTime.objects.filter(claim__project=project)
        .values("claim_id", "user_id")
        .annotate(total=Sum("seconds"))
        .values_list("user_id", "total")
    )
    by_user: dict[int, list[float]] = {}
    for user_id, total in per_label:
        by_user.setdefault(user_id, []).append(float(total))
    names = dict(
        Membership.objects.filter(project=project, user_id__in=by_user).values_list(
            "user_id", "user__username"
        )
    )
    every = [s for seconds in by_user.values() for s in seconds]
    return {
        "analysts": sorted(
            (
                {
                    "analyst": names.get(user_id, f"user {user_id}"),
                    "labels": len(seconds),
                    "median_seconds": statistics.median(seconds),
                }
                for user_id, seconds in by_user.items()
            ),
            key=lambda row: row["analyst"],
        ),
        "timed_labels": len(every),
        "median_seconds": statistics.median(every) if every else None,
    }


def claim_thread_for_user(*, claim: Claim, user, membership: Membership | None) -> dict:
    """The comments on `claim` that `user` may read, and how many others wait for their label.

    Leads and owners read every comment. An analyst reads their own always and colleagues'
    once their own label on the claim is saved (a comment may name a verdict): before that
    `waiting` says how many there are. `others_shown`: colleagues' comments are on the page
    (the caller records it as a reveal beside the analyst's label)."""
    if not claim.comment_count:  # the common case reads nothing
        return {"comments": [], "waiting": 0, "others_shown": False}
    comments = list(ClaimComment.objects.filter(claim=claim).select_related("author"))
    lead = membership is not None and ROLE_RANK[membership.role] >= ROLE_RANK[Role.LEAD]
    others = [c for c in comments if c.author_id != user.pk]
    readable = lead or (bool(others) and Label.objects.filter(claim=claim, annotator=user).exists())
    shown = comments if readable else [c for c in comments if c.author_id == user.pk]
    return {
        "comments": shown,
        "waiting": 0 if readable else len(others),
        "others_shown": readable and bool(others),
    }

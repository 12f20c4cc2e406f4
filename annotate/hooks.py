"""What annotate needs from the floors above it, handed down when the apps are ready.

annotate knows nothing of judges (see ARCHITECTURE.md). Where a claim's page, the queue or a
claim edit has to do with judge verdicts, it asks a hook here; judges fills the hooks in its
AppConfig.ready (judges/claim_hooks.py). Unfilled, a hook answers as if no judge had run.
"""

from collections.abc import Callable
from typing import Any


class Hook:
    """One callable a higher app registers; calls go to it, or to `default` until then."""

    def __init__(self, name: str, default: Callable[..., Any]) -> None:
        self.name = name
        self._default = default
        self._impl: Callable[..., Any] | None = None

    def register(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        self._impl = impl
        return impl

    def __call__(self, *args, **kwargs):
        return (self._impl or self._default)(*args, **kwargs)


def _no_judges(**kwargs):
    raise LookupError("No judges app is installed to restrict the queue by a judge's verdict.")


# The verdicts judges gave `claim` that still count (newest run first), for the reveal.
claim_judge_verdicts = Hook("claim_judge_verdicts", default=lambda *, claim: [])

# Mark the verdicts made on a claim's `old_text` stale; returns how many stopped counting.
# Called inside the transaction that changes the claim's text, holding its row lock.
claim_verdicts_retire = Hook("claim_verdicts_retire", default=lambda *, claim_id, old_text: 0)

# How many verdicts on these claims still count.
claims_verdicts_counting = Hook("claims_verdicts_counting", default=lambda *, claim_ids: 0)

# The queue's judge-verdict stratum: `(run_id, verdicts)` where `verdicts` is a queryset of
# that run's verdicts correlated on the claim (OuterRef("pk")), for an Exists() filter.
# `run_id` None: the judge's latest finished verify run in the project.
judge_verdict_stratum = Hook("judge_verdict_stratum", default=_no_judges)

# The ids of the project's answers with a claim that has a counting verdict `verdict` from
# any judge (a values_list queryset, for `pk__in`); no judges app: no answer.
answers_with_judge_verdict = Hook(
    "answers_with_judge_verdict", default=lambda *, project, verdict: []
)

# The ground truth of a claim of an answer to a test question (testsets: its item's question,
# answer, quotes and the automatic check), for the reveal after the user's own label; None
# when the claim has none or no testsets app is installed.
claim_ground_truth = Hook("claim_ground_truth", default=lambda *, claim: None)

"""The queue's sampling design (issue 14): which claims the labelling queue serves first.

Three designs (`Project.queue_design`):

- **uniform**: the seeded random order of `annotate.queue_order` (a simple random sample).
- **active**: Ohlsson's sequential Poisson sampling. Each claim has an inclusion probability
  π_i (`Claim.inclusion_probability`, from the judge's uncertainty: computed by
  `metrics.services.active_design`) and a uniform u_i from its seeded hash; the queue serves
  claims in ascending u_i/π_i, which is only a rewrite of `Claim.queue_key`, so the queue's
  hand-written SQL, its reservations and its speed are untouched. In the answer-at-a-time order
  the answer is the unit: its claims share one π and keep their reading order.
- **stratified**: claims carry a stratum (`Claim.active_stratum`: judge verdict × confidence
  band × risk category); at every save-and-next the queue picks the stratum where one more
  label shrinks the stratified mean's variance most (`neyman_next_stratum`, from the small
  `ActiveStratum` table: one extra query), then serves that stratum's first open claim in the
  uniform order.

π are frozen: storing a design again leaves a labelled claim's π as it was (in the
answer-at-a-time order, every claim of an answer with a labelled claim), so every label's
recorded π is the probability it was drawn with. annotate knows nothing of judges: the
probabilities and strata come in from metrics as plain numbers and names.
"""

import math
from collections.abc import Callable, Mapping, Sequence

from django.db import transaction

from annotate.models import ActiveStratum, Claim, Label, Project
from annotate.queue_order import (
    active_answer_queue_key,
    active_claim_queue_key,
    answer_queue_key,
    claim_queue_key,
)
from annotate.vocabulary import Verdict

BATCH = 2000


class DesignError(ValueError):
    """A design that cannot be stored as asked; the message names the field, for the lead."""


def claim_design_key(*, project: Project, claim: Claim, external_id: str, design: str) -> int:
    """The queue key claim `claim` (of the answer `external_id`) has under `design` and the
    project's `queue_order`: the uniform keys of `annotate.queue_order` (uniform and
    stratified), or u/π (active; a claim without π is served as if π were the floor: last)."""
    by_answer = project.queue_order == Project.QueueOrder.ANSWER
    if design == Project.QueueDesign.ACTIVE:
        pi = claim.inclusion_probability if claim.inclusion_probability is not None else 0.0
        if by_answer:
            return active_answer_queue_key(
                seed=project.queue_seed,
                answer_external_id=external_id,
                position=claim.position,
                pi=pi,
            )
        key = claim_queue_key(
            seed=project.queue_seed,
            answer_external_id=external_id,
            position=claim.position,
            text=claim.text,
        )
        return active_claim_queue_key(claim_key=key, pi=pi)
    if by_answer:
        return answer_queue_key(
            seed=project.queue_seed, answer_external_id=external_id, position=claim.position
        )
    return claim_queue_key(
        seed=project.queue_seed,
        answer_external_id=external_id,
        position=claim.position,
        text=claim.text,
    )


def _claims(project: Project):
    return (
        Claim.objects.filter(project=project)
        .select_related("answer")
        .only(
            "id",
            "answer_id",
            "position",
            "text",
            "queue_key",
            "label_count",
            "inclusion_probability",
            "active_stratum",
            "answer__external_id",
        )
        .order_by("id")
    )


@transaction.atomic
def claims_design_store(
    *,
    project: Project,
    design: str,
    probabilities: Mapping[int, float] | None = None,
    strata: Mapping[int, str] | None = None,
    priors: Mapping[str, float] | None = None,
    run_id: int | None = None,
    budget: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> int:
    """Store `design` on `project` in one transaction: the claims' π (`probabilities`, claim
    id → π, for active) or strata (`strata`, claim id → name, and `priors`, name → the judge's
    mean P(SUPPORTED), for stratified), the queue keys they imply, the run and budget used.
    Returns the number of claims whose key changed.

    π are frozen: a claim with a label keeps the π it has (in the answer-at-a-time order, every
    claim of an answer with a labelled claim keeps its π, the answer being the unit drawn).
    Uniform restores the keys of today's seeded order exactly (π and strata are kept, unused).
    DesignError, with nothing written, for an unknown design or a π outside (0, 1].
    """
    if design not in Project.QueueDesign.values:
        raise DesignError(f"queue_design: unknown design {design!r}.")
    if design == Project.QueueDesign.ACTIVE and probabilities is None:
        raise DesignError("queue_design: the active design needs the claims' probabilities.")
    if design == Project.QueueDesign.STRATIFIED and strata is None:
        raise DesignError("queue_design: the stratified design needs the claims' strata.")
    for pi in (probabilities or {}).values():
        if not (isinstance(pi, int | float) and math.isfinite(pi) and 0 < pi <= 1):
            raise DesignError(f"inclusion_probability: {pi!r} is not in (0, 1].")
    Project.objects.select_for_update().filter(pk=project.pk).first()
    by_answer = project.queue_order == Project.QueueOrder.ANSWER
    rows = list(_claims(project))
    frozen_answers = set()
    if by_answer:
        frozen_answers = {c.answer_id for c in rows if c.label_count > 0}
    changed: list[Claim] = []
    fields = ["queue_key"]
    if probabilities is not None:
        fields.append("inclusion_probability")
    if strata is not None:
        fields.append("active_stratum")
    total = max(1, len(rows))
    for at, claim in enumerate(rows, start=1):
        dirty = False
        frozen = claim.label_count > 0 or claim.answer_id in frozen_answers
        if probabilities is not None and not frozen:
            pi = probabilities.get(claim.pk)
            if pi is not None and pi != claim.inclusion_probability:
                claim.inclusion_probability = float(pi)
                dirty = True
        if strata is not None:
            name = strata.get(claim.pk, "")
            if name != claim.active_stratum:
                claim.active_stratum = name
                dirty = True
        key = claim_design_key(
            project=project, claim=claim, external_id=claim.answer.external_id, design=design
        )
        if key != claim.queue_key:
            claim.queue_key = key
            dirty = True
        if dirty:
            changed.append(claim)
        if progress is not None and at % BATCH == 0:
            progress(0.5 * at / total)
    for start in range(0, len(changed), BATCH):
        Claim.objects.bulk_update(changed[start : start + BATCH], fields)
        if progress is not None:
            progress(0.5 + 0.5 * min(1.0, (start + BATCH) / max(1, len(changed))))
    if strata is not None:
        active_strata_refresh(project=project, priors=priors or {})
    project.queue_design = design
    update = ["queue_design"]
    if design != Project.QueueDesign.UNIFORM:
        project.design_run_id = run_id
        project.label_budget = budget if budget is not None else project.label_budget
        update += ["design_run_id", "label_budget"]
    project.save(update_fields=update)
    return len(changed)


def active_strata_refresh(*, project: Project, priors: Mapping[str, float] | None = None) -> None:
    """Recount the project's `ActiveStratum` rows from its claims and labels: N_h, the claims
    with a label n_h, and those whose first label said SUPPORTED; `priors` (name → the judge's
    mean P(SUPPORTED)) replaces the stored priors of the strata it names."""
    sizes: dict[str, int] = {}
    labelled: dict[str, int] = {}
    strata_of: dict[int, str] = {}
    for claim_id, name, count in Claim.objects.filter(project=project).values_list(
        "id", "active_stratum", "label_count"
    ):
        if not name:
            continue
        sizes[name] = sizes.get(name, 0) + 1
        if count > 0:
            labelled[name] = labelled.get(name, 0) + 1
            strata_of[claim_id] = name
    supported: dict[str, int] = {}
    seen: set[int] = set()
    first_labels = (
        Label.objects.filter(claim_id__in=list(strata_of))
        .order_by("claim_id", "created_at", "id")
        .values_list("claim_id", "verdict")
    )
    for claim_id, verdict in first_labels.iterator(chunk_size=5000):
        if claim_id in seen:
            continue
        seen.add(claim_id)
        if verdict == Verdict.SUPPORTED:
            supported[strata_of[claim_id]] = supported.get(strata_of[claim_id], 0) + 1
    stored = {s.name: s for s in ActiveStratum.objects.filter(project=project)}
    ActiveStratum.objects.filter(project=project).exclude(name__in=list(sizes)).delete()
    rows = []
    for name, n in sizes.items():
        row = stored.get(name) or ActiveStratum(project=project, name=name)
        row.claims = n
        row.labelled = labelled.get(name, 0)
        row.supported = supported.get(name, 0)
        if priors and name in priors:
            row.prior_p = float(priors[name])
        rows.append(row)
    ActiveStratum.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["project", "name"],
        update_fields=["claims", "labelled", "supported", "prior_p"],
    )


def stratum_sd(*, labelled: int, supported: int, prior_p: float, prior_weight: float) -> float:
    """S_h of a stratum's faithfulness (0/1): sqrt(p(1 − p)) at p the share of SUPPORTED first
    labels shrunk toward the judge's prior, p = (w·p₀ + supported) / (w + labelled)."""
    p = (prior_weight * prior_p + supported) / (prior_weight + max(labelled, 0))
    p = min(1.0, max(0.0, p))
    return math.sqrt(p * (1.0 - p))


def neyman_next_stratum(n_h: Sequence[int], N_h: Sequence[int], sd_h: Sequence[float]) -> int:  # noqa: N803
    """The stratum where one more label reduces the stratified mean's variance most.

    The stratified mean's variance is Σ W_h² S_h² / n_h (W_h = N_h / N, finite-population
    correction left out); one more label in h lowers it by W_h² S_h² (1/n_h − 1/(n_h + 1)).
    Strata with n_h ≥ N_h are full and never chosen; a stratum with no label yet comes first
    (the largest N_h of them). Returns −1 when every stratum is full. The same rule as
    `metrics.stats.active.neyman_next_stratum` (annotate may not import metrics; a test
    compares the two).
    """
    best, best_key = -1, None
    total = float(sum(N_h)) or 1.0
    for h, (n, size, sd) in enumerate(zip(n_h, N_h, sd_h, strict=True)):
        if n >= size:
            continue
        if n <= 0:
            key = (1, float(size), 0.0)
        else:
            w = size / total
            key = (0, w * w * sd * sd * (1.0 / n - 1.0 / (n + 1)), 0.0)
        if best_key is None or key > best_key:
            best, best_key = h, key
    return best


def strata_ranked(*, strata: list[tuple]) -> list[str]:
    """The strata's names in the order the queue tries them: Neyman's choice first, then (if
    it has no open claim for this analyst) the choice among the rest, and so on. `strata`:
    rows (name, claims, labelled, supported, prior_p, prior_weight)."""
    names = [row[0] for row in strata]
    n_h = [row[2] for row in strata]
    big_n = [row[1] for row in strata]
    sd_h = [
        stratum_sd(labelled=row[2], supported=row[3], prior_p=row[4], prior_weight=row[5])
        for row in strata
    ]
    order = []
    while True:
        h = neyman_next_stratum(n_h, big_n, sd_h)
        if h < 0:
            break
        order.append(names[h])
        n_h[h] = big_n[h]  # tried: out of the running for the next pick
    return order


def design_settings_check(*, project: Project, fields: dict) -> None:
    """DesignError naming the field for a budget ≤ 0 or above the project's claims, or a
    target half-width outside (0, 0.5)."""
    budget = fields.get("label_budget")
    if budget is not None:
        claims = Claim.objects.filter(project=project).count()
        if budget <= 0:
            raise DesignError("label_budget: plan at least one label.")
        if budget > claims:
            raise DesignError(
                f"label_budget: {budget} labels is more than the project's {claims} claims."
            )
    width = fields.get("target_half_width")
    if width is not None and not (0 < width < 0.5):
        raise DesignError("target_half_width: use a half-width between 0 and 0.5, e.g. 0.05.")


def label_design_fields(*, project: Project, claim: Claim, served: bool) -> dict:
    """What a label saved on `claim` records of the design: `design` (the project's, when the
    queue served the claim; "" outside the queue order) and `inclusion_probability` (the
    claim's π, under the active design)."""
    if not served:
        return {"design": "", "inclusion_probability": None}
    pi = claim.inclusion_probability if project.queue_design == Project.QueueDesign.ACTIVE else None
    return {"design": project.queue_design, "inclusion_probability": pi}

"""Judge versions and the development / held-out split of a project's gold (issue 28).

A version is a new Judge row made from an existing one (`parent`): its prompt, model or
parameters edited, and optionally few-shot examples added to its verify prompt. The examples
are development gold only: the held-out share decides between versions and feeds the headline
once a judge has been tuned, so an example drawn from it would be graded on its own answer.
"""

import re
import secrets

from django.core.exceptions import ValidationError
from django.db import transaction

from annotate.models import Claim, Label, Project
from annotate.vocabulary import VERDICT_VALUES, Verdict
from judges.models import GoldSplit, Judge, JudgeRun, JudgeVerdict
from judges.prompts import DEFAULT_VERIFY_PROMPT
from judges.services import JUDGE_FIELDS, judge_create

EXAMPLES_START = "### Examples judged by this project's reviewers (development gold)"
EXAMPLES_END = "### End of examples"
_EXAMPLES = re.compile(
    re.escape(EXAMPLES_START) + r".*?" + re.escape(EXAMPLES_END) + r"\n*", re.DOTALL
)
MAX_FEW_SHOT = 20


# -- the split --------------------------------------------------------------------------------


def gold_split_get(*, project: Project) -> GoldSplit | None:
    return GoldSplit.objects.filter(project=project).first()


@transaction.atomic
def gold_split_create(
    *, project: Project, heldout_share: float = 0.5, seed: int | None = None, user=None
) -> GoldSplit:
    """Split the project's gold once. A second split is refused: moving the line after seeing
    which claims fall where is the mistake the split exists to prevent."""
    if GoldSplit.objects.select_for_update().filter(project=project).exists():
        raise ValidationError(
            {"heldout_share": "This project's gold is already split; a split is made once."}
        )
    try:
        share = float(heldout_share)
    except (TypeError, ValueError):
        raise ValidationError({"heldout_share": "The held-out share must be a number."}) from None
    if not 0 < share < 1:
        raise ValidationError(
            {"heldout_share": f"The held-out share must lie strictly between 0 and 1, not {share}."}
        )
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    return GoldSplit.objects.create(
        project=project,
        seed=seed,
        heldout_share=share,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def heldout_answer_ids(*, project: Project, answer_ids) -> set[int] | None:
    """Which of `answer_ids` are held out (None: the project's gold is not split)."""
    split = gold_split_get(project=project)
    if split is None:
        return None
    return {int(a) for a in set(answer_ids) if split.is_heldout(int(a))}


def judge_tuned(judge: Judge) -> bool:
    """A judge was tuned on development gold when it or any judge it was made from carries
    few-shot examples, or when it is a version (made after looking at the development share)
    in a project whose gold is split."""
    seen, node = set(), judge
    while node is not None and node.pk not in seen:
        if node.few_shot:
            return True
        seen.add(node.pk)
        node = node.parent
    return judge.parent_id is not None and gold_split_get(project=judge.project) is not None


def judge_lineage(judge: Judge) -> list[Judge]:
    """The judge and the judges it was made from, newest first."""
    chain, seen, node = [], set(), judge
    while node is not None and node.pk not in seen:
        chain.append(node)
        seen.add(node.pk)
        node = node.parent
    return chain


def judge_version_label(judge: Judge) -> str:
    """How a figure names the version it audits: name, prompt version, lineage, examples."""
    chain = judge_lineage(judge)
    text = f"{judge.name} (prompt {judge.prompt_version}"
    if len(chain) > 1:
        text += f", version {len(chain)}: " + " ← ".join(j.name for j in chain)
    if judge.few_shot:
        text += f", {len(judge.few_shot)} few-shot examples"
    return text + ")"


# -- few-shot examples ------------------------------------------------------------------------


def _gold_quote(claim: Claim) -> str:
    label = (
        Label.objects.filter(claim=claim, verdict=claim.gold.verdict)
        .exclude(evidence_quote="")
        .order_by("pk")
        .first()
    )
    return label.evidence_quote if label else ""


def few_shot_examples(*, project: Project, claim_ids) -> list[dict]:
    """The examples for `claim_ids`: each a development gold claim with its gold and quote.

    Refused, naming the claim, when a claim is not the project's, has no gold, or its answer
    is held out (or the gold is not split yet, so nothing is known to be development)."""
    claim_ids = list(dict.fromkeys(int(c) for c in claim_ids))
    if not claim_ids:
        return []
    if len(claim_ids) > MAX_FEW_SHOT:
        raise ValidationError({"few_shot": f"At most {MAX_FEW_SHOT} few-shot examples."})
    split = gold_split_get(project=project)
    if split is None:
        raise ValidationError(
            {
                "few_shot": "Split the project's gold into development and held-out first: "
                "few-shot examples come from development gold only."
            }
        )
    claims = {
        c.pk: c
        for c in Claim.objects.filter(answer__project=project, pk__in=claim_ids).select_related(
            "gold", "answer"
        )
    }
    examples = []
    for claim_id in claim_ids:
        claim = claims.get(claim_id)
        if claim is None:
            raise ValidationError({"few_shot": f"Claim {claim_id} is not in this project."})
        if not hasattr(claim, "gold"):
            raise ValidationError({"few_shot": f"Claim {claim_id} has no gold verdict."})
        if split.is_heldout(claim.answer_id):
            raise ValidationError(
                {
                    "few_shot": f"Claim {claim_id} is held-out gold (answer {claim.answer_id}): "
                    "few-shot examples may come from development gold only."
                }
            )
        examples.append(
            {
                "claim_id": claim.pk,
                "answer_id": claim.answer_id,
                "claim": claim.text,
                "gold": claim.gold.verdict,
                "quote": _gold_quote(claim),
            }
        )
    return examples


def _safe(text: str) -> str:
    # An example's text must not carry a placeholder the renderer would fill.
    return (text or "").replace("{", "(").replace("}", ")")


def prompt_with_examples(base: str, examples: list[dict]) -> str:
    """The verify prompt: the examples block (if any) above the base prompt. The gold verdict
    is written in the prompt's own word for NOT_IN_PILE (the default prompt says
    NOT_MENTIONED)."""
    base = _EXAMPLES.sub("", base).lstrip()
    if not examples:
        return base
    not_in_pile = "NOT_MENTIONED" if "NOT_MENTIONED" in base else Verdict.NOT_IN_PILE.value
    lines = [EXAMPLES_START]
    for ex in examples:
        word = not_in_pile if ex["gold"] == Verdict.NOT_IN_PILE else ex["gold"]
        # Not "Claim:": the claim to judge is the prompt's one line that starts so.
        lines.append(f"Example claim: {_safe(ex['claim'])}")
        if ex.get("quote"):
            lines.append(f'Deciding passage text: "{_safe(ex["quote"])}"')
        lines.append(f"Example verdict: {word}")
        lines.append("")
    lines.append(EXAMPLES_END)
    return "\n".join(lines) + "\n\n" + base


# -- versions ---------------------------------------------------------------------------------

# What a new version copies from its parent: every judge field but its name and the verify
# prompt it is given (the pairwise prompt travels inside `parameters`).
_COPIED = (
    *(key for key in JUDGE_FIELDS if key not in ("name", "verify_prompt", "pairwise_prompt")),
    "parameters",
)


@transaction.atomic
def judge_version_create(
    *,
    judge: Judge,
    name: str = "",
    verify_prompt: str | None = None,
    model: str | None = None,
    temperature: float | None = None,
    few_shot_claim_ids=(),
    keep_examples: bool = True,
) -> Judge:
    """A new version of `judge`: a new Judge whose parent it is, with the given edits and
    few-shot examples (the parent's kept unless `keep_examples` is False). Few-shot examples
    from held-out gold are refused (`few_shot_examples`)."""
    project = judge.project
    inherited = list(judge.few_shot or []) if keep_examples else []
    known = {ex["claim_id"] for ex in inherited}
    added = few_shot_examples(
        project=project, claim_ids=[c for c in few_shot_claim_ids if int(c) not in known]
    )
    examples = inherited + added
    if inherited:
        # The parent's examples must still be development gold (a split made later than them).
        few_shot_examples(project=project, claim_ids=[ex["claim_id"] for ex in inherited])

    given = verify_prompt if verify_prompt is not None else judge.verify_prompt
    base = _EXAMPLES.sub("", given or "").strip() or DEFAULT_VERIFY_PROMPT
    fields = {key: getattr(judge, key) for key in _COPIED}
    if model:
        fields["model"] = model
    if temperature is not None:
        fields["temperature"] = temperature
    count = len(judge_lineage(judge)) + 1
    name = (name or "").strip() or _free_name(project, f"{judge.name} v{count}")
    if Judge.objects.filter(project=project, name=name).exists():
        raise ValidationError({"name": f"This project already has a judge named {name!r}."})
    version = judge_create(
        project=project,
        name=name,
        verify_prompt=prompt_with_examples(base, examples),
        pairwise_prompt=(judge.parameters or {}).get("pairwise_prompt"),
        **fields,
    )
    version.parent = judge
    version.few_shot = examples
    version.save(update_fields=["parent", "few_shot"])
    return version


def _free_name(project: Project, name: str) -> str:
    candidate, n = name, 1
    while Judge.objects.filter(project=project, name=candidate).exists():
        n += 1
        candidate = f"{name}.{n}"
    return candidate


# -- development disagreements ----------------------------------------------------------------


def development_disagreements(*, judge: Judge, limit: int = 100) -> list[dict]:
    """The development gold claims where the judge's newest parseable verify verdict differs
    from gold: claim, pile excerpt, gold with its quote, the judge's verdict and reply. Empty
    while the gold is not split (nothing is known to be development)."""
    split = gold_split_get(project=judge.project)
    if split is None:
        return []
    newest: dict[int, JudgeVerdict] = {}
    verdicts = (
        JudgeVerdict.objects.filter(
            run__judge=judge,
            run__kind=JudgeRun.Kind.VERIFY,
            claim__isnull=False,
            stale=False,
            verdict__in=VERDICT_VALUES,
            claim__gold__isnull=False,
        )
        .select_related("claim__gold", "claim__answer")
        .order_by("pk")
    )
    for verdict in verdicts:
        newest[verdict.claim_id] = verdict
    rows = []
    for verdict in newest.values():
        claim = verdict.claim
        if verdict.verdict == claim.gold.verdict or split.is_heldout(claim.answer_id):
            continue
        quote = _gold_quote(claim)
        passage = claim.answer.passages.order_by("rank").first()
        rows.append(
            {
                "claim": claim,
                "answer": claim.answer,
                "gold": claim.gold.verdict,
                "quote": quote,
                "excerpt": (passage.text[:300] if passage else ""),
                "judge_verdict": verdict.verdict,
                "reason": (verdict.raw_response or "")[:300],
            }
        )
        if len(rows) >= limit:
            break
    return rows

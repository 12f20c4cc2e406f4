"""The judge audit's one hook for judge versions (issue 28): a judge tuned on development gold
is audited on held-out gold only, and a judge version carries its history."""

import numpy as np

from annotate.models import Project
from judges import versions
from judges.models import Judge
from metrics.services.common import _pct
from metrics.services.judged import Judged

HELDOUT_NOTE = (
    " This judge was tuned on development gold (version {version}): its audit and the headline "
    "use held-out gold only ({n} of {total} gold claims, split by answer with seed {seed}, "
    "{share} held out)."
)


def _heldout_mask(project_id: int, answer_ids: np.ndarray) -> np.ndarray | None:
    project = Project(pk=project_id)
    held = versions.heldout_answer_ids(project=project, answer_ids=answer_ids.tolist())
    if held is None:
        return None
    return np.isin(answer_ids, np.fromiter(held, dtype=np.int64, count=len(held)))


def _history(judge: Judge, split, heldout_only: bool) -> dict:
    """The version's lineage for the report block and the audit card's "judge history"."""
    return {
        "version": versions.judge_version_label(judge),
        "lineage": [
            {
                "name": j.name,
                "prompt_version": j.prompt_version,
                "model": j.model,
                "few_shot": len(j.few_shot or []),
                "few_shot_claim_ids": [ex["claim_id"] for ex in j.few_shot or []],
            }
            for j in versions.judge_lineage(judge)
        ],
        "heldout_only": heldout_only,
        "gold_split": (
            {"seed": split.seed, "heldout_share": split.heldout_share, "rule": split.rule}
            if split
            else None
        ),
    }


def heldout_audit(*, judge: Judge, judged: Judged) -> tuple[Judged, dict]:
    """The judge audit's one hook: a judge tuned on development gold is audited on held-out
    gold only, and its method says so (`method_note`); a judge version also carries its
    `judge_history`. Any other judge's `judged` is returned as it is with nothing to add (the
    one-version, no-split project's figures are today's)."""
    if judge.parent_id is None and not judge.few_shot:
        return judged, {}
    split = versions.gold_split_get(project=judge.project)
    mask = (
        _heldout_mask(judge.project_id, judged.answer_ids) if versions.judge_tuned(judge) else None
    )
    if mask is None:
        return judged, {"judge_history": _history(judge, split, False), "method_note": ""}
    audited = judged.audited & mask
    note = HELDOUT_NOTE.format(
        version=versions.judge_version_label(judge),
        n=int(audited.sum()),
        total=judged.n_audited,
        seed=split.seed,
        share=_pct(split.heldout_share),
    )
    extra = {"judge_history": _history(judge, split, True), "method_note": note}
    return judged._replace(audited=audited), extra

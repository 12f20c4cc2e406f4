"""A judge's instruments in the report: which (model, prompt version) pairs it has, the audit of
each (newest first; the newest is the report's "judge"), and those left out because every
verdict was made on a claim's previous text."""

import pandas as pd

from judges.models import Judge
from metrics import selectors
from metrics.services import estimators
from metrics.services.common import Progress
from metrics.services.inputs import _Data
from metrics.services.judge_audit import _instrument_block
from metrics.services.report_types import JudgeAudits, JudgeRun, LeftOutInstrument


def _left_out_name(row: dict) -> str:
    n = row["stale_verdicts"]
    return (
        f"model {row['model'] or '—'}, prompt {row['prompt_version']}: "
        f"{n} verdict{'s' if n != 1 else ''}"
    )


def instruments_left_out_text(left_out: list[dict]) -> str:
    """The sentence naming the instruments with no current verdict (report, dashboard, card)."""
    named = "; ".join(_left_out_name(row) for row in left_out)
    return (
        "Left out, every verdict made on a claim's previous text (edited, split or merged "
        f"since): {named}. Run the judge on unjudged claims to judge the new text."
    )


def _instrument_keys(verdicts: pd.DataFrame) -> list[tuple]:
    """(model, prompt version) of each instrument with a verdict, newest first."""
    return (
        verdicts.groupby(["model", "prompt_version"], sort=False)["verdict_id"]
        .max()
        .sort_values(ascending=False)
        .index.tolist()
    )


def _instruments_left_out(keys: list[tuple], stale_counts: dict) -> list[dict]:
    """An instrument all of whose verdicts were made on claims' earlier text has no verdict left
    to audit: it is not an instrument of the report, but it is named with its count."""
    listed = set(keys) if keys else set(stale_counts)
    return [
        {"model": model, "prompt_version": prompt_version, "stale_verdicts": n}
        for (model, prompt_version), n in sorted(stale_counts.items(), key=str)
        if (model, prompt_version) not in listed
    ]


def _instrument_verdicts(
    verdicts: pd.DataFrame, stale_counts: dict, model, prompt_version
) -> tuple[pd.DataFrame, int]:
    """One instrument's verdicts and its stale count (all of them for a judge with none)."""
    if model is None:
        return verdicts, sum(stale_counts.values())
    part = verdicts[(verdicts["model"] == model) & (verdicts["prompt_version"] == prompt_version)]
    return part, stale_counts.get((model, prompt_version), 0)


def judge_run(
    *, data: _Data, judge: Judge, links: pd.DataFrame, human_kappa: float, progress: Progress
) -> JudgeRun:
    """The audit of each of the judge's instruments (newest first: the report's "judge"),
    with what travels beside the report, never in it: each instrument's compact CRC inputs
    (for the α form) and the headline instrument's per-claim arrays (for the active audit)."""
    progress(0.62, "reading the judge's verdicts")
    verdicts = selectors.judge_verify_columns(judge=judge)
    if data.system is not None:
        verdicts = verdicts[verdicts["claim_id"].isin(data.all_claim_ids)]
    canaries = selectors.canary_columns(judge=judge)
    stale_counts = selectors.judge_stale_counts(judge=judge)
    keys = _instrument_keys(verdicts)
    instruments = []
    for number, (model, prompt_version) in enumerate(keys or [(None, None)]):
        progress(
            0.66 + 0.3 * number / max(len(keys), 1),
            f"auditing {judge.name} {model or ''} {prompt_version or ''}".strip(),
        )
        part, stale = _instrument_verdicts(verdicts, stale_counts, model, prompt_version)
        instruments.append(
            _instrument_block(
                data=data,
                judge=judge,
                verdicts=part,
                canaries=canaries,
                grounded_links=links,
                gold_sources=data.gold_sources,
                human_kappa=human_kappa,
                stale=stale,
            )
        )
    return JudgeRun(
        blocks=tuple(block for block, _, _ in instruments),
        left_out=tuple(_instruments_left_out(keys, stale_counts)),
        crc_inputs=tuple(crc for _, crc, _ in instruments),
        judged=instruments[0][2],
    )


def judge_audits_section(judge_run: JudgeRun | None) -> JudgeAudits:
    """The report's `instruments_left_out`, `judge` (the newest) and `instruments`; none of
    them without a judge."""
    if judge_run is None:
        return JudgeAudits()
    return JudgeAudits(
        instruments_left_out=tuple(LeftOutInstrument(**row) for row in judge_run.left_out),
        judge=judge_run.blocks[0],
        instruments=judge_run.blocks,
    )


def judge_method_strings(run: JudgeRun | None) -> dict[str, str]:
    """The newest instrument's method strings, for the report's method section."""
    if run is None:
        return {}
    judge = run.blocks[0]
    out = {f"judge_{entry.key}": judge[entry.key]["method"] for entry in estimators.registered()}
    out["judge_audit"] = judge["method"]
    if run.left_out:
        out["judge_audit"] += " " + instruments_left_out_text(list(run.left_out))
    return out

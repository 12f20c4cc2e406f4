"""Report assembly and snapshots: the only glue between the database and `metrics.stats`.

select (`metrics.selectors`, one query per table) → numpy/pandas arrays → `metrics.stats` →
a JSON-safe report dict → a `ReportSnapshot` row the dashboard reads.

What the report counts (DESIGN.md "Metrics: definitions"):
- Gold verdicts are the human truth. Claim rates are over gold claims of answers that are not
  abstentions; abstentions are reported on their own, split by answerable.
- A judge's audit belongs to one instrument (model + prompt version): verdicts of the judge's
  verify runs (done or running) are grouped by (model, prompt version), the newest parseable
  verdict per claim counts, UNPARSEABLE is only counted, canary runs feed only the canary pass
  rate.
- Judge verdicts made on a claim's previous text (`stale`: a lead edited, split or merged the
  claim since) are read nowhere; each instrument says how many it left out.
- Coverage by risk category is over the facts of that category's answers; by claim tag (tags
  belong to claims, facts to answers) over the facts of answers with at least one claim that
  carries the tag, grounded by any of their gold-SUPPORTED claims. F1 pairs it with the
  group's faithfulness. `COVERAGE_BY_TAG` is the sentence the report and dashboard show.
"""

import logging
import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import ClaimTag, Project, RiskCategory
from judges.models import Judge
from metrics import selectors, stats
from metrics.models import ReportSnapshot

logger = logging.getLogger(__name__)

VERDICTS = ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE")
_CODE = {verdict: code for code, verdict in enumerate(VERDICTS)}
SUPPORTED, CONTRADICTED, NOT_IN_PILE = 0, 1, 2

DEFAULT_ALPHA = 0.10
# Above this many audited claims a snapshot stores the CRC cut for a grid of α instead of the
# per-claim arrays, so the page stays a small read; the α form then snaps to the grid.
CRC_INPUTS_MAX_CLAIMS = 50_000
CRC_ALPHA_GRID = (0.01, 0.02, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
CRC_SEED = 0
CALIBRATION_FOLDS = 5
FRONTIER_CUTS = np.round(np.linspace(0.0, 1.0, 21), 2)
AGREEMENT_WARNING_BELOW = 0.80
# An unfinished snapshot older than this is taken to have lost its worker and is re-enqueued
# into the same row; a 1M-claim report takes about a minute.
SNAPSHOT_STALE_AFTER = timedelta(minutes=10)

HEADLINE_KEYS = {
    "gold_only": "gold_only_faithfulness",
    "rogan_gladen": "debiased_faithfulness",
    "ppi": "ppi_faithfulness",
}

COVERAGE_BY_TAG = (
    "Coverage by claim tag: facts belong to answers, tags to claims, so a tag's coverage is "
    "over the marked facts of the answers that have at least one claim with the tag, grounded "
    "by any gold-SUPPORTED claim of those answers (whatever its tags); F1 is the harmonic mean "
    "of that coverage and the faithfulness of the tag's own claims."
)
COVERAGE_BY_RISK_CATEGORY = (
    "Coverage by risk category: the marked facts of that category's answers grounded by a "
    "gold-SUPPORTED claim; F1 is the harmonic mean of it and the category's faithfulness."
)

CRC_CAVEAT = (
    "The guarantee holds in expectation over the calibration draw: the false-claim rate "
    "averaged over many random calibration sets is at most α. One deployment can overshoot it, "
    "and it assumes future answers are exchangeable with the calibration answers."
)

Progress = Callable[[float, str], None]


# --- small pure helpers -------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """Numbers as plain floats/ints, NaN and ±inf as None, tuples as lists — valid JSON."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, np.ndarray):
        return [json_safe(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def _codes(verdicts: pd.Series) -> np.ndarray:
    """Verdict strings → 0 SUPPORTED, 1 CONTRADICTED, 2 NOT_IN_PILE, −1 anything else."""
    return pd.Categorical(verdicts, categories=VERDICTS).codes.astype(np.int8)


def _proportion(successes: int, n: int) -> dict:
    """A rate with its numerator, denominator and Wilson interval (nan when n = 0)."""
    successes, n = int(successes), int(n)
    return {
        "value": successes / n if n else math.nan,
        "ci": stats.wilson_interval(successes, n) if n else (math.nan, math.nan),
        "numerator": successes,
        "denominator": n,
    }


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{100 * value:.0f}%"


def _newest_per_claim(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop UNPARSEABLE rows, then keep each claim's newest verdict (frames are id-ordered)."""
    parsed = frame[frame["verdict"].isin(VERDICTS)]
    return parsed.drop_duplicates("claim_id", keep="last")


# --- the report ---------------------------------------------------------------------------


class _Data:
    """Everything the report needs, as aligned arrays over the project's claims."""

    def __init__(self, *, project: Project, progress: Progress) -> None:
        progress(0.02, "reading answers")
        answers = selectors.answer_columns(project=project)
        answers["answerable"] = answers["answerable"].map(
            lambda v: (
                "unknown"
                if v is None or (isinstance(v, float) and math.isnan(v))
                else ("answerable" if bool(v) else "unanswerable")
            )
        )
        self.answers = answers
        progress(0.06, "reading claims")
        claims = selectors.claim_columns(project=project)
        claims = claims.merge(
            answers[["answer_id", "risk_category", "abstention"]], on="answer_id", how="left"
        )
        progress(0.12, "reading gold verdicts")
        gold = selectors.gold_columns(project=project)
        self.gold_sources = gold.set_index("claim_id")["source"]
        claims = claims.merge(gold, on="claim_id", how="left")
        claims["gold"] = _codes(claims["verdict"])
        claims = claims.drop(columns=["verdict"])
        self.claims_in_abstentions = int(claims["abstention"].sum())
        # Abstentions are counted apart, never as faithfulness failures.
        self.claims = claims[~claims["abstention"]].reset_index(drop=True)
        self.claim_ids = self.claims["claim_id"].to_numpy(dtype=np.int64)
        progress(0.18, "reading claim tags")
        tags = selectors.claim_tags(project=project)
        tags = tags[tags["claim_id"].isin(self.claim_ids)]
        tag_names = list(ClaimTag.values) + sorted(set(tags["tag"]) - set(ClaimTag.values))
        self.tag_masks = {
            tag: np.isin(self.claim_ids, tags.loc[tags["tag"] == tag, "claim_id"].to_numpy())
            for tag in tag_names
        }
        progress(0.24, "reading labels")
        self.labels = selectors.label_columns(project=project)
        self.annotators = selectors.annotator_names(
            user_ids=self.labels["annotator_id"].unique().tolist()
        )
        self.labels["code"] = _codes(self.labels["verdict"])
        progress(0.3, "reading facts and citations")
        facts = selectors.fact_columns(project=project)
        abstaining = answers.loc[answers["abstention"], "answer_id"]
        self.facts = facts[~facts["answer_id"].isin(abstaining)].reset_index(drop=True)
        self.facts = self.facts.merge(answers[["answer_id", "risk_category"]], on="answer_id")
        # Evidence quotes only matter where facts are marked.
        self.evidence = (
            selectors.supported_evidence_columns(project=project)
            if len(self.facts)
            else pd.DataFrame({"claim_id": [], "passage_id": [], "start": [], "end": []})
        )
        self.cited = np.isin(self.claim_ids, selectors.cited_claim_ids(project=project))

    def gold_mask(self) -> np.ndarray:
        return self.claims["gold"].to_numpy() >= 0


def _verdict_rates(codes: np.ndarray, answer_ids: np.ndarray) -> dict:
    """Counts, pooled rates and per-answer rates of one set of verdict codes (0, 1, 2)."""
    verdicts = np.asarray(VERDICTS, dtype=object)[codes] if codes.size else np.array([], object)
    pooled = stats.claim_rates(verdicts)
    per_answer = stats.answer_rates(answer_ids, verdicts)
    n = pooled["n"]
    return {
        "claims": {
            "SUPPORTED": pooled["SUPPORTED"],
            "CONTRADICTED": pooled["CONTRADICTED"],
            "NOT_IN_PILE": pooled["NOT_IN_PILE"],
            "total": n,
        },
        "faithfulness": {
            "pooled": _proportion(pooled["SUPPORTED"], n),
            "mean_per_answer": {
                "value": per_answer["mean_per_answer_faithfulness"],
                "answers": per_answer["n_answers"],
            },
        },
        "contradiction_rate": _proportion(pooled["CONTRADICTED"], n),
        "not_in_pile_rate": _proportion(pooled["NOT_IN_PILE"], n),
        "hallucination_rate": _proportion(n - pooled["SUPPORTED"], n),
        "answers_with_unsupported_rate": _proportion(
            per_answer["answers_with_unsupported"], per_answer["n_answers"]
        ),
    }


def _abstention(answers: pd.DataFrame) -> dict:
    """Abstention rate, overall and split by whether the question was answerable from the pile."""
    out = {"rate": _proportion(answers["abstention"].sum(), len(answers)), "by_answerable": {}}
    for key in ("answerable", "unanswerable", "unknown"):
        part = answers[answers["answerable"] == key]
        out["by_answerable"][key] = _proportion(part["abstention"].sum(), len(part))
    out["abstentions"] = int(answers["abstention"].sum())
    out["answers"] = len(answers)
    return out


def _fact_links(data: _Data) -> pd.DataFrame:
    """(fact_id, claim_id) pairs: a gold-SUPPORTED claim's SUPPORTED-label quote overlaps the fact."""
    evidence = data.evidence
    supported_ids = data.claim_ids[data.claims["gold"].to_numpy() == SUPPORTED]
    evidence = evidence[evidence["claim_id"].isin(supported_ids)]
    if evidence.empty or data.facts.empty:
        return pd.DataFrame({"fact_id": [], "claim_id": []}, dtype=np.int64)
    evidence = evidence[["claim_id", "passage_id", "start", "end"]].astype({"passage_id": np.int64})
    pairs = data.facts[["fact_id", "passage_id", "start", "end"]].merge(
        evidence, on="passage_id", suffixes=("_fact", "_quote")
    )
    overlap = (pairs["start_quote"] < pairs["end_fact"]) & (
        pairs["end_quote"] > pairs["start_fact"]
    )
    return pairs.loc[overlap, ["fact_id", "claim_id"]].drop_duplicates()


def _coverage(facts: pd.DataFrame, grounded: np.ndarray, faithfulness: float) -> dict:
    n_facts = len(facts)
    n_grounded = int(np.isin(facts["fact_id"].to_numpy(), grounded).sum())
    value = stats.coverage(grounded.tolist(), facts["fact_id"].tolist())
    f1 = stats.f1(faithfulness, value)
    return {
        "value": value,
        "ci": stats.wilson_interval(n_grounded, n_facts) if n_facts else (math.nan, math.nan),
        "numerator": n_grounded,
        "denominator": n_facts,
        "f1": f1,
        "measured": bool(n_facts),
    }


def _self_knowledge(data: _Data, mask: np.ndarray) -> dict:
    """Unfaithful claims marked correct anyway (self-knowledge) vs incorrect (hallucination).

    A claim's mark is the majority of its analysts' yes/no marks; a tie or only "unknown"
    marks leave it unknown. Both rates are over all gold claims in `mask`, as DESIGN.md defines.
    """
    gold = data.claims["gold"].to_numpy()
    in_scope = mask & (gold >= 0)
    n = int(in_scope.sum())
    unfaithful_ids = data.claim_ids[in_scope & (gold != SUPPORTED)]
    marks = data.labels[
        data.labels["claim_id"].isin(unfaithful_ids) & data.labels["correct"].isin(["yes", "no"])
    ]
    votes = (
        marks.assign(vote=np.where(marks["correct"] == "yes", 1, -1))
        .groupby("claim_id")["vote"]
        .sum()
    )
    correct = int((votes > 0).sum())
    incorrect = int((votes < 0).sum())
    return {
        "unfaithful_claims": int(unfaithful_ids.size),
        "self_knowledge": _proportion(correct, n),
        "hallucination": _proportion(incorrect, n),
        "unmarked": int(unfaithful_ids.size) - correct - incorrect,
    }


def _citation(data: _Data, citations: pd.DataFrame, mask: np.ndarray) -> dict:
    cited_ids = data.claim_ids[data.cited & mask]
    measured = not citations.empty
    newest = _newest_per_claim(citations)
    newest = newest[newest["claim_id"].isin(cited_ids)] if len(newest) else newest
    supported = int((newest["verdict"] == "SUPPORTED").sum())
    out = _proportion(supported, len(newest))
    out.update(
        {
            "cited_claims": int(cited_ids.size),
            "checked": len(newest),
            "measured": measured,
            "status": "measured" if measured else "not measured",
        }
    )
    return out


def _group_block(data: _Data, mask: np.ndarray, grounded: np.ndarray, citations) -> dict:
    """Every rate for the claims in `mask` (a risk category or a claim tag)."""
    gold = data.claims["gold"].to_numpy()
    selected = mask & (gold >= 0)
    block = _verdict_rates(gold[selected], data.claims["answer_id"].to_numpy()[selected])
    block["self_knowledge"] = _self_knowledge(data, mask)
    block["citation_accuracy"] = _citation(data, citations, mask)
    block["claims_without_gold"] = int((mask & (gold < 0)).sum())
    return block


def _analysts(data: _Data) -> dict:
    """Inter-analyst agreement: Krippendorff's alpha, per-analyst agreement with gold, kappas."""
    labels = data.labels[data.labels["code"] >= 0]
    names = data.annotators
    per_claim = labels.groupby("claim_id")["annotator_id"].transform("size")
    multi = labels[per_claim >= 2]
    if not multi.empty:
        matrix = multi.pivot_table(
            index="annotator_id", columns="claim_id", values="code", aggfunc="first"
        )
        alpha = stats.krippendorff_alpha(matrix.to_numpy(dtype=float))
    else:
        alpha = math.nan
    gold = pd.Series(data.claims["gold"].to_numpy(), index=data.claim_ids)
    gold = gold[gold >= 0]
    with_gold = labels.merge(gold.rename("gold"), left_on="claim_id", right_index=True)
    per_analyst = []
    for annotator_id, part in with_gold.groupby("annotator_id"):
        a, b = part["code"].to_numpy(), part["gold"].to_numpy()
        per_analyst.append(
            {
                "annotator": names.get(annotator_id, str(annotator_id)),
                "n": len(part),
                "agreement": float(np.mean(a == b)),
                "kappa": stats.cohen_kappa(a, b),
            }
        )
    pairs = multi.merge(multi, on="claim_id", suffixes=("_a", "_b"))
    pairs = pairs[pairs["annotator_id_a"] < pairs["annotator_id_b"]]
    pairwise = []
    for (a_id, b_id), part in pairs.groupby(["annotator_id_a", "annotator_id_b"]):
        pairwise.append(
            {
                "a": names.get(a_id, str(a_id)),
                "b": names.get(b_id, str(b_id)),
                "n": len(part),
                "agreement": float(np.mean(part["code_a"] == part["code_b"])),
                "kappa": stats.cohen_kappa(part["code_a"].to_numpy(), part["code_b"].to_numpy()),
            }
        )
    human_kappa = (
        stats.cohen_kappa(pairs["code_a"].to_numpy(), pairs["code_b"].to_numpy())
        if len(pairs)
        else math.nan
    )
    return {
        "krippendorff_alpha": alpha,
        "analysts": int(labels["annotator_id"].nunique()),
        "labels": len(labels),
        "multi_labelled_claims": int(multi["claim_id"].nunique()),
        "per_analyst": per_analyst,
        "pairwise": pairwise,
        "human_human_kappa": human_kappa,
        "human_pairs": len(pairs),
    }


def _method_strings(report: dict) -> dict:
    claims = report["claims"]
    answers = report["faithfulness"]["mean_per_answer"]["answers"]
    base = (
        "Method: manual, claim level, against the retrieved pile; gold = unanimous analysts "
        "or a lead's adjudication; abstentions excluded."
    )
    abst = report["abstention"]
    cov = report["coverage"]
    cit = report["citation_accuracy"]
    method = {
        "faithfulness": stats.method_string(
            claims["SUPPORTED"], claims["total"], answers, claims["CONTRADICTED"]
        )
        + " Gold = unanimous analysts or a lead's adjudication; abstentions excluded; "
        "95% Wilson interval.",
        "contradiction_rate": (
            f"{report['contradiction_rate']['numerator']} of {claims['total']} gold claims "
            f"contradicted by their own pile. {base}"
        ),
        "answers_with_unsupported_rate": (
            f"{report['answers_with_unsupported_rate']['numerator']} of "
            f"{report['answers_with_unsupported_rate']['denominator']} answers have at least one "
            f"claim that is not supported (what a reader experiences). {base}"
        ),
        "abstention": (
            f"{abst['abstentions']} of {abst['answers']} answers are confirmed abstentions; "
            "on unanswerable questions an abstention is correct, on answerable ones it is a "
            "missed answer. Method: lead-confirmed abstention flag, answer level."
        ),
        "coverage": (
            f"{cov['numerator']} of {cov['denominator']} marked facts grounded by a "
            "gold-SUPPORTED claim whose evidence quote overlaps the fact. Method: manual fact "
            "marking, fact level."
            if cov["measured"]
            else "Not measured: no facts are marked in this project's piles."
        ),
        "coverage_by_risk_category": COVERAGE_BY_RISK_CATEGORY,
        "coverage_by_tag": COVERAGE_BY_TAG,
        "citation_accuracy": (
            f"{cit['numerator']} of {cit['denominator']} checked cited claims are supported by "
            "their cited passages alone. Method: judge citation runs (verify call against the "
            "cited passages only)."
            if cit["measured"]
            else "Not measured: no citation run exists for this project."
        ),
    }
    return method


def _instrument_block(
    *,
    data: _Data,
    judge: Judge,
    verdicts: pd.DataFrame,
    canaries: pd.DataFrame,
    grounded_links: pd.DataFrame,
    gold_sources: pd.Series,
    human_kappa: float,
    stale: int = 0,
) -> dict:
    """The audit of one instrument (judge + model + prompt version) against gold.

    `verdicts` holds no stale verdict (made on a claim's previous text); `stale` is how many
    were left out, for the method string.
    """
    first = verdicts.iloc[-1] if len(verdicts) else None
    model = first["model"] if first is not None else judge.model
    prompt_version = first["prompt_version"] if first is not None else judge.prompt_version
    backend = first["backend"] if first is not None else judge.backend
    unparseable = int((verdicts["verdict"] == "UNPARSEABLE").sum())
    newest = _newest_per_claim(verdicts)
    index = pd.Series(np.arange(data.claim_ids.size), index=data.claim_ids)
    newest = newest[newest["claim_id"].isin(data.claim_ids)]
    position = index.loc[newest["claim_id"].to_numpy()].to_numpy()
    judge_codes = _codes(newest["verdict"])
    confidence = newest["confidence"].to_numpy(dtype=float)
    gold_all = data.claims["gold"].to_numpy()
    gold_codes = gold_all[position]
    answer_ids = data.claims["answer_id"].to_numpy()[position]
    audited = gold_codes >= 0
    n_judged = int(judge_codes.size)
    judged_supported = int(np.sum(judge_codes == SUPPORTED))
    p_obs = judged_supported / n_judged if n_judged else math.nan

    names = np.asarray(VERDICTS, dtype=object)
    g_a, j_a = names[gold_codes[audited]], names[judge_codes[audited]]
    n_audited = int(audited.sum())
    matrix = stats.confusion(g_a, j_a).to_numpy()
    agree = int(np.trace(matrix))
    agreement = agree / n_audited if n_audited else math.nan
    kappa = stats.cohen_kappa(g_a, j_a) if n_audited else math.nan
    sesp = stats.sensitivity_specificity(g_a, j_a)
    se, sp = sesp["sensitivity"], sesp["specificity"]
    over = int(matrix[1:, 0].sum())
    under = int(matrix[0, 1:].sum())
    gold_pos, gold_neg = int(matrix[0].sum()), int(matrix[1:].sum())

    debiased_value = stats.rogan_gladen(p_obs, se["value"], sp["value"]) if n_judged else math.nan
    if n_judged and se["n"] and sp["n"]:
        debiased_ci = stats.rogan_gladen_interval(
            judged_supported,
            n_judged,
            se["successes"],
            se["n"],
            sp["successes"],
            sp["n"],
            method="lang-reiczigel",
        )
    else:
        debiased_ci = (math.nan, math.nan)
    if not math.isfinite(debiased_value):
        debiased_ci = (math.nan, math.nan)

    gold01 = (gold_codes[audited] == SUPPORTED).astype(float)
    judge01 = (judge_codes == SUPPORTED).astype(float)
    # The judge's P(SUPPORTED) where it gave one, else its 0/1 verdict.
    judge_score = np.where(np.isnan(confidence), judge01, confidence)
    ppi = stats.ppi_mean_interval(gold01, judge_score[audited], judge_score[~audited])
    gold_only = _proportion(int(gold01.sum()), n_audited)
    headline = stats.headline_estimate(
        {"value": gold_only["value"], "ci": gold_only["ci"]},
        {"value": debiased_value, "ci": debiased_ci},
        {"value": ppi["value"], "ci": ppi["ci"]},
        youden_j=sesp["youden_j"],
    )

    calibration, crc_inputs = _calibration(
        confidence=confidence[audited],
        supported=gold01,
        answer_ids=answer_ids[audited],
        claim_ids=data.claim_ids[position][audited],
        all_confidence=confidence,
        grounded_links=grounded_links,
        facts=data.facts,
    )

    failures = {"by_tag": [], "by_risk_category": []}
    tag_masks = {tag: mask[position][audited] for tag, mask in data.tag_masks.items()}
    risk = data.claims["risk_category"].to_numpy()[position][audited]
    agree_each = gold_codes[audited] == judge_codes[audited]
    for key, groups in (
        ("by_tag", tag_masks.items()),
        ("by_risk_category", ((cat, risk == cat) for cat in RiskCategory.values)),
    ):
        for name, mask in groups:
            n = int(mask.sum())
            if n:
                failures[key].append(
                    {"group": name, "n": n, "agreement": float(np.mean(agree_each[mask]))}
                )
        failures[key].sort(key=lambda row: (row["agreement"], -row["n"]))

    canary = canaries[(canaries["model"] == model) & (canaries["prompt_version"] == prompt_version)]
    canary = canary[canary["verdict"].isin(VERDICTS)].drop_duplicates("canary_id", keep="last")
    canary_pass = _proportion(int((canary["verdict"] == "NOT_IN_PILE").sum()), len(canary))

    audited_ids = data.claim_ids[position][audited]
    sources = gold_sources.reindex(audited_ids).value_counts()
    warning = None
    if n_audited and agreement < AGREEMENT_WARNING_BELOW:
        warning = (
            f"Agreement with gold is {_pct(agreement)}, below 80%: the judge is not measuring "
            "this project's definition. Do not use its verdicts as figures without the "
            "corrections below, and consider revising the prompt."
        )
    block = {
        "name": judge.name,
        "backend": backend,
        "model": model,
        "prompt_version": prompt_version,
        "instrument": f"{judge.name} · {model or backend} · prompt {prompt_version}",
        "n_judged": n_judged,
        "n_audited": n_audited,
        "unparseable": unparseable,
        "stale_verdicts": stale,
        "gold_sources": {
            "unanimous": int(sources.get("unanimous", 0)),
            "adjudicated": int(sources.get("adjudicated", 0)),
        },
        "confusion": {
            "labels": list(VERDICTS),
            "rows": "gold",
            "columns": "judge",
            "matrix": matrix.tolist(),
        },
        "agreement": agreement,
        "agreement_ci": stats.wilson_interval(agree, n_audited)
        if n_audited
        else (math.nan, math.nan),
        "agreement_warning": warning,
        "kappa": kappa,
        "human_kappa_ceiling": human_kappa,
        "asymmetry": {
            "judge_supported_gold_not": {
                "count": over,
                "rate": over / gold_neg if gold_neg else math.nan,
                "of": "gold not SUPPORTED",
                "of_n": gold_neg,
            },
            "gold_supported_judge_not": {
                "count": under,
                "rate": under / gold_pos if gold_pos else math.nan,
                "of": "gold SUPPORTED",
                "of_n": gold_pos,
            },
        },
        "sensitivity": {"value": se["value"], "ci": se["ci"], "n": se["n"]},
        "specificity": {"value": sp["value"], "ci": sp["ci"], "n": sp["n"]},
        "youden_j": sesp["youden_j"],
        "naive_faithfulness": p_obs,
        "naive_faithfulness_detail": _proportion(judged_supported, n_judged),
        "debiased_faithfulness": {
            "value": debiased_value,
            "ci": debiased_ci,
            "method": "Rogan–Gladen, Lang–Reiczigel adjusted interval (95%)",
        },
        "ppi_faithfulness": {
            "value": ppi["value"],
            "ci": ppi["ci"],
            "lambda": ppi["lambda"],
            "method": "PPI++ (power-tuned prediction-powered inference, 95%)",
        },
        "gold_only_faithfulness": {
            "value": gold_only["value"],
            "ci": gold_only["ci"],
            "n": n_audited,
            "method": "audit sample alone, Wilson interval (95%)",
        },
        "headline_estimate": HEADLINE_KEYS.get(headline["choice"]),
        "headline_reason": headline["reason"],
        "ece": calibration["ece"],
        "calibration": calibration["detail"],
        "frontier": calibration["frontier"],
        "crc": calibration["crc"],
        "failures": failures,
        "canary": {"pass_rate": canary_pass, "canaries": len(canary)},
        "_crc_inputs": crc_inputs,
    }
    block["method"] = (
        f"Audit of {block['instrument']} on {n_audited} gold claims "
        f"({block['gold_sources']['unanimous']} unanimous, "
        f"{block['gold_sources']['adjudicated']} adjudicated) of {n_judged} judged claims; "
        "positive = SUPPORTED; Wilson intervals for sensitivity and specificity; naive rate = "
        "share of the judge's parseable verdicts that are SUPPORTED; debiased by Rogan–Gladen "
        "(Lang–Reiczigel interval carrying the audit's uncertainty); PPI++ uses the judge's "
        "P(SUPPORTED), or its 0/1 verdict where it gave none; UNPARSEABLE responses are never "
        "counted as verdicts; calibration out of fold (5 folds grouped by answer)."
    )
    if stale:
        block["method"] += (
            f" {stale} verdict{'s' if stale != 1 else ''} made on a claim's previous text "
            "(edited, split or merged since) left out."
        )
    return block


def _calibration(
    *,
    confidence: np.ndarray,
    supported: np.ndarray,
    answer_ids: np.ndarray,
    claim_ids: np.ndarray,
    all_confidence: np.ndarray,
    grounded_links: pd.DataFrame,
    facts: pd.DataFrame,
) -> tuple[dict, dict]:
    """Reliability, ECE raw/Platt/isotonic (out of fold), the frontier and CRC at α = 0.10."""
    has = ~np.isnan(confidence)
    c, y, groups, ids = confidence[has], supported[has], answer_ids[has], claim_ids[has]
    enough = c.size >= 2 and np.unique(groups).size >= 2 and 0 < y.sum() < y.size
    curves = {"raw": c}
    if enough:
        for method in ("platt", "isotonic"):
            curves[method] = stats.cross_fitted_calibration(
                c, y, method, folds=CALIBRATION_FOLDS, seed=0, groups=groups
            )
    else:
        curves["platt"] = curves["isotonic"] = np.full(c.shape, math.nan)
    ece = {}
    bins = {}
    for name, values in curves.items():
        ok = ~np.isnan(values)
        ece[name] = stats.expected_calibration_error(values[ok], y[ok]) if ok.any() else math.nan
        table = stats.reliability_bins(values[ok], y[ok]) if ok.any() else None
        bins[name] = (
            table[["lo", "hi", "count", "mean_confidence", "observed_rate"]].to_dict("records")
            if table is not None
            else []
        )
    # The frontier and CRC use the recalibration with the lower out-of-fold ECE.
    candidates = [m for m in ("platt", "isotonic") if ece[m] is not None and math.isfinite(ece[m])]
    used = min(candidates, key=lambda m: ece[m]) if candidates else "raw"
    calibrated = np.round(curves[used], 4)

    # The frontier per answer, with each claim's grounded facts for coverage along it.
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    cuts = np.flatnonzero(np.diff(sorted_groups)) + 1
    audited_answers = np.unique(groups)
    links = grounded_links[grounded_links["claim_id"].isin(ids)]
    facts_of_claim = links.groupby("claim_id")["fact_id"].agg(list).to_dict()
    facts_of_answer = (
        facts[facts["answer_id"].isin(audited_answers)]
        .groupby("answer_id")["fact_id"]
        .agg(list)
        .to_dict()
    )
    claim_facts = [facts_of_claim.get(claim_id, ()) for claim_id in ids[order]]
    has_facts = bool(facts_of_answer)
    table = stats.frontier(
        _slices(calibrated[order], cuts) if c.size else [],
        _slices(y[order].astype(bool), cuts) if c.size else [],
        facts_grounded=_split_list(claim_facts, cuts) if has_facts and c.size else None,
        cuts=FRONTIER_CUTS,
        facts_total=[facts_of_answer.get(a, []) for a in audited_answers]
        if has_facts and c.size
        else None,
    )
    frontier = table.to_dict("records")

    # CRC: seeded split of the audited answers into a calibration half and a test half.
    rng = np.random.default_rng(CRC_SEED)
    shuffled = rng.permutation(audited_answers)
    calibration_answers = np.sort(shuffled[: shuffled.size // 2])
    half = np.isin(groups, calibration_answers).astype(np.int8)  # 1 = calibration
    _, answer_index = np.unique(groups, return_inverse=True)
    # Distinct calibrated confidences of every judged claim, with counts, so a lead's α can be
    # applied project-wide without rereading the claims.
    all_calibrated = _apply_calibrator(used, c, y, all_confidence)
    judged = np.round(all_calibrated[~np.isnan(all_calibrated)], 4)
    hist_values, hist_counts = np.unique(judged, return_counts=True)
    crc_inputs = {
        "confidence": calibrated.tolist(),
        "supported": y.astype(int).tolist(),
        "answer": answer_index.astype(int).tolist(),
        "calibration_half": half.tolist(),
        "judged_values": hist_values.tolist(),
        "judged_counts": hist_counts.tolist(),
    }
    detail = {
        "n": int(c.size),
        "answers": int(audited_answers.size),
        "used_for_frontier": used,
        "bins": bins,
        "folds": CALIBRATION_FOLDS,
        "enough": bool(enough),
    }
    parts = _crc_parts(crc_inputs)
    crc = crc_from_inputs(crc_inputs, alpha=DEFAULT_ALPHA, parts=parts)
    if c.size > CRC_INPUTS_MAX_CLAIMS:
        crc_inputs = {
            "grid": {
                f"{alpha:.2f}": crc
                if alpha == DEFAULT_ALPHA
                else crc_from_inputs(crc_inputs, alpha=alpha, parts=parts)
                for alpha in CRC_ALPHA_GRID
            }
        }
    return {"ece": ece, "detail": detail, "frontier": frontier, "crc": crc}, crc_inputs


def _split_list(items: list, cuts: np.ndarray) -> list[list]:
    bounds = [0, *cuts.tolist(), len(items)]
    return [items[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def _apply_calibrator(method: str, c: np.ndarray, y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Calibrate every judged claim's confidence with a calibrator fit on all audited claims."""
    out = np.full(values.shape, math.nan)
    ok = ~np.isnan(values)
    if method == "raw" or c.size < 2:
        out[ok] = values[ok]
        return out
    fit = stats.platt_calibrator if method == "platt" else stats.isotonic_calibrator
    out[ok] = np.asarray(fit(c, y)(values[ok]), dtype=float)
    return out


def _slices(values: np.ndarray, cuts: np.ndarray) -> list[np.ndarray]:
    """`values` cut at `cuts` into views (much faster than numpy.split for many pieces)."""
    bounds = [0, *cuts.tolist(), values.size]
    return [values[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def _crc_parts(inputs: dict) -> tuple[list, list, list, list]:
    """Per-answer confidence and supported arrays of the calibration and the test half."""
    confidence = np.asarray(inputs.get("confidence", []), dtype=float)
    supported = np.asarray(inputs.get("supported", []), dtype=bool)
    answer = np.asarray(inputs.get("answer", []), dtype=np.int64)
    half = np.asarray(inputs.get("calibration_half", []), dtype=bool)

    def per_answer(mask: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if not mask.any():
            return [], []
        order = np.argsort(answer[mask], kind="stable")
        a, c, s = answer[mask][order], confidence[mask][order], supported[mask][order]
        cuts = np.flatnonzero(np.diff(a)) + 1
        return _slices(c, cuts), _slices(s, cuts)

    return (*per_answer(half), *per_answer(~half))


def crc_from_inputs(inputs: dict, *, alpha: float, parts: tuple | None = None) -> dict:
    """λ̂ on the calibration half, the retained claims and realized false-claim rate on the test
    half, and the claims retained project-wide, from the compact arrays stored in a snapshot.

    Cheap enough to run on a page load for the α a lead types. For a large audit the snapshot
    holds only a grid of precomputed cuts: the nearest α of the grid is returned.
    """
    if "grid" in inputs:
        nearest = min(inputs["grid"], key=lambda key: abs(float(key) - alpha))
        result = dict(inputs["grid"][nearest])
        result["alpha_requested"] = float(alpha)
        result["alpha_snapped"] = True
        return result
    judged_values = np.asarray(inputs.get("judged_values", []), dtype=float)
    judged_counts = np.asarray(inputs.get("judged_counts", []), dtype=np.int64)
    cal_c, cal_s, test_c, test_s = parts or _crc_parts(inputs)
    lambda_hat = float(stats.crc_threshold(cal_c, cal_s, alpha)) if cal_c else math.nan
    held_out = stats.crc_evaluate(test_c, test_s, lambda_hat)
    if math.isnan(lambda_hat):
        retained_all = 0
    else:
        first_kept = np.searchsorted(judged_values, lambda_hat, side="left")
        retained_all = int(judged_counts[first_kept:].sum())
    return {
        "alpha": float(alpha),
        "lambda_hat": lambda_hat,
        "retained": held_out["claims_retained"],
        "retained_share": held_out["retained_share"],
        "test_claims": held_out["claims_total"],
        "faithfulness_retained": held_out["faithfulness_retained"],
        "answers_abstaining": held_out["answers_abstaining"],
        "realized_false_claim_rate": held_out["false_claim_rate"],
        "calibration_answers": len(cal_c),
        "test_answers": len(test_c),
        "retained_all_judged": retained_all,
        "judged_with_confidence": int(judged_counts.sum()),
        "retains_nothing": lambda_hat == math.inf,
        "seed": CRC_SEED,
        "caveat": CRC_CAVEAT,
    }


def report_compute(*, project: Project, judge: Judge | None = None, progress=None) -> dict:
    """The project's whole report (and the judge's audits) as a JSON-safe dict.

    `progress(fraction, stage)` is called as the work advances.
    """
    progress = progress or (lambda fraction, stage: None)
    labels_at_compute = selectors.label_history_max_id()
    data = _Data(project=project, progress=progress)
    gold = data.claims["gold"].to_numpy()
    gold_mask = gold >= 0
    answer_ids = data.claims["answer_id"].to_numpy()
    progress(0.4, "computing project rates")
    report: dict[str, Any] = {
        "project": {"slug": project.slug, "name": project.name},
        "computed_at": timezone.now().isoformat(),
        "labels_at_compute": labels_at_compute,
    }
    report.update(_verdict_rates(gold[gold_mask], answer_ids[gold_mask]))
    report["claims"]["in_project"] = int(data.claim_ids.size) + data.claims_in_abstentions
    report["claims"]["without_gold"] = int((~gold_mask).sum())
    report["claims"]["in_abstentions"] = data.claims_in_abstentions
    report["abstention"] = _abstention(data.answers)
    links = _fact_links(data)
    grounded = links["fact_id"].unique()
    faith = report["faithfulness"]["pooled"]["value"]
    report["coverage"] = _coverage(data.facts, grounded, faith)
    citations = selectors.citation_columns(project=project, judge=judge)
    all_claims = np.ones(data.claim_ids.size, dtype=bool)
    report["citation_accuracy"] = _citation(data, citations, all_claims)
    report["self_knowledge"] = _self_knowledge(data, all_claims)

    progress(0.5, "by risk category and claim tag")
    risk = data.claims["risk_category"].to_numpy()
    report["by_risk_category"] = {}
    for category in RiskCategory.values:
        mask = risk == category
        answers = data.answers[data.answers["risk_category"] == category]
        if not mask.any() and answers.empty:
            continue
        block = _group_block(data, mask, grounded, citations)
        block["abstention"] = _abstention(answers)
        facts = data.facts[data.facts["risk_category"] == category]
        block["coverage"] = _coverage(facts, grounded, block["faithfulness"]["pooled"]["value"])
        report["by_risk_category"][category] = block
    report["by_tag"] = {}
    claim_answers = data.claims["answer_id"].to_numpy()
    for tag, mask in data.tag_masks.items():
        block = _group_block(data, mask, grounded, citations)
        tagged_answers = np.unique(claim_answers[mask])
        facts = data.facts[data.facts["answer_id"].isin(tagged_answers)]
        block["coverage"] = _coverage(facts, grounded, block["faithfulness"]["pooled"]["value"])
        block["coverage"]["answers"] = int(tagged_answers.size)
        report["by_tag"][tag] = block
    progress(0.58, "inter-analyst agreement")
    report["analysts"] = _analysts(data)
    report["method"] = _method_strings(report)

    if judge is not None:
        progress(0.62, "reading the judge's verdicts")
        verdicts = selectors.judge_verify_columns(judge=judge)
        canaries = selectors.canary_columns(judge=judge)
        stale_counts = selectors.judge_stale_counts(judge=judge)
        sources = data.gold_sources
        instruments = []
        keys = (
            verdicts.groupby(["model", "prompt_version"], sort=False)["verdict_id"]
            .max()
            .sort_values(ascending=False)
            .index.tolist()
        )
        for number, (model, prompt_version) in enumerate(keys or [(None, None)]):
            progress(
                0.66 + 0.3 * number / max(len(keys), 1),
                f"auditing {judge.name} {model or ''} {prompt_version or ''}".strip(),
            )
            part = (
                verdicts[
                    (verdicts["model"] == model) & (verdicts["prompt_version"] == prompt_version)
                ]
                if model is not None
                else verdicts
            )
            instruments.append(
                _instrument_block(
                    data=data,
                    judge=judge,
                    verdicts=part,
                    canaries=canaries,
                    grounded_links=links,
                    gold_sources=sources,
                    human_kappa=report["analysts"]["human_human_kappa"],
                    stale=stale_counts.get((model, prompt_version), 0)
                    if model is not None
                    else sum(stale_counts.values()),
                )
            )
        # An instrument all of whose verdicts were made on claims' earlier text has no verdict
        # left to audit: it is not an instrument of the report, but it is named with its count.
        listed = set(keys) if keys else set(stale_counts)
        report["instruments_left_out"] = [
            {"model": model, "prompt_version": prompt_version, "stale_verdicts": n}
            for (model, prompt_version), n in sorted(stale_counts.items(), key=str)
            if (model, prompt_version) not in listed
        ]
        report["judge"] = instruments[0]
        report["instruments"] = [
            {key: value for key, value in block.items() if not key.startswith("_")}
            for block in instruments
        ]
        report["_instrument_crc_inputs"] = [block.pop("_crc_inputs") for block in instruments]
        for name in ("debiased_faithfulness", "ppi_faithfulness", "gold_only_faithfulness"):
            report["method"][f"judge_{name}"] = report["judge"][name]["method"]
        report["method"]["judge_audit"] = report["judge"]["method"]
        if report["instruments_left_out"]:
            report["method"]["judge_audit"] += " " + instruments_left_out_text(
                report["instruments_left_out"]
            )
    progress(0.98, "saving")
    return json_safe(report)


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


def report_public(report: dict) -> dict:
    """The report as exported: without the compact arrays kept only for the α form."""
    return {key: value for key, value in report.items() if not key.startswith("_")}


# --- the audit card -----------------------------------------------------------------------


def audit_card(*, report: dict, instrument: int = 0) -> dict:
    """Everything someone needs to reuse one instrument's numbers honestly; no secrets."""
    block = report["instruments"][instrument] if report.get("instruments") else report["judge"]
    crc = block["crc"]
    headline_key = block["headline_estimate"]
    headline = block.get(headline_key) if headline_key else None
    card = {
        "judge": block["name"],
        "backend": block["backend"],
        "model": block["model"],
        "prompt_version": block["prompt_version"],
        "date": report["computed_at"],
        "project": report["project"]["slug"],
        "audit_sample_size": block["n_audited"],
        "judged_claims": block["n_judged"],
        "gold_source": block["gold_sources"],
        "sensitivity": block["sensitivity"],
        "specificity": block["specificity"],
        "youden_j": block["youden_j"],
        "agreement": block["agreement"],
        "agreement_ci": block["agreement_ci"],
        "kappa": block["kappa"],
        "human_kappa_ceiling": block["human_kappa_ceiling"],
        "naive_faithfulness": block["naive_faithfulness"],
        "debiased_faithfulness": block["debiased_faithfulness"],
        "ppi_faithfulness": block["ppi_faithfulness"],
        "gold_only_faithfulness": block["gold_only_faithfulness"],
        "headline_estimate": headline_key,
        "headline_value": headline["value"] if headline else None,
        "headline_ci": headline["ci"] if headline else None,
        "headline_reason": block["headline_reason"],
        "ece": block["ece"],
        "crc": {
            key: crc[key]
            for key in (
                "alpha",
                "lambda_hat",
                "retained",
                "realized_false_claim_rate",
                "test_claims",
            )
        },
        "canary_pass_rate": block["canary"]["pass_rate"]["value"],
        "canaries": block["canary"]["canaries"],
        "unparseable": block["unparseable"],
        "stale_verdicts_left_out": block.get("stale_verdicts", 0),
        # Instruments with no current verdict, as "model …, prompt …: N verdicts".
        "instruments_left_out_all_stale": [
            _left_out_name(row) for row in report.get("instruments_left_out", [])
        ],
        "method": block["method"] + " " + CRC_CAVEAT,
    }
    return json_safe(card)


def audit_card_rows(card: dict) -> list[tuple[str, Any]]:
    """The card flattened to (field, value) rows for CSV: nested keys joined by dots."""
    rows: list[tuple[str, Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else key, item)
        elif isinstance(value, list):
            rows.append((prefix, " – ".join("" if v is None else f"{v}" for v in value)))
        else:
            rows.append((prefix, "" if value is None else value))

    walk("", card)
    return rows


# --- snapshots ----------------------------------------------------------------------------


def snapshot_create(*, project: Project, judge: Judge | None = None) -> ReportSnapshot:
    return ReportSnapshot.objects.create(project=project, judge=judge)


@transaction.atomic
def snapshot_request(*, project: Project, judge: Judge | None = None) -> ReportSnapshot:
    """A pending snapshot with `compute_report` enqueued when this transaction commits.

    While one is already pending or running it is returned instead of a duplicate; if it has
    been unfinished longer than SNAPSHOT_STALE_AFTER (its worker died), it is enqueued again
    into the same row.
    """
    from metrics.tasks import compute_report as compute_report_task

    existing = (
        ReportSnapshot.objects.select_for_update()
        .filter(
            project=project,
            judge=judge,
            status__in=[ReportSnapshot.Status.PENDING, ReportSnapshot.Status.RUNNING],
        )
        .order_by("-created_at")
        .first()
    )
    if existing is not None and existing.created_at > timezone.now() - SNAPSHOT_STALE_AFTER:
        return existing
    snapshot = existing or snapshot_create(project=project, judge=judge)
    transaction.on_commit(lambda: _enqueue_or_fail(compute_report_task, snapshot.pk))
    return snapshot


def _enqueue_or_fail(task, snapshot_id: int) -> None:
    """With the broker down, fail the snapshot with a clear message (the dashboard shows it)
    instead of a 500 and a snapshot pending forever."""
    try:
        task.delay(snapshot_id)
    except BrokerUnreachable:
        logger.exception("could not enqueue report snapshot %s", snapshot_id)
        ReportSnapshot.objects.filter(pk=snapshot_id, status=ReportSnapshot.Status.PENDING).update(
            status=ReportSnapshot.Status.FAILED,
            error="the task queue (Redis) could not be reached; press Recompute once it is back",
        )


def snapshot_compute(*, snapshot_id: int) -> ReportSnapshot | None:
    """Compute a snapshot's report into its own row; idempotent.

    A snapshot already done is left alone. Redelivered after a crash (pending, running or
    failed), the whole report is recomputed from scratch into the same row; if two deliveries
    race, the first to finish writes and the other's result is dropped, so a snapshot
    completes once.
    """
    snapshot = (
        ReportSnapshot.objects.select_related("project", "judge").filter(pk=snapshot_id).first()
    )
    if snapshot is None or snapshot.status == ReportSnapshot.Status.DONE:
        return snapshot
    rows = ReportSnapshot.objects.filter(pk=snapshot_id).exclude(status=ReportSnapshot.Status.DONE)
    rows.update(status=ReportSnapshot.Status.RUNNING, progress=0.0, stage="starting", error="")

    def progress(fraction: float, stage: str) -> None:
        rows.update(progress=round(min(max(fraction, 0.0), 1.0), 3), stage=stage[:200])

    try:
        report = report_compute(project=snapshot.project, judge=snapshot.judge, progress=progress)
    except Exception as error:
        logger.exception("report snapshot %s failed", snapshot_id)
        rows.update(status=ReportSnapshot.Status.FAILED, error=f"{type(error).__name__}: {error}")
        snapshot.refresh_from_db()
        return snapshot
    rows.update(
        status=ReportSnapshot.Status.DONE,
        progress=1.0,
        stage="done",
        data=report,
        labels_at_compute=report["labels_at_compute"],
        computed_at=timezone.now(),
    )
    snapshot.refresh_from_db()
    return snapshot

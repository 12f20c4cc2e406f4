"""The audit card for people: the card's figures rounded for reading, each with its interval
and the sentence saying how it was computed, the audit sample and its design, and the limits
in words; as sections for the HTML page and as Markdown. The JSON and CSV card
(metrics/services/audit_card.py) keep full precision.
"""

from datetime import UTC, datetime
from typing import Any

from metrics import format as fmt
from metrics.services import estimators
from metrics.services.conformal import CRC_CAVEAT
from metrics.services.judge_audit import AGREEMENT_WARNING_BELOW

DASH = fmt.DASH
WIDE_HALF_WIDTH = 0.10  # an interval wider than ±10 points is called wide in the limits


def _pct(value: Any) -> str:
    return fmt.percent(value)


def _interval(ci: Any) -> str:
    return fmt.percent_interval(ci)


def _dec(value: Any, digits: int = 2) -> str:
    return fmt.number(value, digits)


def _row(label: str, figure: str, interval: str = DASH, method: str = "") -> dict:
    return {"label": label, "figure": figure, "interval": interval, "method": method}


def _estimate_row(label: str, estimate: dict | None) -> dict:
    estimate = estimate or {}
    parts = [estimate.get("method"), estimate.get("interval_method")]
    method = ". ".join(part.rstrip(".") for part in parts if part)
    method += "." if method else ""
    return _row(label, _pct(estimate.get("value")), _interval(estimate.get("ci")), method)


def _when(stamp: Any) -> str:
    """An ISO time as "2026-12-01 15:11 UTC" (the JSON keeps the full stamp)."""
    try:
        moment = datetime.fromisoformat(str(stamp)).astimezone(UTC)
    except ValueError:
        return str(stamp)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _identity(card: dict) -> list[tuple[str, str]]:
    rows = [
        ("Judge", card["judge"]),
        ("Backend", card["backend"]),
        ("Model", card["model"] or DASH),
        ("Prompt version", card["prompt_version"]),
        ("Project", card["project"]),
    ]
    if card.get("system"):  # a project of two systems or more: whose answers
        rows.append(("Answers of", card["system"]))
    rows.append(("Computed", _when(card["date"])))
    return rows


def _sample(card: dict, design: dict | None) -> list[str]:
    gold = card["gold_source"]
    lines = [
        f"{card['audit_sample_size']} audited claims (gold verdicts: {gold['unanimous']} "
        f"unanimous among analysts, {gold['adjudicated']} adjudicated by a lead) out of "
        f"{card['judged_claims']} claims the judge judged."
    ]
    if design:
        strata = design.get("strata") or []
        names = ", ".join(s["name"] for s in strata) or DASH
        lines.append(
            f"Design: {len(strata)} {'stratum' if len(strata) == 1 else 'strata'} ({names}), "
            f"{design.get('answers_audited', 0)} audited answers, "
            f"{_dec(design.get('claims_per_audited_answer'), 1)} gold claims per audited "
            f"answer. {design.get('method', '')}".strip()
        )
    else:
        lines.append("Design: not recorded in this report (computed before designs were kept).")
    return lines


def _figures(card: dict) -> list[dict]:
    headline = card.get("headline_estimate")
    rows = []
    for key, label in ((e.key, e.card_label) for e in estimators.shown()):
        row = _estimate_row(label + (" — headline" if key == headline else ""), card.get(key))
        row["headline"] = key == headline
        rows.append(row)
    rows.append(
        _row(
            "Faithfulness the judge alone would claim (naive)",
            _pct(card.get("naive_faithfulness")),
            DASH,
            "Share of the judge's verdicts that are SUPPORTED, with none of its errors corrected.",
        )
    )
    for key, label in (("sensitivity", "Sensitivity"), ("specificity", "Specificity")):
        block = card.get(key) or {}
        rows.append(
            _row(
                label,
                _pct(block.get("value")),
                _interval(block.get("ci")),
                f"On {block.get('n', 0)} audited claims. {block.get('interval_method', '')}".strip(),
            )
        )
    rows += [
        _row(
            "Agreement with gold",
            _pct(card.get("agreement")),
            _interval(card.get("agreement_ci")),
            "Share of audited claims where the judge's verdict equals gold; clustered by answer.",
        ),
        _row(
            "Cohen's kappa (judge–gold)",
            _dec(card.get("kappa")),
            DASH,
            f"Agreement beyond chance; the analysts' own kappa, "
            f"{_dec(card.get('human_kappa_ceiling'))}, is its ceiling.",
        ),
        _row("Youden's J", _dec(card.get("youden_j")), DASH, "Sensitivity + specificity − 1."),
        _row(
            "Expected calibration error",
            _dec((card.get("ece") or {}).get("raw")),
            DASH,
            f"Raw confidence; after Platt scaling {_dec((card.get('ece') or {}).get('platt'))}, "
            f"isotonic {_dec((card.get('ece') or {}).get('isotonic'))}; out of fold.",
        ),
    ]
    crc = card.get("crc") or {}
    cut = crc.get("lambda_hat")
    rows.append(
        _row(
            f"Confidence cut for a false-claim rate ≤ {_pct(crc.get('alpha'))}",
            "none meets the target" if cut is None else _dec(cut),
            DASH,
            f"Conformal risk control: {crc.get('retained', 0)} of {crc.get('test_claims', 0)} "
            f"held-out claims kept, realized false-claim rate "
            f"{_pct(crc.get('realized_false_claim_rate'))}.",
        )
    )
    rows.append(
        _row(
            "Canary pass rate",
            _pct(card.get("canary_pass_rate")),
            DASH,
            f"Planted claims the pile cannot support that came back NOT_IN_PILE, of "
            f"{card.get('canaries', 0)}.",
        )
    )
    return rows


def _limits(card: dict, design: dict | None) -> list[str]:
    limits = []
    agreement = card.get("agreement")
    if agreement is not None and agreement < AGREEMENT_WARNING_BELOW:
        limits.append(
            f"The judge agrees with analysts on {_pct(agreement)} of audited claims, below "
            f"{_pct(AGREEMENT_WARNING_BELOW)}: its own verdicts do not measure this project's "
            "definition; use the corrected estimates, not the naive one."
        )
    ci = card.get("headline_ci")
    if ci and None not in ci and (ci[1] - ci[0]) / 2 > WIDE_HALF_WIDTH:
        limits.append(
            f"The headline interval is wide (±{fmt.half_up(ci[1] - ci[0], scale=50)} points): "
            f"{card['audit_sample_size']} audited claims are few; more labels narrow it."
        )
    if not card.get("canaries"):
        limits.append(
            "No canaries were planted, so whether the judge refuses claims the pile cannot "
            "support is untested."
        )
    if card.get("unparseable"):
        limits.append(
            f"{card['unparseable']} judge responses could not be read and are not counted as "
            "verdicts."
        )
    if card.get("stale_verdicts_left_out"):
        limits.append(
            f"{card['stale_verdicts_left_out']} verdicts on a claim's earlier text are left out."
        )
    for name in card.get("instruments_left_out_all_stale") or []:
        limits.append(f"Instrument left out, every verdict stale: {name}.")
    if card.get("not_computed"):
        limits.append(f"Not computed: {card['not_computed']}.")
    if design and design.get("unseen_share"):
        limits.append(
            f"{_pct(design['unseen_share'])} of the project's claims are in strata with no "
            "gold: no figure covers them."
        )
    drift = card.get("judge_drift")
    if drift:
        limits.append(
            f"Judge drift since {drift['since']}: {drift['sentence']} The gold-only figures do "
            "not lean on the judge."
        )
    warning = (card.get("guideline_versions") or {}).get("warning")
    if warning:
        limits.append(warning)
    limits.append(CRC_CAVEAT)
    return limits


def audit_card_readable(*, card: dict, design: dict | None) -> dict:
    """{identity, sample, figures, headline_reason, limits, history}: what the page and the
    Markdown show. `design` is the report's `design` block (None for reports without one)."""
    return {
        "identity": _identity(card),
        "sample": _sample(card, design),
        "figures": _figures(card),
        "headline_reason": card.get("headline_reason") or "",
        "limits": _limits(card, design),
        "method": card.get("method") or "",
        "history": _judge_history(card),
        "guidelines": _guideline_lines(card),
    }


def _guideline_lines(card: dict) -> list[str]:
    """Agreement per guidelines version as sentences, newest first (issue 28 item 5)."""
    versions = card.get("guideline_versions") or {}
    lines = []
    for key, row in versions.items():
        if not isinstance(row, dict):
            continue
        name = "labels with no version recorded" if key == "not_recorded" else key
        line = (
            f"{name}{' (current)' if row['current'] else ''}: {row['gold_claims']} gold claims, "
            f"{row['labels']} labels; analysts agree on {_pct(row['analyst_agreement'])} of "
            f"pairs (Krippendorff's alpha {_dec(row['krippendorff_alpha'])})"
        )
        if "judge_agreement" in row:
            line += (
                f"; the judge agrees with this gold on {_pct(row['judge_agreement'])} "
                f"({_interval(row['judge_agreement_ci'])}, {row['judge_audited']} audited "
                f"claims), kappa {_dec(row['judge_kappa'])}"
            )
        lines.append(line + ".")
    return lines


def _judge_history(card: dict) -> list[str]:
    """The judge version's history (issue 28) as sentences: the version audited, each version
    of its lineage with its few-shot examples' source claims, and which gold audits it. Empty
    for a judge that is no version of another and has no examples."""
    history = card.get("judge_history")
    if not history:
        return []
    lines = [f"Audited version: {history['version']}."]
    for version in history["lineage"]:
        examples = version["few_shot"]
        line = (
            f"{version['name']}: prompt {version['prompt_version']}, model {version['model']}, "
            f"{examples} few-shot example{'' if examples == 1 else 's'}"
        )
        if version["few_shot_claim_ids"]:
            line += " from claims " + ", ".join(f"#{i}" for i in version["few_shot_claim_ids"])
        lines.append(line + ".")
    split = history.get("gold_split")
    if split and history["heldout_only"]:
        lines.append(
            f"Audited on held-out gold only: the gold is split by answer (seed {split['seed']}, "
            f"{fmt.percent(split['heldout_share'])} held out) and the examples came from the "
            "development share."
        )
    elif split:
        lines.append(
            f"The gold is split by answer (seed {split['seed']}, "
            f"{fmt.percent(split['heldout_share'])} held out); this version was not tuned on it, "
            "so all gold audits it."
        )
    return lines


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def audit_card_markdown(readable: dict) -> str:
    """The readable card as Markdown (GitHub tables)."""
    judge = dict(readable["identity"])["Judge"]
    out = [f"# Audit card: {judge}", ""]
    out += [f"- **{name}**: {_cell(value)}" for name, value in readable["identity"]]
    out += ["", "## Audit sample", ""] + [f"- {_cell(line)}" for line in readable["sample"]]
    out += ["", "## Figures", "", "| Figure | Value | 95% interval | How |", "|---|---|---|---|"]
    out += [
        f"| {_cell(r['label'])} | {_cell(r['figure'])} | {_cell(r['interval'])} | "
        f"{_cell(r['method'])} |"
        for r in readable["figures"]
    ]
    if readable["headline_reason"]:
        out += ["", f"**Why the headline:** {readable['headline_reason']}"]
    out += ["", "## Limits", ""] + [f"- {line}" for line in readable["limits"]]
    if readable.get("guidelines"):
        out += ["", "## Guideline versions", ""]
        out += [f"- {_cell(line)}" for line in readable["guidelines"]]
    if readable.get("history"):
        out += ["", "## Judge history", ""] + [f"- {_cell(line)}" for line in readable["history"]]
    out += ["", "## Method", "", readable["method"], ""]
    return "\n".join(out)

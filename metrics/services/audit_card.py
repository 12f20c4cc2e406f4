"""The audit card: one instrument's numbers with everything needed to reuse them honestly (no
secrets), and its flattening to (field, value) rows for CSV."""

from typing import Any

from metrics.services import estimators
from metrics.services.common import json_safe
from metrics.services.conformal import CRC_CAVEAT
from metrics.services.instruments import _left_out_name

_CRC_FIELDS = ("alpha", "lambda_hat", "retained", "realized_false_claim_rate", "test_claims")
# Card field ← the instrument block's key, copied as they are.
_AGREEMENT_FIELDS = (
    ("audit_sample_size", "n_audited"),
    ("judged_claims", "n_judged"),
    ("gold_source", "gold_sources"),
    ("sensitivity", "sensitivity"),
    ("specificity", "specificity"),
    ("youden_j", "youden_j"),
    ("agreement", "agreement"),
    ("agreement_ci", "agreement_ci"),
    ("kappa", "kappa"),
    ("human_kappa_ceiling", "human_kappa_ceiling"),
)


def _system_label(entry: dict) -> str:
    return f"{entry['name']}@{entry['version']}" if entry.get("version") else entry["name"]


def _identity(report: dict, block: dict) -> dict:
    identity = {
        "judge": block["name"],
        "backend": block["backend"],
        "model": block["model"],
        "prompt_version": block["prompt_version"],
        "date": report["computed_at"],
        "project": report["project"]["slug"],
    }
    # Whose answers (a project of two systems or more): one system's, or all of them pooled.
    if report.get("system"):
        identity["system"] = _system_label(report["system"])
    elif report.get("system_scope") == "all":
        systems = ", ".join(_system_label(entry) for entry in report.get("systems", []))
        identity["system"] = f"all systems, pooled ({systems})"
    return identity


def _faithfulness(block: dict) -> dict:
    """The four estimates and the headline the report chose among them."""
    headline_key = block["headline_estimate"]
    headline = block.get(headline_key) if headline_key else None
    return {
        "naive_faithfulness": block["naive_faithfulness"],
        **{e.key: block[e.key] for e in estimators.registered() if e.key in block},
        "headline_estimate": headline_key,
        "headline_value": headline["value"] if headline else None,
        "headline_ci": headline["ci"] if headline else None,
        "headline_reason": block["headline_reason"],
    }


def _checks(report: dict, block: dict) -> dict:
    """Canaries, unparseable responses and the verdicts left out as stale."""
    return {
        "canary_pass_rate": block["canary"]["pass_rate"]["value"],
        "canaries": block["canary"]["canaries"],
        "unparseable": block["unparseable"],
        "stale_verdicts_left_out": block.get("stale_verdicts", 0),
        # Instruments with no current verdict, as "model …, prompt …: N verdicts".
        "instruments_left_out_all_stale": [
            _left_out_name(row) for row in report.get("instruments_left_out", [])
        ],
    }


def _jaudit_fields(block: dict) -> dict:
    """The correction by risk category and CRC over many splits (absent from snapshots computed
    before they existed)."""
    by_category = block.get("error_rates_by_risk_category") or {}
    splits = (block.get("crc") or {}).get("splits") or {}
    return {
        "error_rate_correction": by_category.get("correction"),
        "error_rates_equality_p": (by_category.get("equality") or {}).get("p_value"),
        "crc_splits": {
            "splits": splits.get("splits"),
            "lambda_hat_full": splits.get("lambda_hat_full"),
            "realized_mean": (splits.get("realized") or {}).get("mean"),
            "realized_sd": (splits.get("realized") or {}).get("sd"),
            "share_over_alpha": splits.get("share_over_alpha"),
            "retained_share_mean": (splits.get("retained_share") or {}).get("mean"),
            "confidence_auc": (splits.get("auc") or {}).get("value"),
            "confidence_auc_ci": (splits.get("auc") or {}).get("ci"),
        },
        "not_computed": (block.get("calibration") or {}).get("not_computed"),
    }


_GUIDELINE_FIELDS = (
    "current",
    "gold_claims",
    "labels",
    "analyst_agreement",
    "krippendorff_alpha",
)
_GUIDELINE_JUDGE_FIELDS = (
    "judge_audited",
    "judge_agreement",
    "judge_agreement_ci",
    "judge_kappa",
    "judge_kappa_ci",
)


def _guideline_versions(report: dict, instrument: int) -> dict:
    """Agreement per guidelines version, keyed "v2", "v1", … ("not_recorded" for labels with
    none), when the labels span versions (issue 28 item 5); the judge's figures are the
    report's headline instrument's, so they are on its card only."""
    section = report.get("guidelines")
    if not section:
        return {}
    fields = _GUIDELINE_FIELDS + (_GUIDELINE_JUDGE_FIELDS if instrument == 0 else ())
    out: dict = {"mixed_gold": section["mixed_gold"], "warning": section["warning"]}
    for row in section["versions"]:
        key = "not_recorded" if row["version"] is None else f"v{row['version']}"
        out[key] = {name: row[name] for name in fields}
    return out


def audit_card(*, report: dict, instrument: int = 0) -> dict:
    """Everything someone needs to reuse one instrument's numbers honestly; no secrets."""
    block = report["instruments"][instrument] if report.get("instruments") else report["judge"]
    card = {
        **_identity(report, block),
        **{field: block[key] for field, key in _AGREEMENT_FIELDS},
        **_faithfulness(block),
        "ece": block["ece"],
        "crc": {key: block["crc"][key] for key in _CRC_FIELDS},
        **_jaudit_fields(block),
        **_checks(report, block),
        "method": block["method"] + " " + CRC_CAVEAT,
    }
    guidelines = _guideline_versions(report, instrument)
    if guidelines:
        card["guideline_versions"] = guidelines
    if block.get("judge_history"):
        # A judge version (issue 28): its lineage, few-shot sources and whether held out.
        card["judge_history"] = block["judge_history"]
    if block.get("judge_drift"):
        # Monitoring flagged the judge on its anchors (issue 29) when the report was computed.
        card["judge_drift"] = block["judge_drift"]
    return json_safe(card)


AUDIT_CARD_CSV_HEADER = ("field", "value", "low", "high")


def _cell(value: Any) -> Any:
    """A CSV cell at full precision, like the JSON card (the page and the Markdown round for
    reading: metrics/services/audit_card_text.py); None is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def _is_interval(key: str, value: list) -> bool:
    last = key.rsplit(".", 1)[-1]
    return (last == "ci" or last.endswith("_ci")) and len(value) == 2


def audit_card_rows(card: dict) -> list[tuple[str, Any, Any, Any]]:
    """The card flattened to (field, value, low, high) rows for CSV: nested keys joined by
    dots; an interval is one row with its two ends as numbers in `low` and `high` (value empty),
    every other row has only a value; floats at full precision (their shortest repr, which
    reads back to the same float)."""
    rows: list[tuple[str, Any, Any, Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else key, item)
        elif isinstance(value, list) and _is_interval(prefix, value):
            rows.append((prefix, "", _cell(value[0]), _cell(value[1])))
        elif isinstance(value, list):
            rows.append((prefix, " – ".join("" if v is None else f"{v}" for v in value), "", ""))
        else:
            rows.append((prefix, _cell(value), "", ""))

    walk("", card)
    return rows

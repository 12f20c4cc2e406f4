"""The audit card: one instrument's numbers with everything needed to reuse them honestly (no
secrets), and its flattening to (field, value) rows for CSV."""

from typing import Any

from metrics.services.common import json_safe
from metrics.services.conformal import CRC_CAVEAT
from metrics.services.judge_audit import _left_out_name


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

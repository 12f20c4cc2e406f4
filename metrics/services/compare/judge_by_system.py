"""The judge audited on each system's gold claims, and the self-preference warning by model
family."""

from __future__ import annotations

import math
from typing import Any

from annotate.models import System
from metrics.services.compare.pair import _Pair
from metrics.services.compare.systems import system_label
from metrics.stats.agreement import sensitivity_specificity
from metrics.stats.paired import (
    proportions_equal,
)

# Model families by the start of a model's name (the provider's prefix, org/ path removed).
MODEL_FAMILIES = (
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("chatgpt", "openai"),
    ("claude", "anthropic"),
    ("llama", "llama"),
    ("meta-llama", "llama"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("gemini", "gemini"),
    ("gemma", "gemini"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
    ("command", "cohere"),
)


def model_family(model: str) -> str:
    """The family a model's name belongs to ("gpt-4o-mini" → "openai", "meta-llama/Llama-3.1"
    → "llama"); else the name's first word; "" for no name."""
    name = str(model or "").strip().lower()
    name = name.rsplit("/", 1)[-1] if "/" in name else name
    for prefix, family in MODEL_FAMILIES:
        if name.startswith(prefix):
            return family
    for separator in "-:_. ":
        name = name.split(separator, 1)[0]
    return name


def _judge_by_system(pair: _Pair, systems: tuple[System, System]) -> dict[str, Any] | None:
    """The judge audited on each system's gold claims: sensitivity and specificity with Wilson
    intervals, Fisher's exact test of their equality, and a self-preference warning where the
    judge's model family is a system's generator's (its metadata's generator_model)."""
    if not pair.judge_name:
        return None
    claims = pair.claims[(pair.claims["gold"] != "") & (pair.claims["judge"] != "")]
    per_system = []
    for side, system in enumerate(systems):
        mine = claims[claims["side"] == side]
        audit = sensitivity_specificity(mine["gold"].tolist(), mine["judge"].tolist())
        per_system.append({"system": system_label(system), "n_audited": int(len(mine)), **audit})
    tests = {}
    for key in ("sensitivity", "specificity"):
        a, b = per_system[0][key], per_system[1][key]
        tests[key] = proportions_equal(a["successes"], a["n"], b["successes"], b["n"])
    differ = [key for key, p in tests.items() if math.isfinite(p) and p < 0.05]
    if differ:
        equality = (
            f"The judge's {' and '.join(differ)} differ between the systems (Fisher's exact "
            "test, p < 0.05): its errors are not the same on both, so a comparison of its "
            "raw rates is biased; PPI++ above rectifies each system by its own gold."
        )
    else:
        equality = (
            "No evidence that the judge's sensitivity or specificity differ between the "
            "systems (Fisher's exact test, p ≥ 0.05); PPI++ rectifies each system by its own "
            "gold regardless."
        )
    judge_family = model_family(pair.judge_model)
    warnings = []
    for system in systems:
        generator = (system.metadata or {}).get("generator_model", "")
        if judge_family and generator and model_family(generator) == judge_family:
            warnings.append(
                f"Self-preference: the judge's model ({pair.judge_model}) is of the "
                f"{judge_family} family, as {system_label(system)}'s generator ({generator}): "
                "judges rate their own family's outputs higher. Audit it on this system's gold "
                "(above) or use a judge of another family."
            )
    return {
        "per_system": per_system,
        "equality_p": tests,
        "equality": equality,
        "self_preference": warnings,
        "model": pair.judge_model,
        "family": judge_family,
    }

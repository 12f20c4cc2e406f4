"""The registry of the judge audit's estimators of the true faithfulness.

Each estimator is one module in this package that builds an `Estimator` and calls `register`
on import; `registered()` imports every module here the first time it is asked (the way
Django's admin discovers `admin.py` files), so adding an estimator is one new file and its
tests. An entry declares everything the rest of the product reads about it:

- ``key``: its block's key in each instrument of the report (``"ppi_faithfulness"``);
- ``choice``: its name in the headline rule (`metrics.stats.headline_estimate`);
- ``label`` / ``card_label`` / ``design_label`` / ``short``: how the dashboard's table, the
  audit card, the design section and a half-width's caption name it;
- ``term``: its glossary key (`metrics.glossary`), or "" to show the label plain;
- ``rank``: its place on the pages (the report's JSON keeps registration order);
- ``compute(inputs) -> dict``: its block (``value``, ``ci``, ``method`` and its own fields);
- ``detail(block) -> str``: what the dashboard adds to the method column (``"λ = 0.53"``);
- ``may_headline``: whether it competes for the headline.

The judge audit (`metrics.services.judge_audit`) computes every registered entry, the card,
the dashboard, the design section and the formatter read their names here; ARCHITECTURE.md's
"Add an estimator" shows a whole example.
"""

import importlib
import math
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from metrics import stats
from metrics.services.judged import Judged


class EstimatorInputs(NamedTuple):
    """What an estimator of the true faithfulness reads: the instrument's judged claims, its
    audited sensitivity and specificity (`DesignEstimate`s) and Youden's J, and 0/1 arrays."""

    judged: Judged
    sesp: dict  # "sensitivity", "specificity" (stats.DesignEstimate), "youden_j"
    gold01: np.ndarray  # per audited claim: gold is SUPPORTED
    judge01: np.ndarray  # per judged claim: the judge said SUPPORTED
    judge_score: np.ndarray  # per judged claim: P(SUPPORTED), else the 0/1 verdict


def _no_detail(block: Mapping[str, Any]) -> str:
    return ""


@dataclass(frozen=True)
class Estimator:
    key: str
    choice: str
    label: str
    card_label: str
    design_label: str
    short: str
    compute: Callable[[EstimatorInputs], dict]
    term: str = ""
    rank: int = 100
    detail: Callable[[Mapping[str, Any]], str] = _no_detail
    may_headline: bool = True


_REGISTRY: dict[str, Estimator] = {}
_BUILT_IN_MODULES = ("rogan_gladen", "ppi", "gold_only")
_DISCOVERED = False


def register(estimator: Estimator) -> Estimator:
    """Add `estimator` (its key must be new; re-registering the same entry is a no-op).
    The built-in estimators are always registered first, whoever registers first."""
    _discover()
    known = _REGISTRY.get(estimator.key)
    if known is not None and known is not estimator:
        raise ValueError(f"An estimator with key {estimator.key!r} is already registered.")
    _REGISTRY[estimator.key] = estimator
    return estimator


def unregister(key: str) -> None:
    """Remove an entry (a test's example estimator, after the test)."""
    _REGISTRY.pop(key, None)


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True  # before the imports: each module's `register` call comes back here
    # The built-in three first, in the order the report's JSON has always had them; then any
    # other module here by name.
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    for name in [*_BUILT_IN_MODULES, *(n for n in names if n not in _BUILT_IN_MODULES)]:
        importlib.import_module(f"{__name__}.{name}")


def registered() -> list[Estimator]:
    """Every estimator, in registration order (the report's JSON order)."""
    _discover()
    return list(_REGISTRY.values())


def shown() -> list[Estimator]:
    """Every estimator in the order the pages show them (by `rank`)."""
    return sorted(registered(), key=lambda e: e.rank)


def by_key(key: str) -> Estimator | None:
    _discover()
    return _REGISTRY.get(key)


def design_labels() -> tuple[tuple[str, str], ...]:
    """(report key, label) of each estimator in the design section's list of design effects."""
    return tuple((e.key, e.design_label) for e in shown())


def headline_keys() -> dict[str, str]:
    """The headline rule's choice → the estimator's report key."""
    return {e.choice: e.key for e in registered()}


_BUILT_IN = ("gold_only", "rogan_gladen", "ppi")


def _valid(block: Mapping[str, Any]) -> bool:
    value = block.get("value", math.nan)
    low, high = block.get("ci", (math.nan, math.nan))
    finite = all(isinstance(x, float | int) and math.isfinite(x) for x in (value, low, high))
    return finite and low - 1e-12 <= value <= high + 1e-12 and high - low > 0.0


def headline_choose(blocks: Mapping[str, dict], youden_j: float) -> tuple[str | None, str]:
    """(the headline's report key, the reason): the narrowest valid interval wins.

    Among the three built-in estimators the rule and its sentence are
    `metrics.stats.headline_estimate`'s (DESIGN.md "Three estimates"). An added estimator that
    `may_headline` then takes the headline only when its own interval is valid and strictly
    narrower than the built-in choice's; the reason says so.
    """
    by_choice = {e.choice: blocks.get(e.key) for e in registered() if e.choice in _BUILT_IN}
    headline = stats.headline_estimate(
        *(by_choice.get(name) for name in _BUILT_IN), youden_j=youden_j
    )
    keys = headline_keys()
    key, reason = keys.get(headline["choice"]), headline["reason"]
    best = blocks.get(key) if key else None
    width = best["ci"][1] - best["ci"][0] if best is not None else math.inf
    for entry in registered():
        block = blocks.get(entry.key)
        if entry.choice in _BUILT_IN or not entry.may_headline or block is None:
            continue
        if _valid(block) and block["ci"][1] - block["ci"][0] < width - 1e-9:
            own = (block["ci"][1] - block["ci"][0]) / 2
            reason = (
                f"{entry.label} is the narrowest valid interval (±{own:.3f})"
                + (f", narrower than the built-in choice (±{width / 2:.3f})" if best else "")
                + "."
            )
            key, width = entry.key, block["ci"][1] - block["ci"][0]
    return key, reason

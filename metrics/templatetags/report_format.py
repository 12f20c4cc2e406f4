"""Formatting of report figures in templates: a missing figure (None) shows as a dash."""

import math

from django import template

register = template.Library()

DASH = "—"


def _number(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.7234 → "72.3%"."""
    number = _number(value)
    return DASH if number is None else f"{100 * number:.{int(digits)}f}%"


@register.filter
def ci(interval, digits: int = 1) -> str:
    """[0.61, 0.80] → "61.0–80.0%"."""
    if not interval or len(interval) != 2:
        return DASH
    lo, hi = (_number(end) for end in interval)
    if lo is None or hi is None:
        return DASH
    return f"{100 * lo:.{int(digits)}f}–{100 * hi:.{int(digits)}f}%"


@register.filter
def num(value, digits: int = 3) -> str:
    """A plain number with `digits` decimals."""
    number = _number(value)
    return DASH if number is None else f"{number:.{int(digits)}f}"


@register.filter
def get(mapping, key):
    """mapping[key] for keys a template cannot spell (e.g. "multi-part")."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    try:
        return mapping[int(key)]
    except (TypeError, ValueError, IndexError, KeyError):
        return None

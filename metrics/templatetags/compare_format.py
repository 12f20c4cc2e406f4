"""B − A differences as the comparison page writes them: signed points, one decimal."""

import math

from django import template

register = template.Library()


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def points(value) -> str:
    """0.061 → "+6.1"; None or nan → "n/a"."""
    number = _finite(value)
    return "n/a" if number is None else f"{100 * number:+.1f}"


@register.filter
def points_ci(interval) -> str:
    """[0.023, 0.098] → "[+2.3, +9.8]"."""
    if not interval or len(interval) != 2:
        return "n/a"
    low, high = (_finite(end) for end in interval)
    if low is None or high is None:
        return "n/a"
    return f"[{100 * low:+.1f}, {100 * high:+.1f}]"


@register.filter
def rate_pct(value) -> str:
    number = _finite(value)
    return "n/a" if number is None else f"{100 * number:.0f}%"


@register.filter
def estimate(block) -> str:
    """{"value": 0.061, "ci": [0.023, 0.098]} → "+6.1 [+2.3, +9.8]"; "n/a" without a value."""
    if not block or _finite(block.get("value")) is None:
        return "n/a"
    return f"{points(block['value'])} {points_ci(block.get('ci'))}"

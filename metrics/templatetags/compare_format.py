"""B − A differences as the comparison page writes them: signed points, one decimal, through
metrics/format.py (one rounding rule, halves up). Shares on the page use report_format's `pct`."""

from django import template

from metrics import format as fmt

register = template.Library()


@register.filter
def points(value) -> str:
    """0.061 → "+6.1"; None or nan → "n/a"."""
    return fmt.points(value)


@register.filter
def points_ci(interval) -> str:
    """[0.023, 0.098] → "[+2.3, +9.8]"."""
    return fmt.points_interval(interval)


@register.filter
def rate_pct(value) -> str:
    """A share on the comparison page: `pct`'s figure, "n/a" where the page says so."""
    return fmt.percent(value, missing="n/a")


@register.filter
def estimate(block) -> str:
    """{"value": 0.061, "ci": [0.023, 0.098]} → "+6.1 [+2.3, +9.8]"; "n/a" without a value."""
    if not block or fmt.finite(block.get("value")) is None:
        return "n/a"
    return f"{points(block['value'])} {points_ci(block.get('ci'))}"

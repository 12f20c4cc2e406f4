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


@register.simple_tag
def term(key: str, shown: str = ""):
    """`{% term "kappa" %}` → the term with its one-line definition on hover (metrics.glossary,
    the glossary page's source too; not a link, so it may sit inside a <summary>); `shown`
    replaces the term's own wording."""
    from django.utils.html import format_html

    from metrics.glossary import GLOSSARY

    if key not in GLOSSARY:
        raise template.TemplateSyntaxError(f"No glossary entry {key!r} (metrics/glossary.py).")
    name, definition = GLOSSARY[key]
    return format_html(
        '<abbr class="term" data-term="{}" title="{}">{}</abbr>',
        key,
        definition,
        shown or name,
    )

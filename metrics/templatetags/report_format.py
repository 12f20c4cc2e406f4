"""Report figures in templates, through metrics/format.py (its docstring has the one rounding
rule): a share is a whole percent, halves up; a missing figure (None) shows as a dash."""

from django import template
from django.utils.html import format_html

from metrics import format as fmt
from metrics.glossary import GLOSSARY
from metrics.services import estimators

register = template.Library()

DASH = fmt.DASH


@register.filter
def pct(value, places: int = 0) -> str:
    """0.625 → "63%"; `places` only where a page needs decimals (still halves up)."""
    return fmt.percent(value, int(places))


@register.filter
def ci(interval, places: int = 0) -> str:
    """[0.405, 0.8125] → "41–81%"."""
    return fmt.percent_interval(interval, int(places))


@register.filter
def num(value, places: int = 3) -> str:
    """A plain number with `places` decimals, halves up."""
    return fmt.number(value, int(places))


@register.filter
def duration(seconds) -> str:
    return fmt.DASH if seconds is None else fmt.duration(float(seconds))


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
    if key not in GLOSSARY:
        raise template.TemplateSyntaxError(f"No glossary entry {key!r} (metrics/glossary.py).")
    name, definition = GLOSSARY[key]
    return format_html(
        '<abbr class="term" data-term="{}" title="{}">{}</abbr>',
        key,
        definition,
        shown or name,
    )


# What each half-width on a page is the half-width of: the same 95% level computed by different
# estimators differs (a gold-only Wilson interval is not PPI++'s), so a page showing two says
# which is which. Keys: a headline's `estimator` and a forecast's (metrics/services/active_audit).
# The judge audit's estimators name themselves (`metrics.services.estimators`); these are the
# design forecasts' and the active audit's keys.
ESTIMATOR_NAMES = {
    "active_ppi": "active sampling, PPI++",
    "stratified_gold_only": "stratified, gold only",
    "stratified_ppi": "stratified, PPI++",
    "uniform_gold": "gold only",
    "uniform_ppi": "PPI++",
    "active": "active sampling, PPI++",
    "stratified": "stratified, Neyman allocation",
}


@register.filter
def estimator_name(key) -> str:
    """ "ppi_faithfulness" → "PPI++"; an unknown key reads as itself."""
    entry = estimators.by_key(str(key or ""))
    return entry.short if entry else ESTIMATOR_NAMES.get(key, str(key or ""))

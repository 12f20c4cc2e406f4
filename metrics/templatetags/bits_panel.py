"""The bits panel's chart and table rows (templates/metrics/_bits_panel.html)."""

from django import template

from metrics.bits_chart import histogram_rows, histogram_svg

register = template.Library()


@register.simple_tag
def bits_histogram(block):
    return histogram_svg((block or {}).get("histogram") or {})


@register.simple_tag
def bits_histogram_rows(block):
    return histogram_rows((block or {}).get("histogram") or {})

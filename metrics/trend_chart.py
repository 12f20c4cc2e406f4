"""The trend across versions as server-rendered inline SVG (no script, no style attribute: the
site's Content-Security-Policy allows neither): each system's headline faithfulness as a dot
with its 95% interval as a bar, systems left to right in version order, joined by a line. The
page prints the same numbers in a table beside it."""

import math

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 520, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 56


def _y(value: float) -> float:
    return HEIGHT - BOTTOM - value * (HEIGHT - TOP - BOTTOM)


def trend_chart(points: list[tuple[str, float, float, float]]) -> SafeString:
    """`points`: (label, value, low, high) per system in order; values are proportions."""
    n = len(points)
    span = WIDTH - LEFT - RIGHT

    def x(index: int) -> float:
        return LEFT + (index + 0.5) * span / max(n, 1)

    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{LEFT}" y1="{_y(tick):.1f}" x2="{WIDTH - RIGHT}" y2="{_y(tick):.1f}" '
            'class="chart-grid"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{_y(tick) + 4:.1f}" text-anchor="end" '
            f'class="chart-tick">{100 * tick:.0f}%</text>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{_y(0):.1f}" x2="{WIDTH - RIGHT}" y2="{_y(0):.1f}" '
        'class="chart-axis"/>'
    )
    finite = [
        (i, value, low, high)
        for i, (_label, value, low, high) in enumerate(points)
        if all(isinstance(v, (int, float)) and math.isfinite(v) for v in (value, low, high))
    ]
    if len(finite) > 1:
        coords = " ".join(f"{x(i):.1f},{_y(value):.1f}" for i, value, _lo, _hi in finite)
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="#2f6fd1" stroke-width="2" '
            'class="trend-line"/>'
        )
    for i, value, low, high in finite:
        parts.append(
            f'<line x1="{x(i):.1f}" y1="{_y(low):.1f}" x2="{x(i):.1f}" y2="{_y(high):.1f}" '
            'stroke="#2f6fd1" stroke-width="1.5" class="trend-interval"/>'
        )
        parts.append(
            f'<circle cx="{x(i):.1f}" cy="{_y(value):.1f}" r="4" fill="#2f6fd1" '
            'class="trend-point"/>'
        )
    for i, (label, *_rest) in enumerate(points):
        parts.append(
            f'<text x="{x(i):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" '
            f'class="chart-tick">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 10}" text-anchor="middle" class="chart-label">'
        "system, in version order</text>"
    )
    title = "Faithfulness (headline, 95% interval) per system"
    return mark_safe(  # noqa: S308 — every interpolated text is escaped or a number
        f'<svg class="chart trend-chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{escape(title)}"><title>{escape(title)}'
        "</title>" + "".join(parts) + "</svg>"
    )

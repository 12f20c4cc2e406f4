"""A stream's confidence sequence as server-rendered inline SVG (no script, no style
attribute, as metrics/trend_chart.py): the band day by day, the target as a line and each
alert's day as a mark. The page prints the same numbers in a table beside it."""

from __future__ import annotations

import math

from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 560, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 32
LOW = 0.5  # the chart shows 50–100%: faithfulness below that is off the bottom


def _y(value: float) -> float:
    v = min(max(value, LOW), 1.0)
    return HEIGHT - BOTTOM - (v - LOW) / (1 - LOW) * (HEIGHT - TOP - BOTTOM)


def band_chart(lower, upper, *, target: float, alert_days: list[int], outline=None) -> SafeString:
    """The band of (lower, upper) filled; `outline`, a second (lower, upper), drawn dashed."""
    n = len(lower)

    def x(day: float) -> float:
        return LEFT + (day + 0.5) * (WIDTH - LEFT - RIGHT) / max(n, 1)

    parts = []
    for tick in (0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{LEFT}" y1="{_y(tick):.1f}" x2="{WIDTH - RIGHT}" y2="{_y(tick):.1f}" '
            f'class="chart-grid"/><text x="{LEFT - 6}" y="{_y(tick) + 4:.1f}" '
            f'text-anchor="end" class="chart-tick">{100 * tick:.0f}%</text>'
        )

    def band(lo, hi) -> str:
        days = [d for d in range(n) if not (math.isnan(lo[d]) or math.isnan(hi[d]))]
        top = " ".join(f"{x(d):.1f},{_y(hi[d]):.1f}" for d in days)
        bottom = " ".join(f"{x(d):.1f},{_y(lo[d]):.1f}" for d in reversed(days))
        return f"{top} {bottom}" if days else ""

    points = band(lower, upper)
    if points:
        parts.append(
            f'<polygon points="{points}" class="chart-band" fill="#3b6ea5" fill-opacity="0.3"/>'
        )
    points = band(*outline) if outline is not None else ""
    if points:
        parts.append(
            f'<polygon points="{points}" class="chart-band-judge" fill="none" stroke="#555" '
            'stroke-dasharray="2 2"/>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{_y(target):.1f}" x2="{WIDTH - RIGHT}" y2="{_y(target):.1f}" '
        'class="chart-target" stroke="#b00020" stroke-dasharray="4 3"/>'
    )
    for day in alert_days:
        parts.append(
            f'<line x1="{x(day):.1f}" y1="{TOP}" x2="{x(day):.1f}" y2="{HEIGHT - BOTTOM}" '
            'class="chart-alert" stroke="#b00020"/>'
        )
    parts.append(
        f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle" class="chart-tick">'
        f"day 1 to day {n}</text>"
    )
    return mark_safe(  # noqa: S308 (numbers only, built here)
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" class="chart" '
        f'aria-label="Faithfulness confidence sequence by day with the target line">'
        f"{''.join(parts)}</svg>"
    )

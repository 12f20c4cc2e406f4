"""The bits panel's chart: a histogram of grounding bits by gold verdict, stacked, with the zero
line — server-rendered inline SVG (no script, no inline style: colours are classes of
static/css/app.css). The panel's table carries the same counts."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotate.vocabulary import VERDICTS

ORDER = VERDICTS
WIDTH, HEIGHT = 420, 270
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 28, 60


def histogram_rows(histogram: dict) -> list[dict]:
    """One row per bin: its range and counts by gold verdict (the table beside the chart)."""
    edges = histogram.get("edges") or []
    counts = histogram.get("counts") or {}
    return [
        {
            "lo": edges[i],
            "hi": edges[i + 1],
            **{v: (counts.get(v) or [0] * (len(edges) - 1))[i] for v in ORDER},
        }
        for i in range(len(edges) - 1)
    ]


def histogram_svg(histogram: dict) -> SafeString:
    rows = histogram_rows(histogram)
    if not rows:
        return mark_safe("")
    edges = histogram["edges"]
    lo, hi = edges[0], edges[-1]
    tallest = max(sum(r[v] for v in ORDER) for r in rows) or 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return LEFT + (value - lo) / (hi - lo) * plot_w

    def y(count: float) -> float:
        return TOP + plot_h - count / tallest * plot_h

    body = []
    for row in rows:
        base = 0
        for verdict in ORDER:
            n = row[verdict]
            if not n:
                continue
            body.append(
                f'<rect x="{x(row["lo"]) + 1:.1f}" y="{y(base + n):.1f}" '
                f'width="{max(x(row["hi"]) - x(row["lo"]) - 2, 1):.1f}" '
                f'height="{y(base) - y(base + n):.1f}" class="bits-bar bits-{verdict}">'
                f"<title>{escape(verdict)}: {n} claim{'s' if n != 1 else ''} with bits in "
                f"({row['lo']:g}, {row['hi']:g}]</title></rect>"
            )
            base += n
    body.append(
        f'<line x1="{LEFT}" y1="{y(0):.1f}" x2="{WIDTH - RIGHT}" y2="{y(0):.1f}" class="chart-axis"/>'
    )
    step = max(1, len(edges) // 7)
    for edge in edges[::step]:
        body.append(
            f'<text x="{x(edge):.1f}" y="{y(0) + 14:.1f}" text-anchor="middle" '
            f'class="chart-tick">{edge:g}</text>'
        )
    body.append(
        f'<text x="{LEFT - 6}" y="{y(tallest) + 4:.1f}" text-anchor="end" class="chart-tick">'
        f"{tallest}</text>"
    )
    body.append(
        f'<line x1="{x(0):.1f}" y1="{TOP - 8}" x2="{x(0):.1f}" y2="{y(0):.1f}" '
        'class="bits-zero" data-zero="1"/>'
    )
    body.append(f'<text x="{x(0) + 4:.1f}" y="{TOP - 10}" class="chart-tick">0 bits</text>')
    body.append(
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle" '
        'class="chart-label">bits the pile adds to the claim</text>'
    )
    for i, verdict in enumerate(ORDER):
        left = LEFT + 8 + i * 120
        body.append(
            f'<rect x="{left}" y="{HEIGHT - 38}" width="10" height="10" class="bits-{verdict}"/>'
        )
        body.append(
            f'<text x="{left + 14}" y="{HEIGHT - 29}" class="chart-legend">gold {verdict}</text>'
        )
    title = "Grounding bits by gold verdict, with the zero line"
    return mark_safe(  # noqa: S308 — every interpolated text is escaped or a number
        f'<svg class="chart bits-histogram" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{title}"><title>{title}</title>'
        + "".join(body)
        + "</svg>"
    )

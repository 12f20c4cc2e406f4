"""Server-rendered inline SVG charts for the dashboard: no JavaScript, no CDN.

Each function takes the numbers stored in a report snapshot and returns SVG markup; the
template puts a table of the same numbers beside every chart for people who read them.
"""

import math

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotate.vocabulary import VERDICTS

VERDICT_SHORT = {verdict.value: verdict.label for verdict in VERDICTS}
SERIES_COLOURS = {"raw": "#8a8f98", "platt": "#2f6fd1", "isotonic": "#c2571a"}
WIDTH, HEIGHT = 360, 280
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 44


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def _x(value: float) -> float:
    return LEFT + value * (WIDTH - LEFT - RIGHT)


def _y(value: float) -> float:
    return HEIGHT - BOTTOM - value * (HEIGHT - TOP - BOTTOM)


def _axes(x_label: str, y_label: str) -> list[str]:
    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{_x(0):.1f}" y1="{_y(tick):.1f}" x2="{_x(1):.1f}" y2="{_y(tick):.1f}" '
            'class="chart-grid"/>'
        )
        parts.append(
            f'<text x="{_x(0) - 6:.1f}" y="{_y(tick) + 4:.1f}" text-anchor="end" '
            f'class="chart-tick">{tick:g}</text>'
        )
        parts.append(
            f'<text x="{_x(tick):.1f}" y="{_y(0) + 16:.1f}" text-anchor="middle" '
            f'class="chart-tick">{tick:g}</text>'
        )
    parts.append(
        f'<line x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(1):.1f}" y2="{_y(0):.1f}" class="chart-axis"/>'
    )
    parts.append(
        f'<line x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(0):.1f}" y2="{_y(1):.1f}" class="chart-axis"/>'
    )
    parts.append(
        f'<text x="{(_x(0) + _x(1)) / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle" '
        f'class="chart-label">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="12" y="{(_y(0) + _y(1)) / 2:.1f}" text-anchor="middle" class="chart-label" '
        f'transform="rotate(-90 12 {(_y(0) + _y(1)) / 2:.1f})">{escape(y_label)}</text>'
    )
    return parts


def _svg(title: str, body: list[str], width: int = WIDTH, height: int = HEIGHT) -> SafeString:
    return mark_safe(  # noqa: S308 — every interpolated text above is escaped or a number
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _polyline(points: list[tuple[float, float]], colour: str, dashed: bool = False) -> list[str]:
    if not points:
        return []
    coords = " ".join(f"{_x(x):.1f},{_y(y):.1f}" for x, y in points)
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    parts = [f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>']
    parts += [
        f'<circle cx="{_x(x):.1f}" cy="{_y(y):.1f}" r="3" fill="{colour}"/>' for x, y in points
    ]
    return parts


def _legend(items: list[tuple[str, str]], x: float, y: float) -> list[str]:
    parts = []
    for index, (label, colour) in enumerate(items):
        top = y + index * 16
        parts.append(
            f'<rect x="{x:.1f}" y="{top - 9:.1f}" width="10" height="10" fill="{colour}"/>'
        )
        parts.append(
            f'<text x="{x + 14:.1f}" y="{top:.1f}" class="chart-legend">{escape(label)}</text>'
        )
    return parts


def confusion_heatmap(confusion: dict) -> SafeString:
    """3×3 heat map, rows gold and columns judge; shade = share of the gold row."""
    labels = confusion["labels"]
    matrix = confusion["matrix"]
    cell, left, top = 78, 104, 44
    width, height = left + 3 * cell + 8, top + 3 * cell + 8
    body = [
        f'<text x="{left + 1.5 * cell:.1f}" y="14" text-anchor="middle" class="chart-label">'
        "Judge verdict</text>"
    ]
    for col, label in enumerate(labels):
        body.append(
            f'<text x="{left + (col + 0.5) * cell:.1f}" y="{top - 8}" text-anchor="middle" '
            f'class="chart-tick">{escape(VERDICT_SHORT.get(label, label))}</text>'
        )
    for row, label in enumerate(labels):
        total = sum(matrix[row]) or 1
        body.append(
            f'<text x="{left - 6}" y="{top + (row + 0.5) * cell + 4:.1f}" text-anchor="end" '
            f'class="chart-tick">gold {escape(VERDICT_SHORT.get(label, label))}</text>'
        )
        for col in range(3):
            count = matrix[row][col]
            share = count / total
            hue = "47,111,209" if row == col else "194,87,26"
            ink = "#fff" if share > 0.55 else "#1b1f27"
            body.append(
                f'<rect x="{left + col * cell}" y="{top + row * cell}" width="{cell - 2}" '
                f'height="{cell - 2}" fill="rgba({hue},{0.08 + 0.87 * share:.3f})" '
                f'class="heat-cell"><title>gold {escape(label)}, judge {escape(labels[col])}: '
                f"{count}</title></rect>"
            )
            body.append(
                f'<text x="{left + (col + 0.5) * cell - 1:.1f}" y="{top + (row + 0.5) * cell + 6:.1f}" '
                f'text-anchor="middle" class="heat-count" fill="{ink}">{count}</text>'
            )
    return _svg("Confusion matrix: gold rows, judge columns", body, width, height)


def reliability_diagram(bins: dict) -> SafeString:
    """Observed SUPPORTED rate against mean confidence per bin: raw, Platt and isotonic."""
    body = _axes("mean confidence in bin", "share gold-SUPPORTED")
    body.append(
        f'<line x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(1):.1f}" y2="{_y(1):.1f}" '
        'class="chart-diagonal"/>'
    )
    legend = []
    for name in ("raw", "platt", "isotonic"):
        rows = bins.get(name) or []
        points = [
            (row["mean_confidence"], row["observed_rate"])
            for row in rows
            if row.get("count")
            and _finite(row["mean_confidence"])
            and _finite(row["observed_rate"])
        ]
        colour = SERIES_COLOURS[name]
        body += _polyline(points, colour, dashed=name == "raw")
        legend.append((name.capitalize() if name != "raw" else "Raw", colour))
    body += _legend(legend, _x(0.62), _y(0.2))
    return _svg("Reliability diagram: raw, Platt and isotonic (out of fold)", body)


def frontier_chart(frontier: list[dict], lambda_hat: float | None) -> SafeString:
    """Faithfulness, coverage and share retained against the confidence cut τ, with λ̂ marked."""
    body = _axes("confidence cut τ (calibrated)", "rate")
    series = [
        ("faithfulness", "Faithfulness of retained", "#1f7a3a", False),
        ("coverage", "Coverage", "#2f6fd1", False),
        ("retained_share", "Share of claims retained", "#8a8f98", True),
    ]
    legend = []
    for key, label, colour, dashed in series:
        points = [(row["tau"], row[key]) for row in frontier if _finite(row.get(key))]
        body += _polyline(points, colour, dashed)
        if points:
            legend.append((label, colour))
    if _finite(lambda_hat) and 0 <= lambda_hat <= 1:
        body.append(
            f'<line x1="{_x(lambda_hat):.1f}" y1="{_y(0):.1f}" x2="{_x(lambda_hat):.1f}" '
            f'y2="{_y(1):.1f}" class="chart-cut"/>'
        )
        body.append(
            f'<text x="{_x(lambda_hat) + 4:.1f}" y="{_y(0.04):.1f}" class="chart-legend">'
            f"λ̂ = {lambda_hat:.3f}</text>"
        )
    body += _legend(legend, _x(0) + 8, _y(0.3))
    return _svg("Abstention frontier: faithfulness and coverage against the cut τ", body)


def systems_intervals(rows: list[dict]) -> SafeString:
    """Each system's headline faithfulness with its 95% interval, one line per system, the
    pooled figure first (the dashboard's first screen with two systems or more, issue 32)."""
    return intervals_chart(rows, "Faithfulness of each system, with its 95% interval")


def intervals_chart(rows: list[dict], title: str) -> SafeString:
    """Figures with their 95% intervals, one line each, the headline in green: the
    dashboard's first-screen picture (issue 32 item 6).

    `rows`: {"label", "value", "low", "high"} in whole percents as the page prints them (the
    chart draws the same rounded figures the table beside it reads), and "headline" where the
    caller knows which row is the headline (without the key: the first row is); a row without a
    value is drawn as its label alone ("not computed yet")."""
    left, right, row_h, top = 160, 24, 30, 12
    width = 520
    height = top + row_h * len(rows) + 34
    span = width - left - right

    def x(percent: float) -> float:
        return left + percent / 100 * span

    body = []
    for tick in (0, 25, 50, 75, 100):
        body.append(
            f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" '
            f'y2="{height - 30}" class="chart-grid"/>'
        )
        body.append(
            f'<text x="{x(tick):.1f}" y="{height - 16}" text-anchor="middle" '
            f'class="chart-tick">{tick}%</text>'
        )
    for index, row in enumerate(rows):
        y = top + row_h * index + row_h / 2
        label = row["label"] if len(row["label"]) <= 22 else row["label"][:21] + "…"
        body.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" class="chart-label">'
            f"{escape(label)}</text>"
        )
        value = row.get("value")
        if value is None:
            body.append(
                f'<text x="{x(0) + 4:.1f}" y="{y + 4:.1f}" class="chart-tick">'
                "not computed yet</text>"
            )
            continue
        headline = row.get("headline", index == 0)
        colour = "#1f7a3a" if headline else "#1f5f99"
        if row.get("low") is not None and row.get("high") is not None:
            body.append(
                f'<line x1="{x(row["low"]):.1f}" y1="{y:.1f}" x2="{x(row["high"]):.1f}" '
                f'y2="{y:.1f}" stroke="{colour}" stroke-width="3" stroke-linecap="round"/>'
            )
        body.append(f'<circle cx="{x(value):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>')
    body.append(
        f'<text x="{left + span / 2:.1f}" y="{height - 2}" text-anchor="middle" '
        'class="chart-label">claims supported (95% interval)</text>'
    )
    return _svg(title, body, width, height)

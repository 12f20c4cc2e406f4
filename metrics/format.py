"""How a figure reads on a page: the one place shares, intervals, differences and half-widths
are rounded for people. Every page (dashboard, audit card and its text and Markdown, run page,
compare page, project page) and every sentence a service writes for a page goes through here,
so one figure reads the same wherever it is shown; reports, JSON and CSV keep full precision.

The rule, for every figure:

* Half up, on the decimal a reader sees. The float is first written as the shortest decimal
  that reads back to it (``repr``), then rounded with ``decimal.ROUND_HALF_UP``: 0.625 reads
  "63%", where Python's ``round(62.5)`` and ``f"{62.5:.0f}"`` give 62 (ties to even), and
  0.285 reads "29%", where the float itself is 0.28499999… and binary rounding gives 28.
* A share is a whole percent ("63%"), an interval of shares its two ends in whole percents
  ("41–81%"), both rounded on their own (the ends are not widened or narrowed to contain the
  rounded figure). More places only where a caller asks for them; the rule stays half up.
* A difference of two shares is signed percentage points with one decimal ("+6.1"), its
  interval "[+2.3, +9.8]".
* A half-width ("±0.204") and any other plain number keep the places the caller asks for.

A missing figure (None, nan, ±inf, or something that is not a number) reads `missing`: an em
dash by default, "n/a" where a page has always said so.
"""

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

DASH = "—"


def finite(value: Any) -> float | None:
    """`value` as a finite float, else None (bools are not figures)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def half_up(value: float, places: int = 0, *, scale: int = 1) -> Decimal:
    """`value × scale` rounded half up to `places` decimals, on the shortest decimal that reads
    back to the float (the module's rule). A result of zero is never negative ("-0%")."""
    exact = Decimal(repr(float(value))) * scale
    rounded = exact.quantize(Decimal(1).scaleb(-int(places)), rounding=ROUND_HALF_UP)
    return rounded.copy_abs() if rounded.is_zero() else rounded


def whole_percent(value: float) -> int:
    """A share as a whole percent, halves up: 0.625 → 63, 0.285 → 29."""
    return int(half_up(value, 0, scale=100))


def percent(value: Any, places: int = 0, *, missing: str = DASH) -> str:
    """A share as a percent: 0.625 → "63%" (places=1: "62.5%")."""
    number = finite(value)
    return missing if number is None else f"{half_up(number, places, scale=100)}%"


def percent_interval(interval: Any, places: int = 0, *, missing: str = DASH) -> str:
    """An interval of shares: [0.405, 0.8125] → "41–81%"."""
    if not interval or len(interval) != 2:
        return missing
    low, high = (finite(end) for end in interval)
    if low is None or high is None:
        return missing
    return f"{half_up(low, places, scale=100)}–{half_up(high, places, scale=100)}%"


def points(value: Any, *, missing: str = "n/a") -> str:
    """A difference of shares as signed points, one decimal: 0.0605 → "+6.1"."""
    number = finite(value)
    return missing if number is None else f"{half_up(number, 1, scale=100):+}"


def points_interval(interval: Any, *, missing: str = "n/a") -> str:
    """[0.023, 0.098] → "[+2.3, +9.8]"."""
    if not interval or len(interval) != 2:
        return missing
    low, high = (finite(end) for end in interval)
    if low is None or high is None:
        return missing
    return f"[{points(low)}, {points(high)}]"


def number(value: Any, places: int = 3, *, missing: str = DASH) -> str:
    """A plain number with `places` decimals, halves up: 0.2035 → "0.204"."""
    figure = finite(value)
    return missing if figure is None else str(half_up(figure, places))


def duration(seconds: float) -> str:
    """A duration for reading, half up: "40 s", "1 min 40 s", "2.5 hours"."""
    if seconds < 59.5:
        return f"{half_up(seconds)} s"
    if seconds < 3599.5:
        minutes, rest = divmod(int(half_up(seconds)), 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    return f"{half_up(seconds / 3600, 1)} hours"

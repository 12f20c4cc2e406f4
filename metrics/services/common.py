"""The report's vocabulary and small pure helpers shared by every piece of it."""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from annotate.vocabulary import VERDICT_VALUES
from metrics import format as fmt
from metrics import stats

Progress = Callable[[float, str], None]


def json_safe(value: Any) -> Any:
    """Numbers as plain floats/ints, NaN and ±inf as None, tuples as lists — valid JSON."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, np.ndarray):
        return [json_safe(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def _codes(verdicts: pd.Series) -> np.ndarray:
    """Verdict strings → their `Verdict.code`, `NO_CODE` (−1) for anything else."""
    return pd.Categorical(verdicts, categories=VERDICT_VALUES).codes.astype(np.int8)


def _proportion(successes: int, n: int) -> dict:
    """A rate with its numerator, denominator and Wilson interval (nan when n = 0)."""
    successes, n = int(successes), int(n)
    return {
        "value": successes / n if n else math.nan,
        "ci": stats.wilson_interval(successes, n) if n else (math.nan, math.nan),
        "numerator": successes,
        "denominator": n,
    }


def _pct(value: float | None) -> str:
    """A share in a sentence, by the pages' one rule (metrics/format.py)."""
    return fmt.percent(value, missing="n/a")


def _newest_per_claim(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop UNPARSEABLE rows, then keep each claim's newest verdict (frames are id-ordered),
    in claim order: verdict ids follow the order a run's calls finished, and the out-of-fold
    calibration and the CRC split read answers in row order, so without this the same data
    gave different ECEs and cuts from one run to the next."""
    parsed = frame[frame["verdict"].isin(VERDICT_VALUES)]
    newest = parsed.drop_duplicates("claim_id", keep="last")
    return newest.sort_values("claim_id", kind="stable")


def _slices(values: np.ndarray, cuts: np.ndarray) -> list[np.ndarray]:
    """`values` cut at `cuts` into views (much faster than numpy.split for many pieces)."""
    bounds = [0, *cuts.tolist(), values.size]
    return [values[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]

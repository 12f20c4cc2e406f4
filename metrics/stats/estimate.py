"""The one result type of an estimate: a value, its interval, and what it came from.

`Estimate(value, lower, upper, se, n, method, design_effect)` is what a statistics function
returns where it estimates one quantity (ppi_py and statsmodels give every interval as
`(lower, upper)`; so does `Estimate.ci`). A family member adds only what its quantity has of its
own (`metrics.stats.ranking.AucEstimate`: the positives and negatives it ranked). The report's
JSON is written from these by the service that owns the figure, so its keys stay as published.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._common import NAN


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its two-sided interval.

    Args: value the estimate; lower/upper its interval's ends (nan when undefined); se its
    standard error; n the units it used; method one phrase naming how; design_effect the
    variance ratio against simple random sampling (nan when not computed).
    """

    value: float
    lower: float = NAN
    upper: float = NAN
    se: float = NAN
    n: int = 0
    method: str = ""
    design_effect: float = NAN

    @property
    def ci(self) -> tuple[float, float]:
        return (self.lower, self.upper)

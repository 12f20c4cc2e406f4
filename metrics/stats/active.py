"""Active audit: where to spend the next human label, what it buys, and when the judge may decide.

Four pieces, pure numpy/scipy (no Django), each checked in ``tests/metrics/stats/test_active*.py``
against a hand derivation or an independent library:

* **Inclusion probabilities and the active estimate.** Each claim i gets a probability π_i
  proportional to the judge's uncertainty on it (the square root of its error variance,
  e.g. √(p(1 − p)) of its calibrated P(SUPPORTED)), floored so every claim can be drawn and
  scaled to the label budget (`inclusion_probabilities`). The queue serves claims in ascending
  u_i/π_i (u_i uniform; Ohlsson 1998, sequential Poisson sampling: stopping after any number of
  labels leaves the inclusion of each claim proportional to π_i), so the estimator weights each
  label by 1/π_i in the Hájek (ratio) form, which does not depend on the scale of π and hence on
  when labelling stopped (`active_ppi_mean`; Zrnic & Candès 2024, "Active Statistical
  Inference", arXiv:2403.03208).
* **Neyman allocation across strata** (`neyman_next_stratum`, `neyman_allocation`; Neyman 1934,
  Cochran 1977 §5.5; Fisch et al. 2024, stratified PPI, arXiv:2406.04291).
* **The forecast and the gain** (`labels_needed`, `labels_saved`, `confidence_informative`): from
  each design's per-label variance unit V₁, n* = V₁ z²/x².
* **Selective judging with a guarantee** (`selective_threshold`; Jung, Brahman & Choi 2025,
  "Trust or Escalate", arXiv:2407.18370): fixed-sequence testing of thresholds with exact
  binomial p-values.

One module per piece, re-exported here: `active_ppi` (inclusion probabilities and the active
estimates), `active_neyman` (Neyman allocation), `active_forecast` (the forecast, the gain and
confidence_informative) and `active_selective` (selective judging).
"""

from __future__ import annotations

from .active_forecast import (
    _DESIGN_NAMES,
    DESIGNS,
    MIN_LABELS,
    Forecast,
    LabelsSaved,
    _deff,
    _weighted_parts,
    _whole_labels,
    confidence_informative,
    forecasts,
    labels_needed,
    labels_saved,
)
from .active_neyman import _strata_arrays, neyman_allocation, neyman_next_stratum
from .active_ppi import (
    _check_pi,
    _uniform_today,
    active_ppi_mean,
    inclusion_probabilities,
    sequential_poisson_keys,
    stratified_active_ppi_mean,
)
from .active_selective import SelectiveResult, selective_threshold

__all__ = [
    "DESIGNS",
    "Forecast",
    "LabelsSaved",
    "MIN_LABELS",
    "SelectiveResult",
    "_DESIGN_NAMES",
    "_check_pi",
    "_deff",
    "_strata_arrays",
    "_uniform_today",
    "_weighted_parts",
    "_whole_labels",
    "active_ppi_mean",
    "confidence_informative",
    "forecasts",
    "inclusion_probabilities",
    "labels_needed",
    "labels_saved",
    "neyman_allocation",
    "neyman_next_stratum",
    "selective_threshold",
    "sequential_poisson_keys",
    "stratified_active_ppi_mean",
]

"""Design-based estimates: claims clustered in answers, audits drawn by strata.

Every claim-level figure elsewhere in this package treats claims as independent draws from one
simple random sample. Real audits are neither: claims of one answer share a question, a pile and a
generation (DESIGN.md "Sampling": answers are the sampling unit), and audits are drawn by strata.
The functions here take per-claim arrays — outcome, answer id (the cluster), stratum id — plus
the stratum population counts N_h (claims in the project per stratum) and return a
`DesignEstimate`.

Variance: Taylor linearisation (Binder 1983; Wolter 2007 ch. 6). Each estimator is a smooth
function of per-stratum means μ_h = Σ_{i∈h} x_i / n_h, combined as μ = Σ_h W_h μ_h with
W_h = N_h / N over the strata that have gold. A claim i in stratum h has influence
W_h (x_i − μ_h)/n_h; influences are summed per answer (z_g) and
V = G/(G − 1) · Σ_g z_g z_gᵀ (CR1, the cluster-robust "sandwich" of Liang & Zeger 1986 and
Stata's ``vce(cluster)``; Miller 2024, arXiv:2411.00640 §3 "clustered standard errors"). When
answers nest within strata the factor is per stratum, G_h/(G_h − 1) (the with-replacement
stratified cluster variance). The quantile is Student t with G − H degrees of freedom
(G answers, H seen strata). Why CR1 + t rather than CR2/Bell–McCaffrey: for these intercept-only
(mean / ratio) estimators CR2 equals CR1 exactly when answers have equal sizes and the
Bell–McCaffrey df is then G − 1 (Imbens & Kolesár 2016; Pustejovsky & Tipton 2018), so the
refinement buys little at G ≥ 30 while CR1 is what statsmodels and Stata print, so an auditor can
reproduce every figure.

Intervals for proportions and ratios: the Wilson interval at the effective sample size
n* = θ̂(1 − θ̂)/V · (z/t_df)² (Kish 1965 effective n; Korn & Graubard 1998 df adjustment;
Dean & Pagano 2015, J Surv Stat Methodol 3:484, who find Wilson-with-design-effect the best
of the simple clustered intervals), with V never below the independent-claims variance V₀
(design effect ≥ 1 for the interval, as Korn & Graubard truncate it). When every answer holds one claim and there is one stratum the
functions delegate to today's independent-claims function, so the figure is exactly today's.

Strata with no gold are not extrapolated over: the estimate covers the seen strata only,
``unseen_share`` says which share of the population (Σ N_h over unseen / N) it cannot see, and the
method text says so.

The arithmetic lives in one module per concept, re-exported here: `design_core` (the
design, its cluster-robust covariance and the record every estimate returns), `design_rates`
(proportions, two-phase rates, sensitivity/specificity, Rogan–Gladen), `design_ppi` (the
design-based PPI++ mean) and `design_kappa` (κ and the cluster bootstrap).
"""

from __future__ import annotations

from .design_core import (
    _CENSUS,
    FPC_MIN_FRACTION,
    DesignEstimate,
    _deff_text,
    _Design,
    _design,
    _factorize,
    _means_and_cov,
    _method,
    _nan_estimate,
    _ratio,
    _simple,
    _undefined,
    _wilson_eff,
)
from .design_kappa import cluster_bootstrap, design_kappa
from .design_ppi import _answers_span_cells, _rectifier_floor, design_ppi_mean
from .design_ppi_sums import _mean_var
from .design_rates import (
    _se_sp_cov,
    design_proportion,
    design_rogan_gladen,
    design_sensitivity_specificity,
    two_phase_rate,
)

__all__ = [
    "DesignEstimate",
    "FPC_MIN_FRACTION",
    "_CENSUS",
    "_Design",
    "_answers_span_cells",
    "_deff_text",
    "_design",
    "_factorize",
    "_mean_var",
    "_means_and_cov",
    "_method",
    "_nan_estimate",
    "_ratio",
    "_rectifier_floor",
    "_se_sp_cov",
    "_simple",
    "_undefined",
    "_wilson_eff",
    "cluster_bootstrap",
    "design_kappa",
    "design_ppi_mean",
    "design_proportion",
    "design_rogan_gladen",
    "design_sensitivity_specificity",
    "two_phase_rate",
]

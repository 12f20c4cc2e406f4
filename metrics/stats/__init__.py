"""Statistics core: every number the product reports, as pure functions over numpy arrays.

No Django import anywhere in this package (a test scans the source): workers, views, management
commands and notebooks all call the same code. Verdicts are ``annotate.vocabulary.Verdict``
(plain strings, the lowest floor's one vocabulary); any other value (``UNPARSEABLE``, None) is
never counted as a verdict. Edge cases return ``nan`` (empty input, n = 0, an undefined statistic), never a made-up
0 or 1 and never a ZeroDivisionError.

Libraries do the work where they fit: statsmodels (binomial intervals), the ``krippendorff``
package (alpha), scikit-learn (PAVA for isotonic), scipy (normal quantiles, expit). Four things are
written by hand, each for a stated reason in its docstring and each checked in the tests against
the library it replaces: Cohen's kappa and Platt scaling (sklearn's versions cost 10× more on a
million claims), PPI++ (``ppi_py`` drags in numba and a dataset downloader for five closed-form
lines), and the fold assignment for cross-fitting.

=============================  ===============================================  ==========================================
function                       formula                                          source (library used)
=============================  ===============================================  ==========================================
wilson_interval                (p̂ + z²/2n ± z√(p̂(1−p̂)/n + z²/4n²))/(1 + z²/n)  Wilson 1927; Newcombe 1998 (statsmodels)
clopper_pearson_interval       beta quantiles B(α/2; k, n−k+1), B(1−α/2; k+1,   Clopper & Pearson 1934 (statsmodels)
                               n−k)
agreement                      A_o = mean 1[a = b]                              Artstein & Poesio 2008 §2.2
cohen_kappa                    (A_o − A_e)/(1 − A_e), A_e = Σ p_a(k)p_b(k)      Cohen 1960 (numpy; tested = sklearn)
pairwise_kappas                cohen_kappa for every pair of coders             Cohen 1960
krippendorff_alpha             1 − D_o/D_e over the coincidence matrix          Krippendorff 2011 (krippendorff pkg)
confusion                      3×3 counts, rows gold, columns judge             DESIGN.md (numpy.bincount)
sensitivity_specificity        se = TP/(TP+FN), sp = TN/(TN+FP), Wilson CIs,    Yerushalmy 1947; Youden 1950
                               J = se + sp − 1
asymmetry                      off-diagonal SUPPORTED cells: over / under       DESIGN.md
rogan_gladen                   (p + sp − 1)/(se + sp − 1), clipped; nan if J≤0  Rogan & Gladen 1978
rogan_gladen_variance          [p(1−p)/n + π²se(1−se)/n_se + (1−π)²sp(1−sp)     Rogan & Gladen 1978; Greiner & Gardner 2000
                               /n_sp] / J²
rogan_gladen_interval          adjusted Wald (+z²/2, +1/+1 pseudo-counts,       Lang & Reiczigel 2014; delta method;
                               shift d) | delta | parametric bootstrap          parametric bootstrap (numpy)
ppi_mean_interval              θ̂ = λ̂·mean f_N + mean(Y − λ̂f_n), λ̂ =            Angelopoulos et al. 2023 (Science);
                               Cov(Y,f)/((1+n/N)Var f) ∈ [0,1]                  Angelopoulos, Duchi & Zrnic 2023 (PPI++)
headline_estimate              narrowest valid interval of the three            DESIGN.md "Three estimates"
reliability_bins               per (lo, hi] bin: count, mean conf, rate         DeGroot & Fienberg 1983
expected_calibration_error     Σ_b (n_b/n)|conf_b − rate_b|                     Naeini et al. 2015; Guo et al. 2017
platt_calibrator               σ(a·c + b), Platt's soft targets, Newton         Platt 1999; Lin, Lin & Weng 2007 (numpy)
isotonic_calibrator            monotone least squares (PAVA)                    Zadrozny & Elkan 2002 (scikit-learn)
cross_fitted_calibration       out-of-fold predictions, K folds (groups kept)   Chernozhukov et al. 2018 (numpy folds)
crc_threshold                  inf{λ : n/(n+1)R̂(λ) + B/(n+1) ≤ α}, L = #(conf   Angelopoulos et al. 2024, Conformal Risk
                               ≥ λ ∧ unsupported)/k                             Control, Thm 1
crc_evaluate                   held-out mean loss at λ̂, claims retained         Angelopoulos et al. 2024
frontier                       per cut τ: retained, precision, recall, loss     seed 000, Def. 1 and Alg. 5
claim_rates                    supported/n, contradicted/n, not_in_pile/n       DESIGN.md; Min et al. 2023 (FActScore)
answer_rates                   mean_a supported_a/claims_a; share of answers    DESIGN.md
                               with ≥ 1 unsupported claim
coverage                       |grounded ∩ F| / |F|                             seed 000, Def. 1; Es et al. 2024 (RAGAS)
f1                             2FC/(F + C)                                      van Rijsbergen 1979
method_string                  "70% of claims supported across 27 claims …"     DESIGN.md "method string"
design_proportion              Σ N_h/N·p̂_h; CR1 variance clustered by answer;   Binder 1983; Korn & Graubard 1998;
                               Wilson at n* = θ(1−θ)/V·(z/t_{G−H})²              Miller 2024 (arXiv:2411.00640)
design_sensitivity_specificity ratio estimators Σ W_h TP_h/n_h ÷ Σ W_h P_h/n_h    Binder 1983 (linearised ratio)
two_phase_rate                 Σ_v N_v/N · PPV_v (strata = judge verdicts)      Neyman 1938; Cochran 1977 §12.2
design_rogan_gladen            Lang–Reiczigel at effective sizes n_k/deff_k, t  Lang & Reiczigel 2014; Korn & Graubard
design_ppi_mean                Σ W_h θ̂_h, per-stratum λ_h, clustered rectifier  Fisch et al. 2024 (arXiv:2406.04291)
design_kappa                   Cohen's κ, linearised CR1 variance by answer     Fleiss, Cohen & Everitt 1969; Binder 1983
cluster_bootstrap              answer-level resampling, percentile interval     Field & Welsh 2007 (numpy)
inclusion_probabilities        π_i = min(1, c·max(sd_i, floor·mean sd)), Σπ = n   Zrnic & Candès 2024 (arXiv:2403.03208)
sequential_poisson_keys        serve ascending u_i/π_i                          Ohlsson 1998
active_ppi_mean                λ f̄_N + Σ_L (y − λf)/π ÷ Σ_L 1/π, CR1 by answer   Zrnic & Candès 2024; Hájek 1971
stratified_active_ppi_mean     Σ_h W_h·active_ppi_mean_h; census strata exact     Zrnic & Candès 2024; Cochran 1977 §5.3
neyman_next_stratum            argmax_h W_h² S_h² (1/n_h − 1/(n_h + 1))          Neyman 1934; Cochran 1977 §5.5
neyman_allocation              n_h ∝ N_h S_h, capped at N_h, whole numbers       Neyman 1934; Cochran 1977 §5.8
labels_needed                  n* = V₁ t²/(x² − t² V_∞) per design               Cochran 1977 §4.4; Kish 1965
forecasts                      labels_needed for every design the data allow    Cochran 1977 §4.4
selective_threshold            fixed-sequence tests, exact binomial p-values    Jung et al. 2025 (arXiv:2407.18370)
labels_saved                   n_gold = V₁_gold / V_design(n) − n               Kish 1965 (relative efficiency)
confidence_informative         AUC of −confidence for errors, DeLong lower > ½  DeLong et al. 1988
=============================  ===============================================  ==========================================
"""

from annotate.vocabulary import VERDICTS, Verdict

from .active import (
    DESIGNS,
    Forecast,
    LabelsSaved,
    SelectiveResult,
    active_ppi_mean,
    confidence_informative,
    forecasts,
    inclusion_probabilities,
    labels_needed,
    labels_saved,
    neyman_allocation,
    neyman_next_stratum,
    selective_threshold,
    sequential_poisson_keys,
    stratified_active_ppi_mean,
)
from .agreement import (
    agreement,
    asymmetry,
    cohen_kappa,
    confusion,
    krippendorff_alpha,
    pairwise_kappas,
    sensitivity_specificity,
)
from .calibration import (
    IsotonicCalibrator,
    PlattCalibrator,
    cross_fitted_calibration,
    expected_calibration_error,
    isotonic_calibrator,
    platt_calibrator,
    reliability_bins,
)
from .conformal import crc_evaluate, crc_threshold, frontier
from .design import (
    DesignEstimate,
    cluster_bootstrap,
    design_kappa,
    design_ppi_mean,
    design_proportion,
    design_rogan_gladen,
    design_sensitivity_specificity,
    two_phase_rate,
)
from .intervals import clopper_pearson_interval, wilson_interval
from .prevalence import (
    headline_estimate,
    ppi_mean_interval,
    rogan_gladen,
    rogan_gladen_interval,
    rogan_gladen_variance,
)
from .rates import answer_rates, claim_rates, coverage, f1, method_string

__all__ = [
    "DESIGNS",
    "Forecast",
    "LabelsSaved",
    "SelectiveResult",
    "DesignEstimate",
    "Verdict",
    "VERDICTS",
    "IsotonicCalibrator",
    "PlattCalibrator",
    "active_ppi_mean",
    "stratified_active_ppi_mean",
    "agreement",
    "answer_rates",
    "asymmetry",
    "cluster_bootstrap",
    "claim_rates",
    "clopper_pearson_interval",
    "cohen_kappa",
    "confidence_informative",
    "confusion",
    "coverage",
    "crc_evaluate",
    "crc_threshold",
    "cross_fitted_calibration",
    "design_kappa",
    "design_ppi_mean",
    "design_proportion",
    "design_rogan_gladen",
    "design_sensitivity_specificity",
    "expected_calibration_error",
    "f1",
    "forecasts",
    "frontier",
    "headline_estimate",
    "inclusion_probabilities",
    "isotonic_calibrator",
    "krippendorff_alpha",
    "labels_needed",
    "labels_saved",
    "method_string",
    "neyman_allocation",
    "neyman_next_stratum",
    "pairwise_kappas",
    "platt_calibrator",
    "ppi_mean_interval",
    "reliability_bins",
    "rogan_gladen",
    "rogan_gladen_interval",
    "rogan_gladen_variance",
    "selective_threshold",
    "sensitivity_specificity",
    "sequential_poisson_keys",
    "two_phase_rate",
    "wilson_interval",
]

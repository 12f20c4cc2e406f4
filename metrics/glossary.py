"""The one source of the dashboard's plain-language definitions: the hover text of every term
(`{% term %}` in metrics/templatetags/report_format.py) and the glossary page read these.

Each entry: key -> (the term as shown, one plain sentence). Keys are stable anchors
(`/glossary/#kappa`); the vocabulary is DESIGN.md's.
"""

GLOSSARY: dict[str, tuple[str, str]] = {
    "faithfulness": (
        "Faithfulness",
        "The share of claims the passages (the pile) support: SUPPORTED claims over all claims.",
    ),
    "gold": (
        "Gold verdict",
        "The reference verdict of a claim: analysts who agree unanimously, or a lead's "
        "adjudication.",
    ),
    "audited": (
        "Audited claim",
        "A claim with a gold verdict that the judge also judged: the sample the judge is "
        "checked on.",
    ),
    "interval": (
        "95% interval",
        "The range that holds the true figure 95 times in 100 under the audit's design; "
        "narrower with more audited claims.",
    ),
    "agreement": (
        "Agreement",
        "The share of audited claims where the judge's verdict equals the gold verdict.",
    ),
    "kappa": (
        "Cohen's kappa",
        "Agreement corrected for the agreement two raters would reach by chance: 0 is chance, "
        "1 is perfect.",
    ),
    "sensitivity": (
        "Sensitivity",
        "Of the claims gold calls SUPPORTED, the share the judge also calls SUPPORTED.",
    ),
    "specificity": (
        "Specificity",
        "Of the claims gold does not call SUPPORTED, the share the judge does not either.",
    ),
    "youden_j": (
        "Youden's J",
        "Sensitivity + specificity − 1: 0 means the judge's SUPPORTED says nothing, 1 that it "
        "is never wrong.",
    ),
    "naive": (
        "Naive estimate",
        "The share SUPPORTED according to the judge alone, with none of its errors corrected.",
    ),
    "gold_only": (
        "Gold-only estimate",
        "Faithfulness from the audited claims' gold verdicts alone, ignoring the judge.",
    ),
    "rogan_gladen": (
        "Rogan–Gladen estimate",
        "The judge's share SUPPORTED corrected by its sensitivity and specificity measured on "
        "the audit sample.",
    ),
    "ppi": (
        "PPI++ estimate",
        "Prediction-powered inference: the judge's verdicts on every claim, corrected by its "
        "mistakes on the audited ones.",
    ),
    "headline": (
        "Headline estimate",
        "The valid estimate with the narrowest interval, the one the summary reports.",
    ),
    "calibration": (
        "Calibration",
        "Whether a judge's confidence means what it says: of claims given 0.8, about 80% should "
        "be right.",
    ),
    "ece": (
        "Expected calibration error (ECE)",
        "The average gap between the judge's confidence and how often it is right; 0 is perfect.",
    ),
    "frontier": (
        "Abstention frontier",
        "Keeping only claims the judge is more confident about raises faithfulness and lowers "
        "the share kept.",
    ),
    "crc": (
        "Conformal risk control",
        "A confidence cut chosen on half the audit so that the kept claims' false-claim rate "
        "stays below a target.",
    ),
    "alpha": (
        "Target false-claim rate (α)",
        "The highest share of unsupported claims you accept among the claims kept.",
    ),
    "lambda_hat": (
        "Confidence cut (λ̂)",
        "The lowest judge confidence a claim needs to be kept; 'none' if no cut meets the target.",
    ),
    "krippendorff_alpha": (
        "Krippendorff's alpha",
        "How much analysts agree with each other beyond chance, over every claim two or more "
        "labelled.",
    ),
    "design_effect": (
        "Design effect",
        "How much wider an interval is because claims come in answers rather than one by one.",
    ),
    "stratum": (
        "Stratum",
        "A part of the project sampled on its own (e.g. a risk category); each is weighted by "
        "its share of claims.",
    ),
    "contradicted": (
        "Contradicted",
        "The pile says the opposite of the claim.",
    ),
    "not_in_pile": (
        "Not in pile",
        "The passages neither support nor contradict the claim.",
    ),
    "coverage": (
        "Coverage",
        "Of the facts an answer should state (marked by analysts), the share its claims cover.",
    ),
    "citation_accuracy": (
        "Citation accuracy",
        "Of the claims that cite a passage, the share whose cited passage supports them.",
    ),
    "abstention": (
        "Abstention",
        "An answer that declines to answer; counted apart from faithfulness.",
    ),
    "canary": (
        "Canary",
        "A planted claim the pile cannot support: a sound judge returns NOT_IN_PILE for it.",
    ),
    "grounding_bits": (
        "Grounding bits",
        "How much more likely the model finds a claim with the pile than without it, in bits.",
    ),
    "instrument": (
        "Instrument",
        "One judge model with one prompt version: each is audited on its own.",
    ),
}

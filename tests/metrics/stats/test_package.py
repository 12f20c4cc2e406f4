"""The package contract: no Django, the public API other code is written against, docstrings."""

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from metrics import stats

PACKAGE = Path(stats.__file__).resolve().parent
ROOT = PACKAGE.parent.parent

API = {
    "wilson_interval": ["successes", "n", "confidence"],
    "clopper_pearson_interval": ["successes", "n", "confidence"],
    "cohen_kappa": ["a", "b"],
    "krippendorff_alpha": ["reliability", "level"],
    "confusion": ["gold", "judge"],
    "sensitivity_specificity": ["gold", "judge", "confidence"],
    "rogan_gladen": ["p_obs", "se", "sp"],
    "rogan_gladen_interval": [
        "pos",
        "n",
        "se_successes",
        "se_n",
        "sp_successes",
        "sp_n",
        "confidence",
        "method",
    ],
    "rogan_gladen_variance": ["pos", "n", "se_successes", "se_n", "sp_successes", "sp_n"],
    "expected_calibration_error": ["confidence", "outcome", "n_bins"],
    "reliability_bins": ["confidence", "outcome", "n_bins"],
    "platt_calibrator": ["confidence", "outcome"],
    "isotonic_calibrator": ["confidence", "outcome"],
    "cross_fitted_calibration": ["confidence", "outcome", "method", "folds", "seed"],
    "crc_threshold": ["confidences", "supported", "alpha", "B", "lambdas"],
    "crc_evaluate": ["confidences", "supported", "lambda_hat"],
    "frontier": ["confidences", "supported", "facts_grounded", "cuts"],
    "ppi_mean_interval": ["gold", "judge_on_gold", "judge_on_rest", "confidence"],
    "claim_rates": ["verdicts"],
    "answer_rates": ["answer_ids", "verdicts"],
    "coverage": ["grounded_fact_ids", "all_fact_ids"],
    "f1": ["faithfulness", "coverage"],
    "method_string": [
        "supported",
        "n_claims",
        "n_answers",
        "contradicted",
        "source",
        "level",
        "against",
    ],
    "agreement": ["a", "b"],
    "pairwise_kappas": ["labels"],
    "headline_estimate": ["gold_only", "rogan_gladen", "ppi", "youden_j"],
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_package_source_has_no_django_import():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) >= 6
    for path in files:
        text = path.read_text()
        offenders = {m for m in _imports(path) if m == "django" or m.startswith("django.")}
        assert not offenders, f"{path.name} imports {offenders}"
        assert "importlib" not in text, f"{path.name}: dynamic imports could hide Django"


def test_package_import_does_not_load_django():
    code = (
        "import sys; from metrics import stats; "
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("name", "params"), sorted(API.items()))
def test_public_api_names_and_parameters(name, params):
    fn = getattr(stats, name)
    assert name in stats.__all__
    signature = inspect.signature(fn)
    positional = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert positional == params


def test_public_api_defaults():
    sig = inspect.signature
    assert sig(stats.wilson_interval).parameters["confidence"].default == 0.95
    assert sig(stats.krippendorff_alpha).parameters["level"].default == "nominal"
    assert sig(stats.rogan_gladen_interval).parameters["method"].default == "lang-reiczigel"
    assert sig(stats.expected_calibration_error).parameters["n_bins"].default == 10
    assert sig(stats.cross_fitted_calibration).parameters["folds"].default == 5
    assert sig(stats.cross_fitted_calibration).parameters["groups"].default is None
    assert sig(stats.crc_threshold).parameters["B"].default == 1.0
    assert sig(stats.method_string).parameters["against"].default == "the retrieved pile"


@pytest.mark.parametrize("name", sorted(API))
def test_every_public_function_documents_formula_and_source(name):
    doc = inspect.getdoc(getattr(stats, name)) or ""
    assert "Source" in doc or "source" in doc, name
    assert name in (stats.__doc__ or ""), f"{name} missing from the package table"

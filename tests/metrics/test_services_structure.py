"""metrics.services as a package: no import cycle with metrics.tasks, and every name the
single module exported before the split still imports from `metrics.services`."""

import ast

from tests.conftest import ROOT

# The public names of metrics/services.py before it became a package (hand-copied), less the
# verdict vocabulary, which lives in annotate/vocabulary.py alone since issue 31
# (tests/test_vocabulary.py).
NAMES_BEFORE_THE_SPLIT = [
    "DEFAULT_ALPHA",
    "CRC_INPUTS_MAX_CLAIMS",
    "CRC_ALPHA_GRID",
    "CRC_SEED",
    "CALIBRATION_FOLDS",
    "FRONTIER_CUTS",
    "AGREEMENT_WARNING_BELOW",
    "SNAPSHOT_STALE_AFTER",
    "COVERAGE_BY_TAG",
    "COVERAGE_BY_RISK_CATEGORY",
    "CRC_CAVEAT",
    "Progress",
    "json_safe",
    "crc_from_inputs",
    "report_compute",
    "instruments_left_out_text",
    "report_public",
    "audit_card",
    "audit_card_rows",
    "snapshot_create",
    "snapshot_request",
    "snapshot_compute",
]


def test_every_name_of_the_old_module_imports_from_the_package():
    from metrics import services

    missing = [name for name in NAMES_BEFORE_THE_SPLIT if not hasattr(services, name)]
    assert missing == []
    assert not any(hasattr(services, name) for name in ("SUPPORTED", "VERDICTS")), (
        "the verdict vocabulary has one home: annotate.vocabulary"
    )


def _imports(path) -> set[str]:
    """Every module an `import` statement in `path` names, at module level or in a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_the_services_never_import_the_task_module():
    """The task module imports its service; no service module imports a task module back,
    not even inside a function (the old snapshot_request did)."""
    modules = sorted((ROOT / "metrics" / "services").glob("*.py"))
    assert len(modules) > 5
    offenders = {
        path.name: sorted(name for name in _imports(path) if ".tasks" in name) for path in modules
    }
    assert {name: found for name, found in offenders.items() if found} == {}
    assert "metrics.services.snapshots" in _imports(ROOT / "metrics" / "tasks.py")

"""The report's assembly: read the inputs once, then call each piece in the order its
sections appear in the report JSON (that order is what `manage.py report` prints)."""

import importlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.utils import timezone

from annotate.models import Project, System
from judges.backends.registry import backend_kind
from judges.models import Judge
from metrics import selectors
from metrics.services import estimators
from metrics.services.abstention_coverage import _abstention, _coverage, _fact_links
from metrics.services.active_audit import active_audit_block
from metrics.services.analysts import _analysts
from metrics.services.audit_design import design_section
from metrics.services.common import json_safe
from metrics.services.inputs import _Data
from metrics.services.instruments import _judge_audits
from metrics.services.method import _method_strings
from metrics.services.rates import (
    _by_risk_category,
    _by_tag,
    _citation,
    _project_rates,
    _self_knowledge,
)
from metrics.services.truth import ground_truth_block


def backend_report_block(backend: str) -> tuple[str, Any] | None:
    """(report key, builder) of the extra block a judge's backend declares, or None
    (`Declared.report_key`/`report_block`: "module:function", imported here, a floor above
    the backend that names it)."""
    kind = backend_kind(backend)
    if not kind.report_block:
        return None
    module, _, function = kind.report_block.partition(":")
    return kind.report_key, getattr(importlib.import_module(module), function)


@dataclass(frozen=True)
class Report:
    """A computed report: `data`, the JSON-safe report every surface shows and exports (no
    private keys), and `crc_inputs`, each instrument's compact CRC inputs that the dashboard's
    α form recomputes from (kept in the snapshot's own column, never in the report)."""

    data: dict
    crc_inputs: list = field(default_factory=list)


def report_compute(**kwargs) -> dict:
    """The project's whole report (and the judge's audits) as a JSON-safe dict
    (`report_build`'s data)."""
    return report_build(**kwargs).data


def report_build(
    *,
    project: Project,
    judge: Judge | None = None,
    progress=None,
    system=None,
    all_systems: bool = False,
) -> Report:
    """The project's whole report (and the judge's audits), with its CRC inputs beside it.

    `progress(fraction, stage)` is called as the work advances. A project with two systems or
    more is reported one system at a time (`system`; by default its first, see
    `report_system`), or over the answers of all its systems pooled (`all_systems`: the report
    then lists them and says `"system_scope": "all"`); with one system or none, over all its
    answers as always.
    """
    progress = progress or (lambda fraction, stage: None)
    labels_at_compute = selectors.label_history_max_id(project=project)
    system, systems = report_system(project=project, system=system, all_systems=all_systems)
    data = _Data(project=project, progress=progress, system=system)
    progress(0.4, "computing project rates")
    report: dict[str, Any] = {
        "project": {"slug": project.slug, "name": project.name},
        "computed_at": timezone.now().isoformat(),
        "labels_at_compute": labels_at_compute,
    }
    if system is not None:
        report["system"] = _system_entry(system)
        report["systems"] = [_system_entry(other) for other in systems]
    elif all_systems and len(systems) >= 2:
        report["system_scope"] = "all"
        report["systems"] = [_system_entry(other) for other in systems]
    report.update(_project_rates(data))
    report["abstention"] = _abstention(data.answers)
    links = _fact_links(data)
    grounded = links["fact_id"].unique()
    report["coverage"] = _coverage(data.facts, grounded, report["faithfulness"]["pooled"]["value"])
    citations = selectors.citation_columns(project=project, judge=judge)
    all_claims = np.ones(data.claim_ids.size, dtype=bool)
    report["citation_accuracy"] = _citation(data, citations, all_claims)
    report["self_knowledge"] = _self_knowledge(data, all_claims)
    progress(0.5, "by risk category and claim tag")
    report["by_risk_category"] = _by_risk_category(data, grounded, citations)
    report["by_tag"] = _by_tag(data, grounded, citations)
    progress(0.58, "inter-analyst agreement")
    report["analysts"] = _analysts(data)
    report["method"] = _method_strings(report)
    crc_inputs, judged = [], None
    if judge is not None:
        crc_inputs, judged = _judge_audits(
            report, data=data, judge=judge, links=links, progress=progress
        )
        block = backend_report_block(judge.backend)
        if block is not None:  # what only a backend of its kind has (grounding bits: issue 18)
            key, build = block
            report[key] = build(
                data=data,
                judge=judge,
                model=report["judge"]["model"],
                prompt_version=report["judge"]["prompt_version"],
            )
    truth = ground_truth_block(project=project, data=data, judged=judged)
    if truth is not None:  # only where a claim has a ground truth: older reports unchanged
        report["ground_truth"] = truth
    report["design"] = design_section(data, report, estimators.design_labels())
    report["method"]["design"] = report["design"]["method"]
    if report["design"]["outside_queue"]["text"]:
        report["method"]["faithfulness"] += " " + report["design"]["outside_queue"]["text"]
    active = active_audit_block(project=project, data=data, report=report, judged=judged)
    if active is not None:
        report["active_audit"] = active
    progress(0.98, "saving")
    return Report(json_safe(report), json_safe(crc_inputs))


def report_system(
    *, project: Project, system=None, all_systems: bool = False
) -> tuple[System | None, list[System]]:
    """(the system a report covers, the project's systems): `system` if given, else the first
    (oldest) of two or more; None — every answer — for a project with one system or none, or
    when `all_systems` asks for every system's answers pooled."""
    systems = list(System.objects.filter(project=project).order_by("id"))
    if all_systems:
        return None, systems
    if system is None and len(systems) >= 2:
        system = systems[0]
    return system, systems


def _system_entry(system: System) -> dict:
    return {
        "name": system.name,
        "version": system.version,
        "metadata": system.metadata,
    }


def report_public(report: dict) -> dict:
    """The report as exported: any private key left out (a snapshot stored before the CRC
    inputs had their own column held them in the report)."""
    return {key: value for key, value in report.items() if not key.startswith("_")}

"""The report's assembly: read the inputs once, then build its typed sections in their
declared order (`SECTIONS`, each builder given exactly the inputs and earlier sections it
`needs`) and serialise them once, in the report JSON's order (`LAYOUT`, what `manage.py
report` prints). Each section's type is in `metrics.services.report_types`; the report's JSON
Schema is made from them (`metrics.services.report_schema`)."""

import importlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.utils import timezone

from annotate.models import Project, System
from judges.backends.registry import backend_kind
from judges.models import Judge
from metrics import selectors
from metrics.services import estimators
from metrics.services import report_types as t
from metrics.services.abstention_coverage import _abstention, _coverage, _fact_links
from metrics.services.active_audit import active_audit_block
from metrics.services.analysts import _analysts
from metrics.services.audit_design import design_section
from metrics.services.common import json_safe
from metrics.services.guidelines import guidelines_section
from metrics.services.inputs import _Data
from metrics.services.instruments import judge_audits_section, judge_method_strings, judge_run
from metrics.services.method import method_section
from metrics.services.rates import (
    _by_risk_category,
    _by_tag,
    _citation,
    _project_rates,
    _self_knowledge,
)
from metrics.services.sections import Section, sections_build, sections_serialise
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


# ------------------------------------------------------------------------------------------
# the sections' builders: each takes its needs by name and returns its typed result


def _header(*, project, computed_at, labels_at_compute, system, systems, all_systems) -> t.Header:
    header = t.Header(
        project=t.ProjectRef(slug=project.slug, name=project.name),
        computed_at=computed_at,
        labels_at_compute=labels_at_compute,
    )
    listed = tuple(_system_entry(other) for other in systems)
    if system is not None:
        return replace(header, system=_system_entry(system), systems=listed)
    if all_systems and len(systems) >= 2:
        return replace(header, system_scope="all", systems=listed)
    return header


def _rates(*, data) -> t.ProjectRates:
    rates = _project_rates(data)
    claims = t.ClaimCounts(**{str(key): value for key, value in rates.pop("claims").items()})
    return t.ProjectRates(claims=claims, **rates)


def _fact_links_section(*, data) -> t.FactLinks:
    links = _fact_links(data)
    return t.FactLinks(links=links, grounded=links["fact_id"].unique())


def _coverage_section(*, data, fact_links, rates) -> t.Coverage:
    faithfulness = rates.faithfulness["pooled"]["value"]
    return t.Coverage(_coverage(data.facts, fact_links.grounded, faithfulness))


def _all_claims(data) -> np.ndarray:
    return np.ones(data.claim_ids.size, dtype=bool)


def _analysts_section(*, data) -> t.Analysts:
    out = _analysts(data)
    per_analyst = tuple(t.AnalystVsGold(**row) for row in out.pop("per_analyst"))
    pairwise = tuple(t.AnalystPair(**row) for row in out.pop("pairwise"))
    return t.Analysts(**{**out, "per_analyst": per_analyst, "pairwise": pairwise})


def _judge_run(*, data, judge, fact_links, analysts, progress) -> t.JudgeRun | None:
    if judge is None:
        return None
    return judge_run(
        data=data,
        judge=judge,
        links=fact_links.links,
        human_kappa=analysts.human_human_kappa,
        progress=progress,
    )


def _backend_blocks(*, data, judge, judge_run) -> t.BackendBlocks:
    """What only a backend of its kind has (grounding bits: issue 18)."""
    block = backend_report_block(judge.backend) if judge_run is not None else None
    if block is None:
        return t.BackendBlocks()
    key, build = block
    newest = judge_run.blocks[0]
    built = build(
        data=data, judge=judge, model=newest["model"], prompt_version=newest["prompt_version"]
    )
    return t.BackendBlocks({key: built})


def _judged(run: t.JudgeRun | None):
    return run.judged if run is not None else None


def _ground_truth(*, project, data, judge_run) -> t.Block | None:
    """Only where a claim has a ground truth: older reports unchanged."""
    truth = ground_truth_block(project=project, data=data, judged=_judged(judge_run))
    return t.Block(truth) if truth is not None else None


def _design(*, data, rates, coverage, judge_audit) -> t.Design:
    figures = {
        "faithfulness": rates.faithfulness,
        "hallucination_rate": rates.hallucination_rate,
        "coverage": coverage.figure,
        "judge": judge_audit.judge,
    }
    out = design_section(data, figures, estimators.design_labels())
    return t.Design(
        **{
            **out,
            "strata": tuple(out["strata"]),
            "outside_queue": t.OutsideQueue(**out["outside_queue"]),
            "design_effects": tuple(out["design_effects"]),
        }
    )


def _method(*, rates, abstention, coverage, citation_accuracy, judge_run, design):
    return method_section(
        rates=rates,
        abstention=abstention,
        coverage=coverage,
        citation_accuracy=citation_accuracy,
        judge_methods=judge_method_strings(judge_run),
        design=design,
    )


def _active_audit(*, project, data, rates, method, judge_audit, judge_run) -> t.Block | None:
    figures = {
        "judge": judge_audit.judge,
        "faithfulness": rates.faithfulness,
        "method": {"faithfulness": method.faithfulness},
    }
    block = active_audit_block(
        project=project, data=data, figures=figures, judged=_judged(judge_run)
    )
    return t.Block(block) if block is not None else None


# ------------------------------------------------------------------------------------------
# the declaration: build order (needs before), then the JSON's order

INPUTS = (
    "project",
    "judge",
    "data",
    "progress",
    "computed_at",
    "labels_at_compute",
    "system",
    "systems",
    "all_systems",
)
_HEADER_NEEDS = ("project", "computed_at", "labels_at_compute", "system", "systems")
SECTIONS: tuple[Section, ...] = (
    Section("header", _header, (*_HEADER_NEEDS, "all_systems"), spread=True, type=t.Header),
    Section(
        "rates",
        _rates,
        ("data",),
        spread=True,
        stage=(0.4, "computing project rates"),
        type=t.ProjectRates,
    ),
    Section(
        "abstention",
        lambda data: t.Abstention(**_abstention(data.answers)),
        ("data",),
        key="abstention",
        type=t.Abstention,
    ),
    Section("fact_links", _fact_links_section, ("data",)),
    Section(
        "coverage",
        _coverage_section,
        ("data", "fact_links", "rates"),
        key="coverage",
        type=t.Coverage,
    ),
    Section(
        "citations",
        lambda project, judge: selectors.citation_columns(project=project, judge=judge),
        ("project", "judge"),
    ),
    Section(
        "citation_accuracy",
        lambda data, citations: t.Citation(_citation(data, citations, _all_claims(data))),
        ("data", "citations"),
        key="citation_accuracy",
        type=t.Citation,
    ),
    Section(
        "self_knowledge",
        lambda data: t.SelfKnowledgeSection(_self_knowledge(data, _all_claims(data))),
        ("data",),
        key="self_knowledge",
        type=t.SelfKnowledgeSection,
    ),
    Section(
        "by_risk_category",
        lambda data, fact_links, citations: t.Groups(
            _by_risk_category(data, fact_links.grounded, citations)
        ),
        ("data", "fact_links", "citations"),
        key="by_risk_category",
        stage=(0.5, "by risk category and claim tag"),
        type=t.Groups,
    ),
    Section(
        "by_tag",
        lambda data, fact_links, citations: t.Groups(_by_tag(data, fact_links.grounded, citations)),
        ("data", "fact_links", "citations"),
        key="by_tag",
        type=t.Groups,
    ),
    Section(
        "analysts",
        _analysts_section,
        ("data",),
        key="analysts",
        stage=(0.58, "inter-analyst agreement"),
        type=t.Analysts,
    ),
    Section("judge_run", _judge_run, ("data", "judge", "fact_links", "analysts", "progress")),
    Section("judge_audit", judge_audits_section, ("judge_run",), spread=True, type=t.JudgeAudits),
    Section(
        "backend_blocks",
        _backend_blocks,
        ("data", "judge", "judge_run"),
        spread=True,
        type=t.BackendBlocks,
    ),
    Section(
        "ground_truth",
        _ground_truth,
        ("project", "data", "judge_run"),
        key="ground_truth",
        optional=True,
        type=t.Block,
    ),
    Section(
        "guidelines",
        guidelines_section,
        ("project", "data", "judge_run"),
        key="guidelines",
        optional=True,
        type=t.Guidelines,
    ),
    Section(
        "design",
        _design,
        ("data", "rates", "coverage", "judge_audit"),
        key="design",
        type=t.Design,
    ),
    Section(
        "method",
        _method,
        ("rates", "abstention", "coverage", "citation_accuracy", "judge_run", "design"),
        key="method",
        type=t.MethodStrings,
    ),
    Section(
        "active_audit",
        _active_audit,
        ("project", "data", "rates", "method", "judge_audit", "judge_run"),
        key="active_audit",
        optional=True,
        type=t.Block,
    ),
)
LAYOUT = (
    "header",
    "rates",
    "abstention",
    "coverage",
    "citation_accuracy",
    "self_knowledge",
    "by_risk_category",
    "by_tag",
    "analysts",
    "guidelines",
    "method",
    "judge_audit",
    "backend_blocks",
    "ground_truth",
    "design",
    "active_audit",
)


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
    inputs = {
        "project": project,
        "judge": judge,
        "data": _Data(project=project, progress=progress, system=system),
        "progress": progress,
        "computed_at": timezone.now().isoformat(),
        "labels_at_compute": labels_at_compute,
        "system": system,
        "systems": systems,
        "all_systems": all_systems,
    }
    results = sections_build(SECTIONS, inputs)
    progress(0.98, "saving")
    run = results["judge_run"]
    crc_inputs = list(run.crc_inputs) if run is not None else []
    return Report(sections_serialise(SECTIONS, LAYOUT, results), json_safe(crc_inputs))


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


def _system_entry(system: System) -> t.SystemEntry:
    return t.SystemEntry(name=system.name, version=system.version, metadata=system.metadata)


def report_public(report: dict) -> dict:
    """The report as exported: any private key left out (a snapshot stored before the CRC
    inputs had their own column held them in the report)."""
    return {key: value for key, value in report.items() if not key.startswith("_")}

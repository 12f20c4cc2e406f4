"""python manage.py compare --project P --a SYS --b SYS [--judge NAME] [--format json|text]
[--fail-if-worse [--margin 0.02]]

B − A on the questions both systems answered, paired by question (`metrics.services.compare`).
With --fail-if-worse the exit status is 1 when B is worse than A with 95% confidence (the upper
end of B − A's faithfulness interval is below −margin), 0 otherwise: a pipeline's gate.
"""

import json
import math

from django.core.management.base import BaseCommand, CommandError

from metrics.management.commands.report import project_and_judge, write_output
from metrics.services.compare import (
    RATES,
    SystemNotFound,
    compare_gate,
    system_resolve,
    systems_compare,
)


def _points(value) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{100 * value:+.1f}"


def _interval(block: dict | None) -> str:
    if not block or block.get("value") is None:
        return "n/a"
    low, high = block["ci"]
    return f"{_points(block['value'])} [{_points(low)}, {_points(high)}]"


def _share(block: dict) -> str:
    if block.get("value") is None:
        return "n/a"
    low, high = block["ci"]
    ends = "n/a" if low is None or high is None else f"[{100 * low:.1f}, {100 * high:.1f}]"
    return f"{100 * block['value']:.1f}% {ends}"


def compare_text(result: dict) -> str:
    """The comparison as a terminal reads it: the finding, then a table of B − A in points."""
    lines = [result["finding"], ""]
    lines.append(
        f"A = {result['a']['label']}, B = {result['b']['label']}; "
        f"{result['shared_questions']} shared questions; judge: {result['judge'] or 'none'}"
    )
    lines.append(f"{'B − A, points':<38} {'headline':<26} {'gold only':<26} {'PPI++':<26}")
    for rate in RATES:
        block = result["rates"][rate.key]
        lines.append(
            f"{rate.title:<38} {_interval(block['headline']):<26} "
            f"{_interval(block['gold_only']):<26} {_interval(block['ppi']):<26}"
        )
    lines.append("")
    lines.append("By risk category (faithfulness):")
    for row in result["by_risk_category"]:
        lines.append(
            f"  {row['risk_category']:<16} {row['questions']:>5} questions  "
            f"{_interval(row['headline'])}"
        )
    audit = result.get("judge_by_system")
    if audit:
        lines.append("")
        lines.append("The judge on each system (sensitivity, specificity):")
        for row in audit["per_system"]:
            se, sp = row["sensitivity"], row["specificity"]
            lines.append(
                f"  {row['system']:<24} se {se['successes']}/{se['n']}, "
                f"sp {sp['successes']}/{sp['n']}"
            )
        lines.append("  " + audit["equality"])
        lines.extend("  " + warning for warning in audit["self_preference"])
    pairwise = result.get("pairwise")
    if pairwise:
        lines.append("")
        lines.append("Pairwise judge, both orders:")
        lines.append("  " + pairwise["finding"])
        lines.append("  Method: " + pairwise["method"])
    human = result.get("pairwise_human")
    if human:
        lines.append("")
        lines.append("Pairwise, analysts:")
        lines.append("  " + human["finding"])
        agreement = human.get("agreement")
        if agreement:
            kappa = agreement["kappa"]
            lines.append(
                f"  agreement with the judge {_share(agreement['share'])} of "
                f"{agreement['n']} marks; Cohen's kappa "
                f"{'n/a' if kappa is None else f'{kappa:.2f}'}"
            )
        lines.append("  Method: " + human["method"])
    worse = [row for row in result["worst_questions"] if row["delta"] < 0]
    lines.append("")
    lines.append(f"Questions B got worse on: {len(worse)}")
    for row in worse[:10]:
        lines.append(f"  {_points(row['delta'])}  {row['question'][:90]}")
    lines.append("")
    lines.append("Method: " + result["method"])
    lines.append("Headline: " + result["rates"]["faithfulness"]["headline"]["reason"])
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = (
        "Compare two systems of a project on the questions both answered (paired by question): "
        "B − A in faithfulness, contradictions, unsupported answers and abstentions."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--a", required=True, help="system A: NAME or NAME@VERSION")
        parser.add_argument("--b", required=True, help="system B: NAME or NAME@VERSION")
        parser.add_argument("--judge", help="judge name: adds PPI++ from its verdicts")
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--output", help="file to write; default standard output")
        parser.add_argument(
            "--fail-if-worse",
            action="store_true",
            help="exit 1 when B is less faithful than A with 95%% confidence (beyond --margin)",
        )
        parser.add_argument(
            "--margin",
            type=float,
            default=0.02,
            help="how much worse B may be before the gate fails (a proportion; default 0.02)",
        )

    def handle(self, *args, **opts):
        if not 0 <= opts["margin"] < 1:
            raise CommandError("--margin is a proportion between 0 and 1, e.g. 0.02", returncode=2)
        project, judge = project_and_judge(opts["project"], opts["judge"])
        try:
            a = system_resolve(project=project, ref=opts["a"])
            b = system_resolve(project=project, ref=opts["b"])
        except SystemNotFound as error:
            raise CommandError(str(error), returncode=2) from error
        if a.pk == b.pk:
            raise CommandError("--a and --b name the same system", returncode=2)
        result = systems_compare(project=project, a=a, b=b, judge=judge)
        if opts["format"] == "json":
            text = json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            text = compare_text(result)
        write_output(text, opts["output"], self.stdout)
        if opts["fail_if_worse"]:
            worse, sentence = compare_gate(result, margin=opts["margin"])
            self.stderr.write(sentence)
            if worse:
                raise SystemExit(1)

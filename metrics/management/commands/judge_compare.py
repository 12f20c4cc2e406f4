import json

from django.core.management.base import BaseCommand

from metrics.management.commands.report import project_and_judge, write_output
from metrics.services.judge_compare import judge_compare


def _fmt(block: dict) -> str:
    value, ci = block.get("value"), block.get("ci") or (None, None)
    if value is None:
        return "n/a"
    lo, hi = ci
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{value:.3f}"


def _abstain_line(block: dict) -> str:
    parts = []
    for side in ("a", "b"):
        v = block[side]
        if v["threshold"] is None:
            parts.append(f"{v['version']} abstains on every claim ({v['says']})")
            continue
        if v["error"]["value"] is None:
            parts.append(f"{v['version']} decides no held-out gold claim ({v['says']})")
            continue
        parts.append(
            f"{v['version']} decides at confidence ≥ {v['threshold']:.3f}, coverage "
            f"{_fmt(v['coverage'])}, error {v['error']['value']:.3f} (bound "
            f"{v['error']['upper']:.3f}): {v['says']}"
        )
    return "  abstains: " + "; ".join(parts)


def comparison_text(out: dict) -> str:
    """The comparison as a few lines for a terminal."""
    lines = [
        f"{out['b']['name']} vs {out['a']['name']} on {out['claims']} claims in "
        f"{out['answers']} answers of {out['scope']}"
    ]
    for side in ("a", "b"):
        block = out[side]
        lines.append(
            f"  {block['version']}: sensitivity {_fmt(block['sensitivity'])}, specificity "
            f"{_fmt(block['specificity'])}, agreement {_fmt(block['agreement'])}, κ "
            f"{_fmt(block['kappa'])}; break-even: {block['break_even']['says']}"
        )
    for key, diff in out["differences"].items():
        b, c = diff["discordant"]
        lines.append(
            f"  {key} difference {_fmt(diff)} (unpaired {_fmt({**diff, 'ci': diff['unpaired_ci']})}); "
            f"McNemar exact p = {diff['p_mcnemar']:.3g} ({b} vs {c} discordant)"
            if diff["value"] is not None
            else f"  {key} difference: n/a"
        )
    if "abstain" in out:
        lines.append(_abstain_line(out["abstain"]))
    lines.append(out["recommendation"])
    lines.append("Method: " + out["method"])
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = (
        "Compare two judge versions on the project's held-out gold: each version's "
        "sensitivity, specificity, agreement and kappa, the paired differences with their "
        "intervals and McNemar's exact test, the PPI break-even, and the recommendation."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--a", required=True, help="the baseline judge version's name")
        parser.add_argument("--b", required=True, help="the new judge version's name")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument("--output", help="file to write; default standard output")

    def handle(self, *args, **opts):
        project, a = project_and_judge(opts["project"], opts["a"])
        _, b = project_and_judge(opts["project"], opts["b"])
        out = judge_compare(project=project, a=a, b=b)
        if opts["format"] == "json":
            text = json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            text = comparison_text(out)
        write_output(text, opts["output"], self.stdout)

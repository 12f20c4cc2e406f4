import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from metrics import selectors
from metrics.services import report_compute, report_public
from metrics.services.compare import SystemNotFound, system_resolve
from metrics.services.gate import GATE_METRICS, GATE_ON, GateError, gate_check, gate_validate


def project_and_judge(slug: str, judge_name: str | None):
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"no project with slug {slug!r}")
    judge = None
    if judge_name:
        judge = selectors.judge_get_by_name(project=project, name=judge_name)
        if judge is None:
            names = ", ".join(
                selectors.judges_for_project(project=project).values_list("name", flat=True)
            )
            raise CommandError(
                f"project {slug!r} has no judge named {judge_name!r} (judges: {names or 'none'})"
            )
    return project, judge


def write_output(text: str, path: str | None, stdout) -> None:
    """Write to `path` in one go (nothing half-written on error), or to stdout."""
    if not path:
        stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error.strerror}") from None


def system_option(project, ref: str | None):
    """(system, all_systems) of a `--system` option: NAME, NAME@VERSION, or "all" (every
    system's answers pooled); (None, False) without one. CommandError naming the systems."""
    if not ref:
        return None, False
    if ref.strip() == "all":
        return None, True

    try:
        return system_resolve(project=project, ref=ref), False
    except SystemNotFound as error:
        raise CommandError(str(error)) from error


SYSTEM_HELP = (
    "NAME or NAME@VERSION: that system's answers only (a project of two systems or more is "
    "reported per system, by default its first); all: every system's answers pooled"
)


class Command(BaseCommand):
    help = "Compute a project's report now (gold rates, and a judge's audit with --judge) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--judge", help="judge name: adds its audit (every instrument)")
        parser.add_argument("--system", help=SYSTEM_HELP)
        parser.add_argument("--format", choices=["json"], default="json")
        parser.add_argument("--output", help="file to write; default standard output")
        parser.add_argument(
            "--fail-under",
            type=float,
            help="exit with status 1 if the figure (--metric, judged --on its interval's lower "
            "end by default) is below this; the gate's verdict goes to standard error",
        )
        parser.add_argument("--metric", choices=GATE_METRICS, default="faithfulness")
        parser.add_argument("--on", choices=GATE_ON, default="lower")

    def handle(self, *args, **opts):
        if opts["fail_under"] is not None:
            try:  # before the report is computed: `--fail-under nan` is refused at once
                gate_validate(metric=opts["metric"], minimum=opts["fail_under"], on=opts["on"])
            except GateError as error:
                raise CommandError(str(error)) from None
        project, judge = project_and_judge(opts["project"], opts["judge"])
        system, all_systems = system_option(project, opts.get("system"))

        def progress(fraction: float, stage: str) -> None:
            sys.stderr.write(f"\r{100 * fraction:5.1f}%  {stage[:60]:<60}")
            sys.stderr.flush()

        report = report_public(
            report_compute(
                project=project,
                judge=judge,
                progress=progress,
                system=system,
                all_systems=all_systems,
            )
        )
        sys.stderr.write("\n")
        text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        write_output(text, opts["output"], self.stdout)
        if opts["output"]:
            self.stderr.write(f"report of {project.slug} written to {opts['output']}")
        if opts["fail_under"] is not None:
            try:
                gate = gate_check(
                    report, metric=opts["metric"], minimum=opts["fail_under"], on=opts["on"]
                )
            except GateError as error:
                raise CommandError(str(error)) from None
            verdict = "PASS" if gate["pass"] else "FAIL"
            self.stderr.write(f"gate {verdict}: {opts['metric']} {gate['reason']}")
            if not gate["pass"]:
                sys.exit(1)

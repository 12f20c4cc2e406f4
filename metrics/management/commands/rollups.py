import json

from django.core.management.base import BaseCommand, CommandError

from metrics.management.commands.report import SYSTEM_HELP, project_and_judge, system_option
from metrics.services.rollup_headline import newest_verify_run, plain
from metrics.services.rollups import (
    CONFIDENCE_DIGITS,
    calibration_from_rollups,
    headline_from_rollups,
    rollups_confidences,
    rollups_read,
)


class Command(BaseCommand):
    help = (
        "The headline of a project too large for the full report, from its rollups (issue 30): "
        "faithfulness pooled and per stratum, the judge's design PPI++ and its calibration (ECE, "
        "the frontier with its fact coverage, CRC at α = 0.10, from the gold rows, their facts "
        "and quotes, and its confidences counted in "
        f"bins of 1e-{CONFIDENCE_DIGITS}; --exact-confidences: by distinct value), as JSON. On "
        "PostgreSQL a read re-aggregates only the answers written since the last one "
        "(--fresh: every claim again, the reference). manage.py rollups --project SLUG [--judge NAME] "
        "[--system NAME@VERSION] [--fresh] [--exact-confidences]"
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--judge", help="judge name: its newest finished verify run")
        parser.add_argument("--system", help=SYSTEM_HELP.split("; all")[0])
        parser.add_argument("--fresh", action="store_true", help="aggregate every claim again")
        parser.add_argument(
            "--exact-confidences",
            action="store_true",
            help="count the judge's confidences by distinct value, not in bins",
        )

    def handle(self, *args, project, judge, system, fresh, exact_confidences, **options):
        project, judge = project_and_judge(project, judge)
        chosen, pooled = system_option(project, system)
        if pooled:
            raise CommandError("--system all: the rollups are per system or the whole project")
        run = newest_verify_run(judge)
        if judge is not None and run is None:
            raise CommandError(f"judge {judge.name!r} has no finished verify run")
        try:
            rollups = rollups_read(project=project, run=run, system=chosen, incremental=not fresh)
        except ValueError as error:
            raise CommandError(str(error)) from None
        out = {
            "project": project.slug,
            "run_id": rollups.run_id,
            "rows_read": rollups.rows_read,
            "answers_refreshed": rollups.answers_refreshed,
            **headline_from_rollups(rollups),
        }
        if run is not None:
            digits = None if exact_confidences else CONFIDENCE_DIGITS
            confidences = rollups_confidences(
                project=project, run=run, system=chosen, digits=digits, incremental=not fresh
            )
            out["confidence_rows_read"] = int(confidences[0].size)
            out["calibration"] = calibration_from_rollups(rollups, confidences)
        self.stdout.write(json.dumps(plain(out), indent=2, allow_nan=False))

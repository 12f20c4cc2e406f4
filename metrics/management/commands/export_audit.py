import io
import json

from django.core.management.base import BaseCommand, CommandError

from annotate.csv_safe import NeutralCsvWriter
from metrics.management.commands.report import (
    SYSTEM_HELP,
    project_and_judge,
    system_option,
    write_output,
)
from metrics.services import audit_card, audit_card_rows, report_compute
from metrics.services.audit_card import AUDIT_CARD_CSV_HEADER


class Command(BaseCommand):
    help = (
        "Export a judge's audit card (sensitivity, specificity, debiased faithfulness, ECE, "
        "CRC cut, method) as JSON or CSV, computed now from the database."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--judge", required=True, help="judge name")
        parser.add_argument("--format", choices=["json", "csv"], default="json")
        parser.add_argument(
            "--instrument",
            type=int,
            default=0,
            help="which instrument (model × prompt version), 0 = the newest",
        )
        parser.add_argument("--system", help=SYSTEM_HELP)
        parser.add_argument("--output", help="file to write; default standard output")

    def handle(self, *args, **opts):
        project, judge = project_and_judge(opts["project"], opts["judge"])
        system, all_systems = system_option(project, opts.get("system"))
        report = report_compute(
            project=project, judge=judge, system=system, all_systems=all_systems
        )
        instruments = report.get("instruments") or [report["judge"]]
        if not 0 <= opts["instrument"] < len(instruments):
            raise CommandError(
                f"--instrument must be between 0 and {len(instruments) - 1} "
                f"({len(instruments)} instrument(s) of {judge.name})"
            )
        card = audit_card(report=report, instrument=opts["instrument"])
        if opts["format"] == "csv":
            buffer = io.StringIO()
            writer = NeutralCsvWriter(buffer)
            writer.writerow(AUDIT_CARD_CSV_HEADER)
            writer.writerows(audit_card_rows(card))
            text = buffer.getvalue()
        else:
            text = json.dumps(card, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        write_output(text, opts["output"], self.stdout)

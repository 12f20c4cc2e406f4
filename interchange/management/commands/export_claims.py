"""python manage.py export_claims --project SLUG --format csv|jsonl [--output PATH]"""

import sys

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from interchange.services.exports import FORMATS, claims_export


class Command(BaseCommand):
    help = (
        "Export every claim of a project with its labels and quotes, gold and judge verdicts "
        "(csv: one row per claim; jsonl: one answer per line, re-importable)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--format", choices=FORMATS, required=True)
        parser.add_argument("--output", help="File to write (default: standard output).")

    def handle(self, *args, project, format, output, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"There is no project {project!r}.")
        if output:
            with open(output, "w", encoding="utf-8", newline="") as handle:
                claims_export(project=found, format=format, out=handle)
            self.stderr.write(f"Wrote {output}")
        else:
            claims_export(project=found, format=format, out=self.stdout._out or sys.stdout)

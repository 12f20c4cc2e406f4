"""python manage.py export_testset --project SLUG --test-set NAME [--set-version N]
--format jsonl|ragas|deepeval|card|card-md [--output PATH]"""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from testsets.models import TestSet
from testsets.services.interchange import FORMATS, set_export
from testsets.services.review import set_card, set_card_markdown


class Command(BaseCommand):
    help = (
        "Export a test set's items (jsonl: re-importable; ragas: RAGAS golden samples; "
        "deepeval: DeepEval goldens) or its card (card: JSON, card-md: Markdown)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--test-set", required=True, help="The test set's name.")
        parser.add_argument(
            "--set-version", type=int, dest="set_version", help="Its version (default: latest)."
        )
        parser.add_argument("--format", choices=[*FORMATS, "card", "card-md"], default="jsonl")
        parser.add_argument("--output", help="File to write (default: standard output).")

    def handle(self, *args, project, test_set, set_version, format, output, **options):
        version = set_version
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"There is no project {project!r}.")
        sets = TestSet.objects.filter(project=found, name=test_set).order_by("-version")
        if version is not None:
            sets = sets.filter(version=version)
        chosen = sets.first()
        if chosen is None:
            shown = f"{test_set!r}" + (f" version {version}" if version is not None else "")
            raise CommandError(f"Project {project!r} has no test set {shown}.")
        handle = open(output, "w", encoding="utf-8") if output else None  # noqa: SIM115
        out = handle or self.stdout._out or sys.stdout
        try:
            if format == "card":
                out.write(json.dumps(set_card(test_set=chosen), indent=2) + "\n")
            elif format == "card-md":
                out.write(set_card_markdown(set_card(test_set=chosen)))
            else:
                count = set_export(test_set=chosen, format=format, out=out)
                self.stderr.write(f"Exported {count} item(s) of {chosen}.")
        finally:
            if handle:
                handle.close()

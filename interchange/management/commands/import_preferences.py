"""python manage.py import_preferences PATH --project SLUG [--format auto|native|ragchecker]
[--aspect overall_label|correctness_label|completeness_label]"""

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from interchange.importers.issues import ImportFailed
from interchange.importers.preferences import FORMATS, RAGCHECKER_ASPECTS
from interchange.services.preference_imports import preferences_import


class Command(BaseCommand):
    help = (
        "Import people's pairwise preferences between two systems' answers (native JSON Lines "
        "or CSV: question_id, system_a, system_b, annotator, preference, strength; or "
        "RAGChecker's human-study JSON). The answers must already be in the project. A file "
        "with any problem imports nothing; importing a file again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The file to import (.jsonl, .json or .csv).")
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument(
            "--aspect",
            choices=RAGCHECKER_ASPECTS,
            default="overall_label",
            help="Which of a RAGChecker record's −2..2 grades to read (default overall_label).",
        )

    def handle(self, *args, path, project, format, aspect, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"There is no project {project!r}.")
        try:
            result = preferences_import(
                project=found, path_or_file=path, format=format, aspect=aspect
            )
        except ImportFailed as failed:
            raise CommandError(str(failed)) from failed
        except FileNotFoundError as error:
            raise CommandError(f"No such file: {path}") from error
        self.stdout.write(self.style.SUCCESS(f"Imported {result}"))

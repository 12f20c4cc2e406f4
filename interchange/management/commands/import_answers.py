"""python manage.py import_answers PATH --project SLUG [--format auto|native|ragas|ragchecker]
[--create --name NAME] [--system NAME[@VERSION]]"""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Project
from interchange.importers import FORMATS
from interchange.importers.systems import system_from_option
from interchange.services.imports import ImportFailed, annotator_map_parse, answers_import


class Command(BaseCommand):
    help = (
        "Import answers (with their pile, and optionally claims, labels, gold and judge "
        "verdicts) from a JSON Lines, JSON or CSV file. A file with any problem imports nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The file to import (.jsonl, .json or .csv).")
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument(
            "--create", action="store_true", help="Create the project if it does not exist."
        )
        parser.add_argument("--name", help="The new project's name (with --create).")
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="NAME=USERNAME",
            help="File labels under NAME to this member's account (repeatable); unmapped "
            'names are kept as imported annotators ("NAME (imported)").',
        )
        parser.add_argument(
            "--system",
            metavar="NAME[@VERSION]",
            help="The system (pipeline version) that produced the file's answers, for those "
            "that name none; a RAGAS or RAGChecker id is then the question key and the "
            "answer is id'd \"NAME:<id>\", so two systems' files of the same questions can be "
            "compared (manage.py compare).",
        )

    def handle(self, *args, path, project, format, create, name, map, system, **options):
        slug = project
        try:
            system = system_from_option(system) if system else None
        except ValueError as error:
            raise CommandError(str(error)) from error
        try:
            with transaction.atomic():
                project = Project.objects.filter(slug=slug).first()
                if project is None:
                    if not create:
                        raise CommandError(
                            f"There is no project {slug!r}; pass --create --name NAME to make it."
                        )
                    project = Project.objects.create(slug=slug, name=name or slug)
                    self.stdout.write(f"Created project {slug!r}.")
                result = answers_import(
                    project=project,
                    path_or_file=path,
                    format=format,
                    progress=self._progress,
                    annotator_map=annotator_map_parse("\n".join(map)),
                    system=system,
                )
        except ImportFailed as failed:
            raise CommandError(str(failed)) from failed
        except FileNotFoundError as error:
            raise CommandError(f"No such file: {path}") from error
        self.stdout.write(self.style.SUCCESS(f"Imported {result}"))

    def _progress(self, done: int) -> None:
        self.stderr.write(f"  {done} answers read and checked…")

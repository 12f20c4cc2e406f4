"""python manage.py import_answers PATH --project SLUG [--format auto|native|ragas|ragchecker]
[--create --name NAME [--no-quote-required] [--analysts-per-claim N]
[--double-labelled-share F]] [--system NAME[@VERSION]]"""

import argparse

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Project
from interchange.importers import FORMATS
from interchange.importers.systems import system_from_option
from interchange.services.imports import ImportFailed, annotator_map_parse, answers_import

# The settings a new project can take from the command line, with their option names.
_SETTINGS = {
    "quote_required": "--quote-required/--no-quote-required",
    "analysts_per_claim": "--analysts-per-claim",
    "double_labelled_share": "--double-labelled-share",
}


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
            "--quote-required",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="The new project's labels SUPPORTED/CONTRADICTED need an evidence quote "
            "(default yes; --no-quote-required for third-party gold without quotes). "
            "With --create only.",
        )
        parser.add_argument(
            "--analysts-per-claim",
            type=int,
            default=None,
            metavar="N",
            help="The new project's labels per claim (default 1). With --create only.",
        )
        parser.add_argument(
            "--double-labelled-share",
            type=float,
            default=None,
            metavar="F",
            help="The new project's share of claims (0–1) labelled once more, for "
            "inter-analyst agreement (default 0). With --create only.",
        )
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
        settings = {key: options[key] for key in _SETTINGS if options.get(key) is not None}
        created = False
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
                    project = self._project_create(slug, name or slug, settings)
                    created = True
                elif settings:
                    options_given = ", ".join(_SETTINGS[key] for key in settings)
                    raise CommandError(
                        f"Project {slug!r} exists: {options_given} only set up a project "
                        "created by this import (change an existing one on its settings page)."
                    )
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
        # Only now is the project there for good: a rolled-back import created nothing.
        if created:
            self.stdout.write(f"Created project {slug!r}.")
        for warning in result.warnings:
            self.stderr.write(f"Warning: {warning}")
        if result.warnings_total > len(result.warnings):
            self.stderr.write(
                f"Warning: {result.warnings_total - len(result.warnings)} more unknown "
                "field(s) not listed."
            )
        self.stdout.write(self.style.SUCCESS(f"Imported {result}"))

    def _project_create(self, slug: str, name: str, settings: dict) -> Project:
        analysts = settings.get("analysts_per_claim")
        if analysts is not None and not 1 <= analysts <= 32767:
            raise CommandError(f"--analysts-per-claim must be 1 or more, got {analysts}.")
        share = settings.get("double_labelled_share")
        if share is not None and not 0.0 <= share <= 1.0:
            raise CommandError(f"--double-labelled-share must be between 0 and 1, got {share}.")
        project = Project(slug=slug, name=name, **settings)
        try:
            project.full_clean()
        except ValidationError as error:
            problems = "; ".join(
                f"{_SETTINGS.get(key, key)}: {' '.join(messages)}"
                for key, messages in error.message_dict.items()
            )
            raise CommandError(f"Cannot create project {slug!r}: {problems}") from error
        project.save()
        return project

    def _progress(self, done: int) -> None:
        self.stderr.write(f"  {done} answers read and checked…")

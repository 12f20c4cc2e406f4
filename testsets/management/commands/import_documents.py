"""python manage.py import_documents SLUG FILE [FILE ...] [--replace]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from testsets.services.documents import DocumentImportError, documents_import


class Command(BaseCommand):
    help = (
        "Import documents into a project's knowledge base (.txt, .md, .html, or .jsonl of "
        '{"id", "title", "text", "language"}). Any problem in any file imports nothing.'
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument("files", nargs="+", help="The files to import.")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace the text of a document stored under the same id with another text.",
        )

    def handle(self, *args, slug, files, replace, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project with the slug {slug!r}")
        loaded = []
        for name in files:
            path = Path(name)
            try:
                loaded.append((path.name, path.read_bytes()))
            except OSError as exc:
                raise CommandError(f"{name}: cannot read the file ({exc.strerror})") from None
        try:
            result = documents_import(project=project, files=loaded, replace=replace)
        except DocumentImportError as exc:
            lines = "\n".join(f"  {issue}" for issue in exc.issues)
            raise CommandError(f"nothing was imported:\n{lines}") from None
        self.stdout.write(
            f"{len(result.created)} documents added, {len(result.replaced)} replaced, "
            f"{len(result.unchanged)} unchanged, {len(result.same_text)} not stored again "
            f"(same text as a stored document); {result.passages} passages written."
        )

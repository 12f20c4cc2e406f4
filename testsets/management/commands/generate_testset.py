"""python manage.py generate_testset SLUG --name NAME [--endpoint E [--model M]]
[--per-document K]"""

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from testsets.limits import generation_limits
from testsets.models import GenerationJob
from testsets.services.generate import GenerationRefused, generation_estimate, generation_start


class Command(BaseCommand):
    help = (
        "Generate a draft test set from the project's documents: with the offline rule "
        "baseline, or with --endpoint an LLM on a declared endpoint. Every item is verified "
        "before it is kept; the dropped ones are counted by reason."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument("--name", required=True, help="The test set's name (a slug).")
        parser.add_argument("--endpoint", default="", help="A declared LLM endpoint's name.")
        parser.add_argument("--model", default="", help="The model (default: its first).")
        parser.add_argument("--per-document", type=int, default=None, metavar="K")

    def handle(self, *args, slug, name, endpoint, model, per_document, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project with the slug {slug!r}")
        kind = GenerationJob.Kind.LLM if endpoint else GenerationJob.Kind.OFFLINE
        try:
            estimate = generation_estimate(
                project=project,
                kind=kind,
                endpoint_name=endpoint,
                model=model,
                per_document=per_document or generation_limits().per_document,
            )
            self.stdout.write(
                f"{estimate['documents']} documents, {estimate['calls']} calls, about "
                f"{estimate['tokens_in']:,} prompt and {estimate['tokens_out']:,} completion "
                "tokens" + (" (offline baseline: no LLM)" if kind == "offline" else "")
            )
            job = generation_start(
                project=project,
                user=None,
                name=name,
                kind=kind,
                endpoint_name=endpoint,
                model=model,
                per_document=per_document,
            )
        except GenerationRefused as exc:
            raise CommandError(str(exc)) from None
        counts = job.counts
        dropped = ", ".join(f"{r} {n}" for r, n in counts["dropped"].items() if n) or "none"
        self.stdout.write(
            f"test set {job.test_set} (id {job.test_set_id}): {job.get_status_display()}, "
            f"{job.done}/{job.total} documents; {counts['generated']} generated, "
            f"{counts['kept']} kept; dropped: {dropped}"
        )
        if job.status == GenerationJob.Status.FAILED:
            raise CommandError(job.error)

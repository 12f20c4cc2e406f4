from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from annotate.services.design import DesignError, claims_design_store
from metrics.services.active_design import active_design_apply


class Command(BaseCommand):
    help = (
        "Put a project's labelling queue under the active or stratified design from a finished "
        "judge run (issue 14), or back to uniform: manage.py active_design SLUG --run ID "
        "--budget N [--design active|stratified|uniform]."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--run", type=int, help="the finished verify run's id")
        parser.add_argument("--budget", type=int, help="labels you plan to spend (sets π)")
        parser.add_argument(
            "--design",
            choices=Project.QueueDesign.values,
            default=Project.QueueDesign.ACTIVE,
        )

    def handle(self, *args, slug, run, budget, design, **options):

        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project with slug {slug!r}")
        try:
            if design == Project.QueueDesign.UNIFORM:
                changed = claims_design_store(project=project, design=design)
            else:
                changed = active_design_apply(
                    project=project, run=run, budget=budget, design=design
                )
        except DesignError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{project.slug}: queue design {design}, {changed} claims re-keyed"
            + (f" (run {run}, budget {budget})" if design != Project.QueueDesign.UNIFORM else "")
            + "\n"
        )

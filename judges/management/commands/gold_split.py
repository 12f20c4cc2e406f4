from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from judges.versions import gold_split_create, gold_split_get


class Command(BaseCommand):
    help = (
        "Split a project's gold once, by answer, into development (for improving a judge: "
        "disagreements, few-shot examples) and held-out (deciding between versions, the "
        "headline of a tuned judge). Without --share, show the split."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--share", type=float, help="held-out share of answers, in (0, 1)")
        parser.add_argument("--seed", type=int, help="seed of the rule (default: drawn)")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        if opts["share"] is None:
            split = gold_split_get(project=project)
        else:
            try:
                split = gold_split_create(
                    project=project, heldout_share=opts["share"], seed=opts["seed"]
                )
            except ValidationError as error:
                raise CommandError("; ".join(error.messages)) from None
        if split is None:
            self.stdout.write(f"Project {project.slug}'s gold is not split.\n")
            return
        self.stdout.write(
            f"Project {project.slug}: {split.heldout_share:.0%} of answers held out by the rule "
            f"{split.rule} with seed {split.seed}.\n"
        )

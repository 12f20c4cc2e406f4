import time

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from judges.models import Judge, JudgeRun
from judges.services import judge_run_start


class Command(BaseCommand):
    help = (
        "Start a judge run. With a broker (CELERY_BROKER_URL) a worker does the work; without "
        "one it runs in this process. --wait prints progress until the run has finished."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--judge", required=True, help="judge name")
        parser.add_argument("--kind", default="verify", choices=JudgeRun.Kind.values)
        parser.add_argument("--claims", default="all", choices=JudgeRun.Scope.values)
        parser.add_argument("--wait", action="store_true")
        parser.add_argument(
            "--poll", type=float, default=1.0, help="seconds between progress lines"
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        judge = Judge.objects.filter(project=project, name=opts["judge"]).first()
        if judge is None:
            raise CommandError(f"no judge named {opts['judge']!r} in {project.slug}")
        run = judge_run_start(judge=judge, kind=opts["kind"], scope=opts["claims"])
        run.refresh_from_db()
        self.stdout.write(f"run {run.pk} of {judge.name}: {run.total} items, status {run.status}")
        if not opts["wait"]:
            return
        live = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
        while True:
            run.refresh_from_db()
            processed = run.done + run.failed + run.unparseable
            self.stdout.write(
                f"  {processed}/{run.total} processed — done {run.done}, failed {run.failed}, "
                f"unparseable {run.unparseable}, status {run.status}"
            )
            if run.status not in live:
                break
            time.sleep(opts["poll"])
        if run.kind == JudgeRun.Kind.CANARY and run.canary_pass_rate is not None:
            self.stdout.write(f"canary pass rate: {run.canary_pass_rate:.1%} NOT_IN_PILE")
        if run.status == JudgeRun.Status.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}")
        self.stdout.write(f"run {run.pk} {run.status}")

import threading
import time
import uuid

from celery import current_app as app
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from annotate.models import Project
from judges.models import Judge, JudgeRun
from judges.runner import run_execute
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
        in_process = bool(app.conf.task_always_eager) and opts["wait"]
        try:
            run = judge_run_start(
                judge=judge, kind=opts["kind"], scope=opts["claims"], enqueue=not in_process
            )
        except ValidationError as exc:  # no usable endpoint, an unknown kind or scope
            raise CommandError(" ".join(exc.messages)) from None
        run.refresh_from_db()
        where = "in this process" if in_process or app.conf.task_always_eager else "on a worker"
        self.stdout.write(f"run {run.pk} of {judge.name}: {run.total} items, {where}")
        if not opts["wait"]:
            self.stdout.write(f"run {run.pk} {run.status}")
            return
        worker = None
        crashed: list[BaseException] = []
        if in_process:
            # No broker: judge in a thread of this process so progress can be printed meanwhile.
            def execute() -> None:
                try:
                    run_execute(run.pk, owner=uuid.uuid4().hex)
                except BaseException as exc:  # reported below; the run stays resumable
                    crashed.append(exc)
                finally:
                    connections.close_all()

            worker = threading.Thread(target=execute, name=f"run-judge-{run.pk}", daemon=True)
            worker.start()
        live = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
        while True:
            # Read before the refresh: whatever a finished thread wrote is then visible.
            thread_alive = worker is not None and worker.is_alive()
            run.refresh_from_db()
            processed = run.done + run.failed + run.unparseable
            self.stdout.write(
                f"  {processed}/{run.total} processed — done {run.done}, failed {run.failed}, "
                f"unparseable {run.unparseable}, status {run.status}"
            )
            if run.status not in live:
                if worker is not None:
                    worker.join()
                break
            if worker is not None and not thread_alive:
                raise CommandError(
                    f"run {run.pk} stopped in this process: {crashed[0] if crashed else 'unknown'}"
                    "; `python manage.py resume_runs` carries it on"
                )
            time.sleep(opts["poll"])
        if run.kind == JudgeRun.Kind.CANARY and run.canary_pass_rate is not None:
            self.stdout.write(f"canary pass rate: {run.canary_pass_rate:.1%} NOT_IN_PILE")
        if run.status == JudgeRun.Status.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}")
        self.stdout.write(f"run {run.pk} {run.status}")

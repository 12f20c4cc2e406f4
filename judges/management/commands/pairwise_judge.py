"""manage.py pairwise_judge <project slug> --a SYS --b SYS --judge NAME [--wait]"""

import time
import uuid

from celery import current_app as app
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project, System
from judges.models import Judge, JudgeRun
from judges.pairwise_runner import pairwise_execute
from judges.services import pairwise_run_start


def _system(project: Project, ref: str, flag: str) -> System:
    name, _, version = ref.strip().partition("@")
    systems = System.objects.filter(project=project, name=name.strip())
    if version:
        systems = systems.filter(version=version.strip())
    found = list(systems[:2])
    if len(found) == 1:
        return found[0]
    known = ", ".join(str(s) for s in System.objects.filter(project=project)) or "none"
    why = "names several versions (write NAME@VERSION)" if found else "names no system"
    raise CommandError(f"{flag} {ref!r} {why}; systems of {project.slug}: {known}")


class Command(BaseCommand):
    help = (
        "Judge the questions two systems both answered, pair by pair, each pair in both orders "
        "(a rerun asks only for what is not stored yet). With a broker a worker does the work; "
        "without one it runs in this process."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument("--a", required=True, help="system A: NAME or NAME@VERSION")
        parser.add_argument("--b", required=True, help="system B: NAME or NAME@VERSION")
        parser.add_argument("--judge", required=True, help="judge name (an OpenAI-compatible one)")
        parser.add_argument("--wait", action="store_true", help="print progress until done")
        parser.add_argument("--poll", type=float, default=1.0)

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        judge = Judge.objects.filter(project=project, name=opts["judge"]).first()
        if judge is None:
            raise CommandError(f"--judge: no judge named {opts['judge']!r} in {project.slug}")
        a = _system(project, opts["a"], "--a")
        b = _system(project, opts["b"], "--b")
        in_process = bool(app.conf.task_always_eager)
        try:
            run = pairwise_run_start(judge=judge, a=a, b=b, enqueue=not in_process)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        where = "in this process" if in_process else "on a worker"
        self.stdout.write(f"pairwise run {run.pk} of {judge.name}: {a} (A) vs {b} (B), {where}")
        if in_process:
            pairwise_execute(run.pk, owner=uuid.uuid4().hex)
        elif opts["wait"]:
            while True:
                run.refresh_from_db()
                self.stdout.write(self._progress(run))
                if run.status not in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
                    break
                time.sleep(opts["poll"])
        run.refresh_from_db()
        self.stdout.write(self._progress(run))
        if run.status == JudgeRun.Status.FAILED:
            raise CommandError(f"pairwise run {run.pk} failed: {run.error}")

    @staticmethod
    def _progress(run: JudgeRun) -> str:
        processed = run.done + run.failed + run.unparseable
        return (
            f"  {processed}/{run.total} asked — done {run.done}, failed {run.failed}, "
            f"unparseable {run.unparseable}, status {run.status}"
        )

"""Split a project's answers into claims in bulk, by rule or through a judge's decompose prompt.

    python manage.py split_claims --project SLUG --method rule|llm [--judge NAME] [--force]

Answers that already have claims are skipped unless --force; with --force, claims with labels
are kept (and flagged for review if the new split does not reproduce them), never deleted.
Each answer is split in its own transaction, so an interrupted run can simply be started again.

By LLM this runs a split job (judges/split_jobs.py) in this process, printing its progress:
the operator's shell may wait on the endpoint; the web never does (it queues the same job).
"""

import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from annotate.models import Answer, Project
from annotate.services.claims import METHODS, ClaimsError, claims_split
from judges.split_jobs import split_job_execute, split_job_start


class Command(BaseCommand):
    help = "Split a project's answers into claims (by rule, or by LLM through a judge)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--method", choices=METHODS, default="rule")
        parser.add_argument("--judge", help="Judge name (its decompose prompt), for --method llm.")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Split answers that already have claims again (labelled claims are kept).",
        )

    def handle(self, *args, project: str, method: str, judge: str | None, force: bool, **opts):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"--project: no project with slug {project!r}.")
        judge_obj = None
        if method == "llm":
            if not judge:
                raise CommandError("--judge: splitting by LLM needs the judge's name.")
            judge_obj = found.judges.filter(name=judge).first()
            if judge_obj is None:
                names = ", ".join(found.judges.values_list("name", flat=True)) or "none"
                raise CommandError(f"--judge: no judge {judge!r} in {project} (judges: {names}).")
            return self._split_by_llm(judge_obj, force=force)

        answers = Answer.objects.filter(project=found).annotate(n_claims=Count("claims"))
        todo = list(answers.order_by("position", "id").values_list("pk", "n_claims"))
        total = len(todo)
        every = 1 if method == "llm" else max(1, total // 20)
        split = skipped = failed = claims = abstentions = 0
        started = time.monotonic()
        self.stdout.write(f"Splitting {total} answers of {found.slug} by {method}.")
        for index, (answer_id, n_claims) in enumerate(todo, start=1):
            if n_claims and not force:
                skipped += 1
            else:
                answer = Answer.objects.get(pk=answer_id)
                try:
                    created = claims_split(answer=answer, method=method, force=force)
                except ClaimsError as error:
                    failed += 1
                    self.stderr.write(f"answer {answer.external_id}: {error}")
                except Exception as error:  # a judge call that failed: report, go on
                    failed += 1
                    self.stderr.write(
                        f"answer {answer.external_id}: {type(error).__name__}: {error}"
                    )
                else:
                    split += 1
                    claims += len(created)
                    abstentions += Answer.objects.filter(
                        pk=answer_id, abstention_suggested=True
                    ).count()
            if index % every == 0 or index == total:
                elapsed = time.monotonic() - started
                self.stdout.write(
                    f"[{index}/{total}] split {split}, skipped {skipped}, failed {failed}; "
                    f"{claims} claims ({elapsed:.1f} s)"
                )
        self.stdout.write(
            self.style.SUCCESS(
                f"Done: {split} answers split into {claims} new claims; {skipped} skipped "
                f"(already split; --force to split again); {abstentions} look like abstentions "
                f"(confirm them on each answer's claims page); {failed} failed."
            )
        )
        if failed:
            raise CommandError(f"{failed} answers could not be split (see above).")

    def _split_by_llm(self, judge, *, force: bool) -> None:
        # The LLM split is the judges side's (annotate knows nothing of judges): this shell
        # command, on the judges floor, is the one place here that reaches for it.
        try:
            job = split_job_start(judge=judge, force=force, enqueue=False)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        started = time.monotonic()
        self.stdout.write(
            f"Splitting {job.total} answers of {judge.project.slug} by LLM with judge "
            f"{judge.name} (split job #{job.pk}; answers with claims skipped unless --force)."
        )

        def progress(job, line: str) -> None:
            elapsed = time.monotonic() - started
            self.stdout.write(f"[{job.processed}/{job.total}] {line} ({elapsed:.1f} s)")

        outcome = split_job_execute(job.pk, progress=progress)
        job.refresh_from_db()
        if outcome == "failed":
            raise CommandError(f"split job #{job.pk} failed: {job.error}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Done: {job.done} answers split into {job.claims_created} new claims; "
                f"{job.failed} failed."
            )
        )
        if job.failed:
            raise CommandError(f"{job.failed} answers could not be split (see above).")

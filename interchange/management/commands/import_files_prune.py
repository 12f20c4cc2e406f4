"""python manage.py import_files_prune [--days 30] [--dry-run]"""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from interchange.services.import_jobs import import_files_prune


class Command(BaseCommand):
    help = (
        "Delete the uploaded import files kept for jobs that failed more than DAYS days ago "
        "(the jobs and their errors stay), and files in MEDIA_ROOT/imports/ that no job refers "
        "to. Files of queued or running jobs are never touched. Run it from cron."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--days", type=float, default=30.0, help="Keep files younger than this (30)."
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="List what would be deleted; delete nothing."
        )

    def handle(self, *args, days, dry_run, **options):
        if days < 0:
            raise CommandError("--days cannot be negative.")
        result = import_files_prune(older_than=timedelta(days=days), dry_run=dry_run)
        for path in result.paths:
            self.stdout.write(f"{'would delete' if dry_run else 'deleted'} {path}")
        verb = "Would free" if dry_run else "Freed"
        self.stdout.write(
            f"{verb} {result.bytes / 1e6:,.1f} MB: {result.jobs} failed job file"
            f"{'s' if result.jobs != 1 else ''} and {result.orphans} file"
            f"{'s' if result.orphans != 1 else ''} no job refers to."
        )

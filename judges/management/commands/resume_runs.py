from django.core.management.base import BaseCommand

from judges.services import judge_runs_resume_stale


class Command(BaseCommand):
    help = (
        "Re-enqueue judge runs whose worker died (no heartbeat for JUDGE_RUN_LEASE_SECONDS). "
        "Safe to run often, e.g. every minute from cron or Celery beat."
    )

    def handle(self, *args, **opts):
        resumed = judge_runs_resume_stale()
        self.stdout.write(
            f"resumed {len(resumed)} runs: {', '.join(map(str, resumed))}"
            if resumed
            else "no stale runs"
        )

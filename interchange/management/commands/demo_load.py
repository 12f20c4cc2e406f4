"""Load the demo project (idempotent) and print how to log in."""

import json
import tempfile

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotate.models import Membership, Project, Role
from interchange.demo import demo_records, demo_records_second_system

DEMO_SLUG = "demo"
DEMO_PASSWORD = "demo-password"
DEMO_USERS = [("lead", Role.OWNER), ("ana", Role.ANALYST), ("ben", Role.ANALYST)]


class Command(BaseCommand):
    help = "Create the demo project with answers, claims, labels and an offline judge run."

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        if project is None:
            project = self._load()
        self.stdout.write(
            self.style.SUCCESS(
                "\nDemo ready at http://127.0.0.1:8000/p/demo/\n"
                f"  lead (owner):  lead / {DEMO_PASSWORD}\n"
                f"  analysts:      ana / {DEMO_PASSWORD}, ben / {DEMO_PASSWORD}\n"
            )
        )

    def _load(self) -> Project:
        from interchange.services.imports import answers_import

        users = {}
        with transaction.atomic():
            project = Project.objects.create(
                slug=DEMO_SLUG,
                name="Demo: critical-information answers",
                description="Refund deadlines, fees, eligibility, dosage, a quarterly filing, "
                "account security, tenancy law and an abstention — marked by two analysts.",
                analysts_per_claim=2,
                queue_seed=2026,
            )
            for username, role in DEMO_USERS:
                user, _ = get_user_model().objects.get_or_create(username=username)
                user.set_password(DEMO_PASSWORD)
                user.save()
                Membership.objects.create(project=project, user=user, role=role)
                users[username] = user
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as handle:
            for record in [*demo_records(), *demo_records_second_system()]:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            # The demo's analysts are members: their labels go to their accounts, not to
            # imported annotators (an owner's mapping, as on the import page).
            result = answers_import(
                project=project,
                path_or_file=handle.name,
                format="native",
                annotator_map={name: name for name in users},
            )
        self.stdout.write(f"Imported {result}")
        self._judge(project, users["lead"])
        return project

    def _judge(self, project: Project, lead) -> None:
        """Run the offline baseline judge and snapshot the report, where those parts exist."""
        try:
            from judges.services import judge_create, judge_run_start
        except ImportError:
            return
        judge = judge_create(project=project, name="baseline", backend="baseline")
        run = judge_run_start(judge=judge, user=lead)
        run.refresh_from_db()
        self.stdout.write(f"Baseline judge: {run.done} claims judged ({run.status})")
        try:
            from metrics.services import snapshot_request
        except ImportError:
            return
        snapshot_request(project=project, judge=judge)

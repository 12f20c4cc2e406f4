"""Load the demo project (idempotent) and print how to log in."""

import json
import tempfile

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotate.models import Membership, Project, Role
from interchange.demo import demo_records, demo_records_second_system
from interchange.services.imports import answers_import
from judges.services import judge_create, judge_run_start
from metrics.services import snapshot_request_every_system

DEMO_SLUG = "demo"
DEMO_PASSWORD = "demo-password"
DEMO_USERS = [("lead", Role.OWNER), ("ana", Role.ANALYST), ("ben", Role.ANALYST)]
PRACTICE_GUIDELINES = """# Marking guidelines

- **SUPPORTED**: a passage of the pile says what the claim says. Quote the sentence that decides.
- **CONTRADICTED**: a passage says otherwise. Quote the sentence that contradicts the claim.
- **NOT_IN_PILE**: no passage decides it, whatever you know yourself. No quote.

A claim with two facts in it: skip it as *not atomic*, so a lead splits it.
"""


PRACTICE_SLUG = "demo-practice"


class Command(BaseCommand):
    help = (
        "Create the demo project with answers, claims, labels and an offline judge run, and a "
        "practice project whose claims the demo's analysts still have to label."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--address",
            default="127.0.0.1:8000",
            help="host:port the server will listen on, for the address printed (make run "
            "passes its HOST and PORT).",
        )

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        if project is None:
            project = self._load()
        if not Project.objects.filter(slug=PRACTICE_SLUG).exists():
            self._practice()
        host, _, port = options["address"].rpartition(":")
        if host in ("", "0.0.0.0", "::", "[::]"):  # listening everywhere: this machine's loopback
            host = "127.0.0.1"
        base = f"http://{host}:{port or '8000'}"
        self.stdout.write(
            self.style.SUCCESS(
                f"\nDemo ready at {base}/p/{DEMO_SLUG}/\n"
                f"  lead (owner):  lead / {DEMO_PASSWORD}\n"
                f"  analysts:      ana / {DEMO_PASSWORD}, ben / {DEMO_PASSWORD}\n"
                f"  claims left to label (as ana or ben): {base}/p/{PRACTICE_SLUG}/label/\n"
                f"  the two systems' answers in blind pairs (as ana or ben): "
                f"{base}/p/{DEMO_SLUG}/pairwise/\n"
            )
        )

    def _practice(self) -> Project:
        """The demo's answers again, without labels: the demo project itself is fully
        labelled (its report is pinned by the golden files), so analysts practise here."""
        with transaction.atomic():
            project = Project.objects.create(
                slug=PRACTICE_SLUG,
                name="Demo practice: claims still to label",
                description="The demo's answers without labels, for trying the labelling "
                "screen as ana or ben.",
                queue_seed=2027,
                guidelines=PRACTICE_GUIDELINES,
            )
            for username, role in DEMO_USERS:
                user, created = get_user_model().objects.get_or_create(username=username)
                if created:
                    user.set_password(DEMO_PASSWORD)
                    user.save()
                Membership.objects.create(project=project, user=user, role=role)
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as handle:
            for record in demo_records():
                claims = [{"text": claim["text"]} for claim in record.get("claims", [])]
                handle.write(json.dumps({**record, "claims": claims}, ensure_ascii=False) + "\n")
            handle.flush()
            answers_import(project=project, path_or_file=handle.name, format="native")
        return project

    def _load(self) -> Project:
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
        """Run the offline baseline judge and snapshot the report."""
        judge = judge_create(project=project, name="baseline", backend="baseline")
        run = judge_run_start(judge=judge, user=lead)
        run.refresh_from_db()
        self.stdout.write(f"Baseline judge: {run.done} claims judged ({run.status})")
        # all systems pooled, the dashboard's default, and each system's headline beside it
        snapshot_request_every_system(project=project, judge=judge)

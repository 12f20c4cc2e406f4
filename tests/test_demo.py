"""The demo: `make run` hands its port to the demo banner, and the demo leaves its analysts claims
to label."""

import io
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Project

ROOT = Path(__file__).resolve().parent.parent


def test_make_run_hands_its_port_to_the_demo_banner():
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=8111"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "manage.py demo_load --address 127.0.0.1:8111" in dry
    assert "runserver 127.0.0.1:8111" in dry


@pytest.mark.django_db
def test_the_demo_prints_the_port_given_and_leaves_its_analysts_claims_to_label(
    client, django_capture_on_commit_callbacks
):
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", "--address", "0.0.0.0:8111", stdout=out)
    printed = out.getvalue()
    assert "Demo ready at http://127.0.0.1:8111/p/demo/" in printed
    assert "http://127.0.0.1:8111/p/demo-practice/label/" in printed
    assert ":8000" not in printed

    practice = Project.objects.get(slug="demo-practice")
    assert practice.claims.exists()
    assert not practice.claims.filter(labels__isnull=False).exists()
    ana = practice.memberships.get(user__username="ana").user
    client.force_login(ana)
    screen = client.get(reverse("annotate:label-next", args=["demo-practice"])).content.decode()
    assert 'data-claim-id="' in screen
    assert "Your queue is empty" not in screen
    again = io.StringIO()
    call_command("demo_load", stdout=again)  # idempotent
    assert Project.objects.filter(slug__startswith="demo").count() == 2

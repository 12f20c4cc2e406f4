"""manage.py compare: text and JSON, and the gate's exit status."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests.compare.test_compare_service import _world
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    project = ProjectFactory(slug="cmp")
    _world(project, np.random.default_rng(1))
    return project


def run(capsys, *args):
    call_command("compare", "--project", "cmp", *args)
    return capsys.readouterr()


def test_compare_text_states_the_finding_and_the_table(project, capsys):
    out = run(capsys, "--a", "rag@1", "--b", "rag@2", "--judge", "j").out
    first = out.splitlines()[0]
    assert first.startswith("rag@2 (B) is more faithful than rag@1 (A) by ")
    assert "faithfulness (pooled over claims)" in out
    assert "abstention rate" in out
    assert "Method: Paired by question" in out


def test_compare_json_is_the_service_result(project, capsys):
    out = run(capsys, "--a", "rag@1", "--b", "rag@2", "--judge", "j", "--format", "json").out
    result = json.loads(out)
    assert result["shared_questions"] == 120
    assert result["rates"]["faithfulness"]["headline"]["choice"] == "ppi"


def test_gate_passes_when_b_is_better_and_fails_when_worse(project, capsys):
    run(capsys, "--a", "rag@1", "--b", "rag@2", "--judge", "j", "--fail-if-worse")
    with pytest.raises(SystemExit) as exit_info:
        call_command(
            "compare",
            "--project",
            "cmp",
            "--a",
            "rag@2",
            "--b",
            "rag@1",
            "--judge",
            "j",
            "--fail-if-worse",
            "--margin",
            "0.02",
        )
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "B is worse than A: the upper end of B − A" in err
    assert "less faithful" in err


def test_gate_margin_decides(project, capsys):
    # B − A of rag@1 against rag@2 is about −20 points: a 50-point margin lets it pass.
    err = run(capsys, "--a", "rag@2", "--b", "rag@1", "--fail-if-worse", "--margin", "0.5").err
    assert err.startswith("Not worse: the upper end of B − A")
    assert "below −50.0." in err


def test_unknown_system_is_a_clear_error(project):
    with pytest.raises(
        CommandError, match=r"No system 'v9' in this project \(systems: rag@1, rag@2\)"
    ):
        call_command("compare", "--project", "cmp", "--a", "rag@1", "--b", "v9")


def test_report_command_takes_a_system(project, capsys):
    call_command("report", "--project", "cmp", "--system", "rag@2")
    report = json.loads(capsys.readouterr().out)
    assert report["system"]["version"] == "2"
    with pytest.raises(CommandError, match="No system 'rag@9'"):
        call_command("report", "--project", "cmp", "--system", "rag@9")

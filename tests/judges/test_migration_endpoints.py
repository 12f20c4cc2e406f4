"""Migration 0004: judges move from a URL and key variable of their own to a declared endpoint."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from judges.models import Judge, JudgeRun
from tests.factories import ProjectFactory

BEFORE = [("judges", "0003_verdict_stale")]


@pytest.mark.django_db(transaction=True)
def test_a_judge_keeps_an_endpoint_only_where_the_operator_declared_its_url_and_key(
    llm_endpoints,
):
    llm_endpoints(
        {"name": "local", "base_url": "http://127.0.0.1:8000/v1", "api_key_env": "LOCAL_KEY"},
        {
            "name": "openai",
            "base_url": "https://api.openai.com/v1",
            "api_key_env": "OPENAI_API_KEY",
        },
    )
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    project = old.get_model("annotate", "Project").objects.get(pk=ProjectFactory().pk)
    make = old.get_model("judges", "Judge").objects.create
    url = "http://127.0.0.1:8000/v1/"
    vouched = make(project=project, name="a", backend="openai", model="m", base_url=url,
                   api_key_env="LOCAL_KEY")  # fmt: skip
    default = make(
        project=project, name="b", backend="openai", model="m", api_key_env="OPENAI_API_KEY"
    )  # fmt: skip  (blank URL: the client's default)
    stolen = make(project=project, name="c", backend="openai", model="m", base_url=url,
                  api_key_env="DJANGO_SECRET_KEY")  # fmt: skip
    elsewhere = make(project=project, name="d", backend="openai", model="m",
                     base_url="http://attacker.example/v1", api_key_env="LOCAL_KEY")  # fmt: skip
    run = old.get_model("judges", "JudgeRun").objects.create(
        judge=stolen,
        project=project,
        backend="openai",
        parameters={"base_url": url, "api_key_env": "DJANGO_SECRET_KEY", "max_retries": 2},
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    endpoints = dict(Judge.objects.values_list("pk", "endpoint"))
    assert endpoints == {vouched.pk: "local", default.pk: "openai", stolen.pk: "", elsewhere.pk: ""}
    assert JudgeRun.objects.get(pk=run.pk).parameters == {"max_retries": 2, "endpoint": ""}

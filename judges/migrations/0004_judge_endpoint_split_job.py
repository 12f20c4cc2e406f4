"""Judges name an endpoint the operator declared instead of a URL and a key variable; the
split job.

A judge keeps a working endpoint only when the operator has declared, at migration time, an
endpoint with exactly its old URL and key variable (the operator vouched for that pair);
every other OpenAI-compatible judge is left without one, and its page asks a lead to choose
one. Stored runs lose the URL and key variable they froze: the runner resolves the endpoint
by name from the settings at call time, never from a stored run.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _declared():
    from judges.endpoints import endpoints_declared

    return {(e.base_url, e.api_key_env): e.name for e in endpoints_declared().values()}


def _mapped(declared, base_url, api_key_env):
    # A blank URL meant the client's default, OpenAI's API.
    url = (base_url or "https://api.openai.com/v1").rstrip("/")
    return declared.get((url, api_key_env or ""), "")


def judges_to_declared_endpoints(apps, schema_editor):
    Judge = apps.get_model("judges", "Judge")
    JudgeRun = apps.get_model("judges", "JudgeRun")
    declared = _declared()
    for judge in Judge.objects.filter(backend="openai"):
        judge.endpoint = _mapped(declared, judge.base_url, judge.api_key_env)
        judge.save(update_fields=["endpoint"])
    for run in JudgeRun.objects.all().only("pk", "parameters"):
        parameters = dict(run.parameters or {})
        if "base_url" not in parameters and "api_key_env" not in parameters:
            continue
        base_url = parameters.pop("base_url", "")
        api_key_env = parameters.pop("api_key_env", "")
        parameters["endpoint"] = _mapped(declared, base_url, api_key_env)
        JudgeRun.objects.filter(pk=run.pk).update(parameters=parameters)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0005_drop_duplicate_fk_indexes"),
        ("judges", "0003_verdict_stale"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="endpoint",
            field=models.CharField(
                blank=True,
                help_text="Name of an LLM endpoint the operator declared (FAITHAUDIT_LLM_ENDPOINTS).",
                max_length=100,
            ),
        ),
        migrations.RunPython(judges_to_declared_endpoints, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="judge",
            name="api_key_env",
        ),
        migrations.RemoveField(
            model_name="judge",
            name="base_url",
        ),
        migrations.CreateModel(
            name="SplitJob",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("answer_ids", models.JSONField(blank=True, default=list)),
                ("force", models.BooleanField(default=False)),
                ("origin", models.CharField(blank=True, max_length=60)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting for a worker"),
                            ("running", "Splitting"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("total", models.PositiveIntegerField(default=0)),
                ("done", models.PositiveIntegerField(default=0)),
                ("failed", models.PositiveIntegerField(default=0)),
                ("claims_created", models.PositiveIntegerField(default=0)),
                ("error", models.TextField(blank=True)),
                (
                    "failures",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="[{answer, error}] for answers that could not split.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "answer",
                    models.ForeignKey(
                        blank=True,
                        help_text="The one answer to split; empty: the project's answers.",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotate.answer",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "judge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="split_jobs",
                        to="judges.judge",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="split_jobs",
                        to="annotate.project",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("status__in", ["pending", "running", "done", "failed"])
                        ),
                        name="splitjob_status_valid",
                    )
                ],
            },
        ),
    ]

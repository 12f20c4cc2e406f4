from django.db import migrations, models
from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.functions import Coalesce


def fill_counters(apps, schema_editor):
    """Existing labels count from the start: the counters equal a recount."""
    Claim = apps.get_model("annotate", "Claim")
    Label = apps.get_model("annotate", "Label")
    Membership = apps.get_model("annotate", "Membership")
    Project = apps.get_model("annotate", "Project")
    per_claim = (
        Label.objects.filter(claim=OuterRef("pk"))
        .values("claim")
        .annotate(n=Count("id"))
        .values("n")
    )
    Claim.objects.update(label_count=Coalesce(Subquery(per_claim), 0))
    per_member = (
        Label.objects.filter(annotator=OuterRef("user"), claim__project=OuterRef("project"))
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    Membership.objects.update(labels_saved=Coalesce(Subquery(per_member), 0))
    complete = (
        Claim.objects.filter(project=OuterRef("pk"), label_count__gte=F("labels_required"))
        .values("project")
        .annotate(n=Count("id"))
        .values("n")
    )
    Project.objects.update(claims_complete=Coalesce(Subquery(complete), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="claim",
            name="label_count",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="membership",
            name="labels_saved",
            field=models.PositiveIntegerField(
                default=0, help_text="Labels this member has in the project (kept by label_save)."
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="claims_complete",
            field=models.PositiveIntegerField(
                default=0, help_text="Claims whose labels reached labels_required."
            ),
        ),
        migrations.AddIndex(
            model_name="claim",
            index=models.Index(
                condition=models.Q(("label_count__lt", models.F("labels_required"))),
                fields=["project", "queue_key"],
                name="claim_open_queue_idx",
            ),
        ),
        migrations.RunPython(fill_counters, migrations.RunPython.noop),
    ]

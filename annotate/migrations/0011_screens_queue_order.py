# Projects that exist keep the claim-at-a-time order their claims' queue keys were made for;
# new projects serve an answer at a time (the field's default).

from django.db import migrations, models

CHOICES = [
    ("answer", "An answer at a time: a random answer, then its claims in order"),
    ("claim", "A claim at a time, in random order across all answers"),
]
HELP = (
    "How the labelling queue serves claims. Both are random samples; an answer at a time "
    "saves analysts re-reading a pile for every claim."
)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0010_screens_guideline_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="queue_order",
            field=models.CharField(choices=CHOICES, default="claim", help_text=HELP, max_length=6),
        ),
        migrations.AlterField(
            model_name="project",
            name="queue_order",
            field=models.CharField(
                choices=CHOICES, default="answer", help_text=HELP, max_length=6
            ),
        ),
    ]

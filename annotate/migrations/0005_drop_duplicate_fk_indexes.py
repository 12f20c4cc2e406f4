"""Drop three foreign-key indexes that a composite index already leads with.

annotate_claim(project_id) is claim_queue_idx's first column, annotate_answer(project_id)
answer_project_order's and annotate_passage(answer_id) passage_rank_unique's. Every claim,
answer and passage written (imports, and each label's claim counter update) kept a fourth
copy for nothing. Only the indexes go: Django's AlterField would also drop and re-add each
foreign key, validating it over every row (seconds on a 1M-claim database), so the database
side is the DROP INDEX alone; the index names are the ones Django generated for these columns
on every backend.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEXES = [
    ("annotate_answer", "project_id", "annotate_answer_project_id_81227853"),
    ("annotate_claim", "project_id", "annotate_claim_project_id_97de9ba3"),
    ("annotate_passage", "answer_id", "annotate_passage_answer_id_93751009"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0004_import_job"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX "{name}" ON "{table}" ("{column}")',
                )
                for table, column, name in INDEXES
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="answer",
                    name="project",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="answers",
                        to="annotate.project",
                    ),
                ),
                migrations.AlterField(
                    model_name="claim",
                    name="project",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="claims",
                        to="annotate.project",
                    ),
                ),
                migrations.AlterField(
                    model_name="passage",
                    name="answer",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="passages",
                        to="annotate.answer",
                    ),
                ),
            ],
        ),
    ]

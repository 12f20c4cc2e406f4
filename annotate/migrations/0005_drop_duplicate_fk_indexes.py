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

# (table, column, index, model, field, related_name, target)
INDEXES = [
    ("annotate_answer", "project_id", "annotate_answer_project_id_81227853",
     "answer", "project", "answers", "annotate.project"),
    ("annotate_claim", "project_id", "annotate_claim_project_id_97de9ba3",
     "claim", "project", "claims", "annotate.project"),
    ("annotate_passage", "answer_id", "annotate_passage_answer_id_93751009",
     "passage", "answer", "passages", "annotate.answer"),
]  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0004_import_job"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{index}"',
                    reverse_sql=f'CREATE INDEX "{index}" ON "{table}" ("{column}")',
                )
                for table, column, index, *_ in INDEXES
            ],
            state_operations=[
                migrations.AlterField(
                    model_name=model,
                    name=field,
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name=related_name,
                        to=target,
                    ),
                )
                for *_, model, field, related_name, target in INDEXES
            ],
        ),
    ]

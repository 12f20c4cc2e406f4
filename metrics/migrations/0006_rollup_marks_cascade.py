"""A deleted rollup state takes its marks with it (PostgreSQL; SQLite writes no marks).

`RollupMark.state_id` is a plain column, not a foreign key, so the triggers of migration 0005
insert marks without a key check per row; this statement-level trigger on the state table
does what ON DELETE CASCADE would: deleting a project (its states cascade) or a state leaves
no mark behind."""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION metrics_rollupstate_marks_drop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM metrics_rollupmark m USING rollup_gone g WHERE m.state_id = g.id;
    RETURN NULL;
END
$$;
"""
TRIGGER = (
    "CREATE TRIGGER metrics_rollupstate_marks_drop AFTER DELETE ON metrics_rollupstate "
    "REFERENCING OLD TABLE AS rollup_gone FOR EACH STATEMENT "
    "EXECUTE FUNCTION metrics_rollupstate_marks_drop()"
)


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION)
    schema_editor.execute(TRIGGER)
    # marks already left by states deleted before this migration
    schema_editor.execute(
        "DELETE FROM metrics_rollupmark m WHERE NOT EXISTS "
        "(SELECT 1 FROM metrics_rollupstate s WHERE s.id = m.state_id)"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "DROP TRIGGER IF EXISTS metrics_rollupstate_marks_drop ON metrics_rollupstate"
    )
    schema_editor.execute("DROP FUNCTION IF EXISTS metrics_rollupstate_marks_drop()")


class Migration(migrations.Migration):
    dependencies = [("metrics", "0005_rollup_triggers")]

    operations = [migrations.RunPython(forwards, backwards)]

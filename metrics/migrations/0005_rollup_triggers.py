"""PostgreSQL triggers that keep the rollups incremental (issue 30): every statement that
writes gold, judge verdicts, claims or an answer's abstention/system inserts one mark per
(rollup state, answer) it touched, so `metrics.services.rollup_state.rollup_refresh`
re-aggregates those answers only. Statement-level triggers with transition tables: one
INSERT … SELECT per statement (a COPY of a million claims included), nothing at all while the
project has no rollup state. SQLite (`make run`) has none: its rollups are read whole."""

from django.db import migrations

MARK = "INSERT INTO metrics_rollupmark (state_id, answer_id) "

# Per table: the SELECT of (state id, answer id) from a transition table `{rows}`, and what an
# UPDATE must change to count (an update of anything else, such as a design's queue keys over
# every claim, marks nothing).
CHANGED = {
    "annotate_gold": "n.verdict IS DISTINCT FROM o.verdict OR n.claim_id <> o.claim_id",
    "judges_judgeverdict": (
        "n.verdict IS DISTINCT FROM o.verdict OR n.confidence IS DISTINCT FROM o.confidence"
        " OR n.stale IS DISTINCT FROM o.stale OR n.claim_id IS DISTINCT FROM o.claim_id"
        " OR n.run_id <> o.run_id"
    ),
    "annotate_claim": "n.stratum IS DISTINCT FROM o.stratum OR n.answer_id <> o.answer_id",
    "annotate_answer": (
        "n.abstention IS DISTINCT FROM o.abstention OR n.system_id IS DISTINCT FROM o.system_id"
    ),
}
SOURCES = {
    "annotate_gold": (
        "SELECT DISTINCT s.id, c.answer_id FROM {rows} n "
        "JOIN annotate_claim c ON c.id = n.claim_id "
        "JOIN metrics_rollupstate s ON s.project_id = c.project_id"
    ),
    "judges_judgeverdict": (
        "SELECT DISTINCT s.id, c.answer_id FROM {rows} n "
        "JOIN metrics_rollupstate s ON s.run_id = n.run_id "
        "JOIN annotate_claim c ON c.id = n.claim_id"
    ),
    "annotate_claim": (
        "SELECT DISTINCT s.id, n.answer_id FROM {rows} n "
        "JOIN metrics_rollupstate s ON s.project_id = n.project_id"
    ),
    "annotate_answer": (
        "SELECT DISTINCT s.id, n.id FROM {rows} n "
        "JOIN metrics_rollupstate s ON s.project_id = n.project_id"
    ),
}


def _function(table: str, select: str) -> str:
    changed = (
        f"(SELECT n.* FROM rollup_new n JOIN rollup_old o ON o.id = n.id WHERE {CHANGED[table]})"
    )
    return f"""
CREATE OR REPLACE FUNCTION {table}_rollup_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM metrics_rollupstate) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        {MARK}{select.format(rows="rollup_new")};
    ELSIF TG_OP = 'DELETE' THEN
        {MARK}{select.format(rows="rollup_old")};
    ELSE
        {MARK}{select.format(rows=changed)};
        {MARK}{select.format(rows=changed.replace("SELECT n.*", "SELECT o.*"))};
    END IF;
    RETURN NULL;
END
$$;
"""


def _triggers(table: str) -> list[str]:
    events = {
        "insert": ("INSERT", "NEW TABLE AS rollup_new"),
        "update": ("UPDATE", "OLD TABLE AS rollup_old NEW TABLE AS rollup_new"),
        "delete": ("DELETE", "OLD TABLE AS rollup_old"),
    }
    if table == "annotate_answer":  # an answer's claims are marked by the claims' own writes
        events = {"update": events["update"]}
    return [
        f"CREATE TRIGGER {table}_rollup_{name} AFTER {event} ON {table} REFERENCING {tables} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {table}_rollup_mark()"
        for name, (event, tables) in events.items()
    ]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, select in SOURCES.items():
        schema_editor.execute(_function(table, select))
        for statement in _triggers(table):
            schema_editor.execute(statement)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in SOURCES:
        for name in ("insert", "update", "delete"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_rollup_{name} ON {table}")
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {table}_rollup_mark()")


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0004_rollup_state"),
        ("annotate", "0021_claim_comment"),
        ("judges", "0011_judge_drift_flag"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]

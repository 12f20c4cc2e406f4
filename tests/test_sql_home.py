"""Raw SQL lives in one module per app (`<app>/sql.py`), each statement with the figure it
bought (ARCHITECTURE.md; the modules' docstrings say why each is raw).

The scanner walks every Python file of the apps (not tests, bench or migrations) and reports
each call that runs hand-written SQL — `<cursor>.execute(...)`, `.executemany(...)`,
`<cursor>.copy(...)` (psycopg's COPY), `.raw(...)`, `.extra(...)`, `RawSQL` — outside an
app's `sql.py`. It reads the syntax tree, so a docstring or comment naming them is no hit.
"""

import ast
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("config", "annotate", "judges", "metrics", "interchange")


def _name(node) -> str:
    """The last name of a call's receiver: `cursor`, `wrapper.cursor` -> "cursor"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def raw_sql_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) of every raw-SQL call or RawSQL name in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, receiver = node.func.attr, _name(node.func.value).lower()
            if attr in ("raw", "extra", "executemany") or (
                attr in ("execute", "copy") and "cursor" in receiver
            ):
                found.append((node.lineno, f"{receiver}.{attr}("))
        elif (
            isinstance(node, ast.Name | ast.Attribute)
            and _name(node) == "RawSQL"
            or isinstance(node, ast.ImportFrom)
            and any(a.name == "RawSQL" for a in node.names)
        ):
            found.append((node.lineno, "RawSQL"))
    return found


def misplaced_raw_sql(root: Path) -> list[str]:
    """`path:line: what` for each raw-SQL use in the apps under `root` outside `<app>/sql.py`."""
    found = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if "migrations" in relative.parts or relative.parts[1:] == ("sql.py",):
                continue
            found += [f"{relative}:{line}: {what}" for line, what in raw_sql_uses(path.read_text())]
    return found


def test_raw_sql_only_in_an_apps_sql_module():
    assert misplaced_raw_sql(ROOT) == []


def test_the_sql_modules_hold_the_statements():
    """The scan is not vacuous: the statements it looks for are found in their homes."""
    for app in ("annotate", "config", "metrics", "interchange"):
        assert raw_sql_uses((ROOT / app / "sql.py").read_text()), app


def test_each_sql_module_states_the_rule():
    for app in ("annotate", "config", "metrics", "interchange"):
        doc = ast.get_docstring(ast.parse((ROOT / app / "sql.py").read_text()))
        assert "Raw SQL lives here" in doc, app
        assert "figure it bought" in doc, app


def test_the_scanner_finds_each_form_and_ignores_words():
    source = '''
"""Docs may say cursor.execute(sql), .raw( and RawSQL freely."""
from django.db.models.expressions import RawSQL

def f(cursor, wrapper, qs):
    # cursor.execute("in a comment")
    cursor.execute("SELECT 1")
    wrapper.cursor.copy("COPY t FROM STDIN")
    qs.raw("SELECT * FROM t")
    qs.extra(where=["1 = 1"])
    qs.annotate(x=RawSQL("1", []))
    cursor.executemany("INSERT", [])
    {}.copy()
    text = "cursor.execute('a string')"
'''
    assert sorted(raw_sql_uses(source)) == [
        (3, "RawSQL"),
        (7, "cursor.execute("),
        (8, "cursor.copy("),
        (9, "qs.raw("),
        (10, "qs.extra("),
        (11, "RawSQL"),
        (12, "cursor.executemany("),
    ]


def test_the_check_fails_on_a_misplaced_statement(tmp_path):
    """The same check over a copy of the apps with one statement added outside a sql.py."""
    for app in APPS:
        shutil.copytree(ROOT / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__"))
    assert misplaced_raw_sql(tmp_path) == []
    (tmp_path / "judges" / "stray.py").write_text(
        "from django.db import connection\n\n\n"
        "def g():\n    with connection.cursor() as cursor:\n        cursor.execute('SELECT 1')\n"
    )
    assert misplaced_raw_sql(tmp_path) == [f"{Path('judges', 'stray.py')}:6: cursor.execute("]


@pytest.mark.django_db
def test_the_frame_read_returned_to_the_orm_is_one_query_with_the_cursors_values():
    """metrics.selectors' SQLite read went back from a cursor over the queryset's SQL to
    `values_list`: one query either way, and after the selector's own conversions the same
    frame as the cursor's rows give (the cursor read is done here, by hand)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Answer
    from metrics import selectors
    from tests.factories import AnswerFactory, ProjectFactory

    project = ProjectFactory()
    for index, (answerable, abstention, risk) in enumerate(
        [(True, False, "health"), (False, True, "none"), (None, False, "legal")]
    ):
        AnswerFactory(
            project=project,
            external_id=f"a{index}",
            answerable=answerable,
            abstention=abstention,
            risk_category=risk,
        )
    with CaptureQueriesContext(connection) as queries:
        frame = selectors.answer_columns(project=project)
    assert len(queries) == 1
    names = ["id", "risk_category", "answerable", "abstention"]
    sql, params = (
        Answer.objects.filter(project=project).order_by("id").values_list(*names).query
    ).sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    assert frame["answer_id"].tolist() == [row[0] for row in rows]
    assert frame["risk_category"].tolist() == ["health", "none", "legal"]
    assert frame["answerable"].tolist() == [
        None if row[2] is None else bool(row[2]) for row in rows
    ]
    assert frame["answerable"].tolist() == [True, False, None]
    assert frame["abstention"].tolist() == [bool(row[3]) for row in rows] == [False, True, False]

"""Raw SQL lives in one home per app (`<app>/sql.py`, or the package `<app>/sql/` with one module
per concept), each statement with the figure it
bought (ARCHITECTURE.md; the modules' docstrings say why each is raw).

The scanner walks every Python file of the apps (not tests, bench or migrations) and reports
each call that runs hand-written SQL — `<cursor>.execute(...)`, `.executemany(...)`,
`<cursor>.copy(...)` (psycopg's COPY), `.raw(...)`, `.extra(...)`, `RawSQL` — outside an
app's `sql.py`. It reads the syntax tree, so a docstring or comment naming them is no hit.

It also reports SQL statement text outside those modules: a string constant or f-string
that, stripped of whitespace and an opening parenthesis, starts a statement —
`SELECT … FROM` (or a bare `SELECT 1`), `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`,
`WITH name AS (` — in any case. So a statement built beside its logic and run through
`annotate.sql.StatementBatch` (which the call scan alone would pass) is caught too. Prose
("Select the passage", "update") and docstrings are no hit.
"""

import ast
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("config", "annotate", "judges", "metrics", "interchange", "api")


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


_STATEMENT = re.compile(
    r"\(?\s*(?:select\b.*\bfrom\b|select\s+[\w{}%*(),.\s]+$|insert\s+into\b"
    r"|update\s+\S+\s+set\b|delete\s+from\b|with\s+(?:recursive\s+)?\w+\s+as\s*\()",
    re.IGNORECASE | re.DOTALL,
)


def _text(node) -> str | None:
    """A string constant's text, or an f-string's with each `{...}` as `{}`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def sql_statement_texts(source: str) -> list[tuple[int, str]]:
    """(line, first words) of every string constant or f-string in `source` that is SQL
    statement text (docstrings and the pieces of an f-string are not looked at)."""
    tree = ast.parse(source)
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
        ):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(value) for value in node.values)
    found = []
    for node in ast.walk(tree):
        text = _text(node) if id(node) not in skipped else None
        if text is not None and _STATEMENT.match(text.strip()):
            found.append((node.lineno, " ".join(text.split()[:2])))
    return found


def _in_sql_home(relative: Path) -> bool:
    """`<app>/sql.py`, or a module of the package `<app>/sql/` (not deeper)."""
    return relative.parts[1:] == ("sql.py",) or (
        len(relative.parts) == 3 and relative.parts[1] == "sql"
    )


def sql_home_sources(app: str) -> dict[str, str]:
    """{path: source} of an app's raw-SQL home: its sql.py, or each module of its sql/ package."""
    home = ROOT / app / "sql"
    paths = sorted(home.glob("*.py")) if home.is_dir() else [ROOT / app / "sql.py"]
    return {path.relative_to(ROOT).as_posix(): path.read_text() for path in paths}


def misplaced_raw_sql(root: Path) -> list[str]:
    """`path:line: what` for each raw-SQL use in the apps under `root` outside their sql home."""
    found = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if "migrations" in relative.parts or _in_sql_home(relative):
                continue
            source = path.read_text()
            found += [f"{relative}:{line}: {what}" for line, what in raw_sql_uses(source)]
            found += [
                f"{relative}:{line}: SQL text {what!r}"
                for line, what in sql_statement_texts(source)
            ]
    return found


def test_raw_sql_only_in_an_apps_sql_module():
    assert misplaced_raw_sql(ROOT) == []


def test_the_sql_modules_hold_the_statements():
    """The scan is not vacuous: the statements it looks for are found in their homes."""
    for app in ("annotate", "config", "metrics", "interchange"):
        homes = sql_home_sources(app).values()
        assert any(raw_sql_uses(source) or sql_statement_texts(source) for source in homes), app
    # annotate's package: the batch runs statements, the builders hold statement text
    annotate = sql_home_sources("annotate")
    assert raw_sql_uses(annotate["annotate/sql/batch.py"])
    for module in ("counters", "labels", "queue"):
        assert sql_statement_texts(annotate[f"annotate/sql/{module}.py"]), module


def test_each_sql_module_states_the_rule():
    for app in ("annotate", "config", "metrics", "interchange"):
        home = ROOT / app / ("sql/__init__.py" if (ROOT / app / "sql").is_dir() else "sql.py")
        doc = ast.get_docstring(ast.parse(home.read_text()))
        assert "Raw SQL lives here" in doc, app
        assert "figure it bought" in doc, app
    # each module of a package points at the rule and its reasons
    for path, source in sql_home_sources("annotate").items():
        if not path.endswith("__init__.py"):
            assert "Raw SQL" in ast.get_docstring(ast.parse(source)), path


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


def test_the_scanner_finds_statement_text_and_ignores_prose():
    source = '''
"""SELECT x FROM t in a docstring is documentation."""

def f(table, columns, lock):
    """INSERT INTO t VALUES (1): documentation too."""
    a = f"""
        select {columns} from {table} t
        where t.id = %s {lock}
    """
    b = "  INSERT INTO t (a) VALUES (%s)"
    c = f"UPDATE {table} SET n = n + %s WHERE id = %s"
    d = "delete from t where id = %s"
    e = f"(SELECT id FROM {table} WHERE claim_id = %s)"
    g = "WITH recent AS (SELECT 1) SELECT * FROM recent"
    h = "SELECT 1"
    prose = ["Select the fact's text in a passage.", "update", "delete", "With the quote"]
    more = f"Delete the {table} files kept for jobs", "selected from the list"
'''
    assert sql_statement_texts(source) == [
        (6, "select {}"),
        (10, "INSERT INTO"),
        (11, "UPDATE {}"),
        (12, "delete from"),
        (13, "(SELECT id"),
        (14, "WITH recent"),
        (15, "SELECT 1"),
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
    assert misplaced_raw_sql(tmp_path) == [
        f"{Path('judges', 'stray.py')}:6: cursor.execute(",
        f"{Path('judges', 'stray.py')}:6: SQL text 'SELECT 1'",
    ]


def test_the_check_fails_on_statement_text_run_through_a_batch(tmp_path):
    """An f-string statement queued on a StatementBatch outside a sql.py: no raw call, but
    the text is caught."""
    for app in APPS:
        shutil.copytree(ROOT / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "annotate" / "services" / "stray.py").write_text(
        "from annotate.models import Claim\n"
        "from annotate.sql import StatementBatch\n\n\n"
        "def g(claim_id):\n"
        "    batch = StatementBatch()\n"
        "    batch.add(\n"
        '        f"  update {Claim._meta.db_table} set needs_review = %s where id = %s",\n'
        "        [False, claim_id],\n"
        "    )\n"
        "    batch.run()\n"
    )
    assert misplaced_raw_sql(tmp_path) == [
        f"{Path('annotate', 'services', 'stray.py')}:8: SQL text 'update {{}}'"
    ]


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


def test_the_sql_home_is_the_apps_sql_module_or_its_sql_package():
    assert _in_sql_home(Path("metrics", "sql.py"))
    assert _in_sql_home(Path("annotate", "sql", "queue.py"))
    assert _in_sql_home(Path("annotate", "sql", "__init__.py"))
    # a sql module deeper in the app, or a folder inside the package, is no home
    assert not _in_sql_home(Path("annotate", "services", "sql.py"))
    assert not _in_sql_home(Path("annotate", "services", "sql", "x.py"))
    assert not _in_sql_home(Path("annotate", "sql", "more", "x.py"))

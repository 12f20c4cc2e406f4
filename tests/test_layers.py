"""The architecture's contract (.importlinter, run by `make test`) holds, and it bites.

Each breaking test copies the project's packages and the contract into a temporary directory,
adds one wrong import to the copy, and runs lint-imports there: it must fail and name the
contract that the import breaks. The last test checks the import graph for cycles with grimp
directly, independently of import-linter's own cycle contract.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "api", "annotate", "judges", "testsets", "metrics", "interchange", "monitor")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the packages' Python files and the contract."""
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package,
            tmp_path / package,
            ignore=shutil.ignore_patterns("__pycache__", "templates", "static", "*.html"),
        )
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def _add_import(tree: Path, module: str, line: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_project_keeps_every_contract():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    for name in ("Floors, top to bottom", "Pages are the top", "No import cycles inside an app"):
        assert name in result.stdout


def test_the_unchanged_copy_keeps_every_contract(tree):
    # The breaking tests below fail because of their one added import, not because of the copy.
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_annotate_importing_judges_breaks_the_floors(tree):
    _add_import(tree, "annotate.models.labels", "from judges.models import JudgeVerdict  # noqa")
    result = _lint(tree)
    assert result.returncode == 1
    assert (
        "Floors, top to bottom: config > api > interchange > monitor > metrics > testsets > judges > annotate BROKEN"
        in (" ".join(result.stdout.split()))
    )
    assert "annotate is not allowed to import judges" in result.stdout
    assert "annotate.models.labels -> judges.models" in result.stdout


def test_judges_importing_the_interchange_breaks_the_floors(tree):
    _add_import(tree, "judges.services", "from interchange.services import exports  # noqa")
    result = _lint(tree)
    assert result.returncode == 1
    assert "judges is not allowed to import interchange" in result.stdout
    assert "judges.services -> interchange.services.exports" in result.stdout


def test_a_service_importing_a_page_breaks_the_surfaces_contract(tree):
    # Allowed by the floors (judges stands on annotate), refused because it is a page.
    _add_import(tree, "judges.services", "from annotate.views import labelling  # noqa")
    result = _lint(tree)
    assert result.returncode == 1
    out = " ".join(result.stdout.split())
    assert "Pages are the top: nothing but URL confs imports a views module BROKEN" in out
    assert "judges.services -> annotate.views.labelling" in result.stdout


def test_a_service_importing_its_task_module_breaks_the_no_cycle_contract(tree):
    _add_import(tree, "interchange.services.import_jobs", "from interchange import tasks  # noqa")
    result = _lint(tree)
    assert result.returncode == 1
    out = " ".join(result.stdout.split())
    assert "No import cycles inside an app (a task module imports its service, never the" in out
    assert "No cycles are allowed in interchange" in result.stdout


def _cycles(graph: grimp.ImportGraph) -> list[set[str]]:
    """Strongly connected sets of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph.modules:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_no_module_imports_itself_through_others():
    """Module by module (lazy imports inside functions count): a cycle means two modules
    that cannot be read, tested or moved apart."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    # The check above would pass vacuously if _cycles found nothing anywhere.
    graph = grimp.ImportGraph()
    for importer, imported in [
        ("app.services", "app.tasks"),
        ("app.tasks", "app.runner"),
        ("app.runner", "app.services"),
        ("app.views", "app.services"),
    ]:
        graph.add_import(importer=importer, imported=imported)
    assert _cycles(graph) == [{"app.services", "app.tasks", "app.runner"}]


def test_celery_task_names_survive_the_moves():
    """Messages queued in a deployment carry the task's name: a task that moved keeps its old
    one, and every name resolves in this (web) process, where services look tasks up by it."""
    from celery import current_app

    from interchange.tasks import run_import

    assert run_import.name == "annotate.tasks.run_import"
    assert {
        "annotate.tasks.run_import",
        "judges.tasks.run_judge",
        "judges.tasks.split_claims",
        "judges.tasks.watch_run",
        "judges.tasks.resume_stale_runs",
    } <= set(current_app.tasks)

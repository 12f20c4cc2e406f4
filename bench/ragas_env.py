"""The RAGAS peer's own virtual environment, bench/.venv-ragas, made when it is missing.

    .venv/bin/python -m bench.ragas_env      # what `make bench` does before the RAGAS rows

RAGAS (pinned in bench/ragas-requirements.txt) and langchain stay out of the product's
environment: the bench creates the venv from PyPI with the interpreter running the bench, and
the judge rows' side-by-side RAGAS rows are measured in it. bench/ragas-constraints.txt (when
present) pins every other package as last installed, so a fresh machine gets the same set.
A venv whose ragas is not the pinned version is made anew; a failed install leaves no venv
behind, so the next run tries again.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench.env import OUT, ROOT

VENV = ROOT / "bench" / ".venv-ragas"
PYTHON = VENV / "bin" / "python"
REQUIREMENTS = ROOT / "bench" / "ragas-requirements.txt"
CONSTRAINTS = ROOT / "bench" / "ragas-constraints.txt"
LOG = OUT / "ragas-install.log"
INSTALL_TIMEOUT_S = 1800


class RagasEnvError(RuntimeError):
    """The venv could not be made; the message says why and where the log is."""


def _shown(path: Path) -> str:
    """`path` relative to the work tree when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def pinned_version() -> str:
    for line in REQUIREMENTS.read_text().splitlines():
        if line.strip().startswith("ragas=="):
            return line.split("==", 1)[1].strip()
    raise RagasEnvError(f"{REQUIREMENTS.name} pins no ragas version")


def installed_version() -> str | None:
    """ragas's version in the venv (package metadata, without importing ragas), or None."""
    if not PYTHON.exists():
        return None
    done = subprocess.run(
        [str(PYTHON), "-c", "import importlib.metadata as m; print(m.version('ragas'))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def _run_logged(command: list[str], log, say: Callable[[str], None]) -> None:
    """Run `command`, its output into `log`; pip's "Collecting"/"Successfully" lines to `say`."""
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    tail: list[str] = []
    try:
        for line in process.stdout:
            log.write(line)
            tail = (tail + [line.rstrip()])[-5:]
            if line.startswith(("Collecting ", "Successfully ")):
                say(f"ragas env: {line.strip()[:160]}")
        code = process.wait(timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        process.kill()
        raise RagasEnvError(f"{command[2]} ran past {INSTALL_TIMEOUT_S} s") from error
    if code != 0:
        last = next((x for x in reversed(tail) if x.strip()), "no output")
        raise RagasEnvError(f"exit {code}: {last[:240]} (log: {_shown(LOG)})")


def ragas_env_ensure(say: Callable[[str], None] = print) -> str:
    """The venv's python, creating bench/.venv-ragas with the pinned ragas when missing.

    Returns the ragas version. Raises RagasEnvError (venv removed) when the install fails."""
    wanted = pinned_version()
    have = installed_version()
    if have == wanted:
        return have
    if VENV.exists():
        say(f"ragas env: {_shown(VENV)} has ragas {have or 'missing'}; making it anew")
        shutil.rmtree(VENV)
    OUT.mkdir(parents=True, exist_ok=True)
    say(
        f"ragas env: creating {_shown(VENV)} with ragas=={wanted} from PyPI "
        f"(a few minutes, once; log: {_shown(LOG)})"
    )
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar"]
    pip += ["off", "-r", str(REQUIREMENTS)]
    if CONSTRAINTS.exists():
        pip += ["-c", str(CONSTRAINTS)]
    try:
        with LOG.open("w") as log:
            _run_logged([sys.executable, "-m", "venv", str(VENV)], log, say)
            _run_logged(pip, log, say)
    except BaseException:
        shutil.rmtree(VENV, ignore_errors=True)
        raise
    have = installed_version()
    if have != wanted:
        shutil.rmtree(VENV, ignore_errors=True)
        raise RagasEnvError(f"installed ragas {have}, not the pinned {wanted}")
    say(f"ragas env: ready, ragas {have}")
    return have


def constraints_write() -> None:
    """Pin the venv's packages (pip freeze) into bench/ragas-constraints.txt."""
    frozen = subprocess.run(
        [str(PYTHON), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = sorted(x for x in frozen.splitlines() if x and not x.startswith(("-e ", "#")))
    CONSTRAINTS.write_text(
        "# Every package of bench/.venv-ragas as last installed (python -m bench.ragas_env "
        "--freeze).\n" + "\n".join(lines) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        version = ragas_env_ensure()
    except RagasEnvError as error:
        print(f"ragas env: not made: {error}", file=sys.stderr)
        return 1
    if "--freeze" in args:
        constraints_write()
        print(f"wrote {_shown(CONSTRAINTS)}")
    print(f"{_shown(PYTHON)}: ragas {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

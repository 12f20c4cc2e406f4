"""Answers per second: the file import vs POST /api/v1/projects/{slug}/answers as NDJSON.

    DATABASE_URL=postgres://… .venv/bin/python -m bench.api_ingest [N]

Both write N answers × 5 passages (no claims) into a new project of the database DATABASE_URL
names (migrated first): the file import through `answers_import` on a JSON Lines file in this
process, the API through gunicorn in its own process, as production serves it
(`bench.loadgen.gunicorn_start`, one worker), the body sent with its Content-Length (Django
reads a chunked request body as empty) and read by the server as a stream. The server worker's
peak RSS (VmHWM) is printed too: the import's batches of 1,000 keep it flat in N.
(The first version served the API from a thread of this process: the client, the server and
the import then shared one GIL, which the file import does not pay for: 0.51-0.75 of its rate.)
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _record(n: int, tag: str) -> dict:
    return {
        "id": f"{tag}-{n}",
        "question": f"Question {n}?",
        "answer": f"Refunds take {n % 30} days. They go to the card.",
        "pile": [
            {
                "id": f"d{n}-{rank}",
                "title": f"T{rank}",
                "text": f"Passage {rank} of answer {n}: refunds take {n % 30} days, as section {rank} says.",
            }
            for rank in range(1, 6)
        ],
    }


def _workers_peak_mb(master: int) -> float:
    """The largest VmHWM (peak resident set) among the gunicorn master's children, in MB."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    peaks = []
    for pid in children:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return max(peaks, default=float("nan"))


def main(count: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import httpx
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotate.models import Membership, Project, Role
    from api.tokens import token_create
    from bench.loadgen import gunicorn_start
    from interchange.services.imports import answers_import

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-api")
    rates = {}
    for kind in ("file", "api"):
        slug = f"bench-{kind}-{time.time_ns()}"
        project = Project.objects.create(slug=slug, name=slug)
        Membership.objects.create(project=project, user=user, role=Role.LEAD)
        body = "".join(json.dumps(_record(n, kind)) + "\n" for n in range(count)).encode()
        if kind == "file":
            path = f"/tmp/{slug}.jsonl"
            with open(path, "wb") as handle:
                handle.write(body)
            start = time.perf_counter()
            answers_import(project=project, path_or_file=path, format="native")
            seconds = time.perf_counter() - start
            os.unlink(path)
        else:
            token = token_create(user=user, name="bench").secret
            with tempfile.TemporaryDirectory() as logs:
                server = gunicorn_start(workers=1, threads=2, log=Path(logs) / "api.log")
                try:
                    start = time.perf_counter()
                    response = httpx.post(
                        f"{server.base_url}/api/v1/projects/{slug}/answers",
                        content=body,
                        headers={
                            "Authorization": f"Bearer {token}",
                            "Content-Type": "application/x-ndjson",
                        },
                        timeout=3600,
                    )
                    seconds = time.perf_counter() - start
                    peak = _workers_peak_mb(server.process.pid)
                finally:
                    server.process.terminate()
                    server.process.wait(timeout=30)
            if response.status_code != 201 or response.json()["created"] != count:
                raise SystemExit(response.text[:500])
            print(f"api: gunicorn worker peak RSS {peak:.0f} MB")
        rates[kind] = count / seconds
        print(
            f"{kind}: {count} answers × 5 passages in {seconds:.1f} s = {rates[kind]:,.0f} answers/s"
        )
    print(f"API (NDJSON) / file import = {rates['api'] / rates['file']:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)

"""Answers per second: the file import vs POST /api/v1/projects/{slug}/answers as NDJSON.

    DATABASE_URL=postgres://… .venv/bin/python -m bench.api_ingest [N]

Both write N answers × 5 passages (no claims) into a new project of the database DATABASE_URL
names (migrated first): the file import through `answers_import` on a JSON Lines file, the API
through a threaded WSGI server in this process, the body sent with its Content-Length (Django
reads a chunked request body as empty) and read by the server as a stream.
"""

import json
import os
import sys
import threading
import time


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


def main(count: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import httpx
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    from annotate.models import Membership, Project, Role
    from api.tokens import token_create
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
            server = ThreadedWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
            server.set_app(get_wsgi_application())
            threading.Thread(target=server.serve_forever, daemon=True).start()
            token = token_create(user=user, name="bench").secret
            url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/projects/{slug}/answers"
            start = time.perf_counter()
            response = httpx.post(
                url,
                content=body,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/x-ndjson",
                },
                timeout=3600,
            )
            seconds = time.perf_counter() - start
            server.shutdown()
            if response.status_code != 201 or response.json()["created"] != count:
                raise SystemExit(response.text[:500])
        rates[kind] = count / seconds
        print(
            f"{kind}: {count} answers × 5 passages in {seconds:.1f} s = {rates[kind]:,.0f} answers/s"
        )
    print(f"API (NDJSON) / file import = {rates['api'] / rates['file']:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)

"""The generated projects the measurements read, reused between runs."""

from __future__ import annotations

import time

from bench.runner.common import DATAGEN_VERSION, Context, human


def project_ensure(ctx: Context, slug: str, claims: int, *, fresh: bool = False, **options) -> dict:
    """The generated project `slug`, reused when a previous run made the same one."""
    from annotate.models import Claim, Project
    from bench.datagen import project_generate, tables_vacuum

    fingerprint = f"datagen v{DATAGEN_VERSION}: claims={claims} " + " ".join(
        f"{k}={v}" for k, v in sorted(options.items())
    )
    project = Project.objects.filter(slug=slug).first()
    if (
        not fresh
        and project is not None
        and project.description == fingerprint
        and Claim.objects.filter(project=project).count() == claims
    ):
        return {"slug": slug, "project_id": project.pk, "reused": True}
    ctx.say(f"generating {slug} ({human(claims)} claims)")
    info = project_generate(slug=slug, claims=claims, progress=ctx.say, **options)
    Project.objects.filter(pk=info.project_id).update(description=fingerprint)
    # As autovacuum would after a bulk load (it is off on this machine): visibility map and
    # statistics, so index-only scans and plans are what a settled database gives.
    started = time.perf_counter()
    tables_vacuum()
    ctx.generated[slug] = info.seconds + time.perf_counter() - started
    return {"slug": slug, "project_id": info.project_id, "reused": False, "analysts": info.analysts}

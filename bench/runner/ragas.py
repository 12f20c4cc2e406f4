"""4. RAGAS's faithfulness and our judge side by side, RAGAS in bench/.venv-ragas."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from bench.env import OUT, ROOT
from bench.ragas_env import (
    PYTHON,
    RagasEnvError,
    installed_version,
    pinned_version,
    ragas_env_ensure,
)
from bench.runner.common import Context, Row, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import CONCURRENCY, LATENCY_S, LlmServer, child_run

RAGAS_PYTHON = PYTHON


def bench_ragas(ctx: Context) -> list[Row]:
    """RAGAS's faithfulness metric and our judge on the same answers (one generated project,
    read back from the database) and the same loopback server; calls counted by the server
    for both, tokens as each reports them."""
    answers = ctx.cfg["ragas_answers"]
    size = f"{answers} answers × 4 claims, L = 100 ms"
    wall = Row(4, "RAGAS faithfulness: wall time per claim (evaluate())", size, "ms")
    ours = Row(4, "our judge: wall time per claim (same answers, same server)", size, "ms")
    calls = Row(4, "RAGAS faithfulness: endpoint calls per claim", size, "calls")
    our_calls = Row(4, "our judge: endpoint calls per claim (same answers)", size, "calls")
    tokens = Row(4, "RAGAS faithfulness: tokens per claim", size, "tokens")
    our_tokens = Row(4, "our judge: tokens per claim (same answers)", size, "tokens")
    _ragas_env_ready(ctx)
    slug = slug_for("ragas-peer", 4 * answers)
    project_ensure(ctx, slug, 4 * answers, labelled=0.0, gold=False, judge=False)
    n_claims = 4 * answers
    sample_path = _samples_write(slug)
    # The same loopback server and latency, also answering RAGAS's JSON prompts (see
    # bench.llmproc): on verdict words alone RAGAS fails to parse every reply.
    server = LlmServer(LATENCY_S, ragas=True)
    try:
        for run in ctx.repeats("ragas"):
            server.command("reset")
            result, elapsed = _ragas_once(server, sample_path)
            seen = server.stats()
            wall.values.append(1000 * result["seconds"] / n_claims)
            calls.values.append(seen["calls"] / n_claims)
            tokens.values.append(result["tokens"] / n_claims)
            ctx.notes.append(
                f"RAGAS run {run + 1}: {elapsed:.1f} s process wall (imports included), "
                f"{result['seconds']:.1f} s evaluate(); scores {result['scores'][:6]}"
                + (f"; {result['note']}" if result.get("note") else "")
            )
        for _ in ctx.repeats("ragas"):
            server.command("reset")
            result, _peak = child_run(
                "judge",
                {
                    "slug": slug,
                    "base_url": server.base_url,
                    "concurrency": CONCURRENCY,
                    "latency_s": LATENCY_S,
                },
                env={"CELERY_BROKER_URL": ""},
            )
            seen = server.stats()
            ours.values.append(1000 * result["wall_seconds"] / result["claims"])
            our_calls.values.append(seen["calls"] / result["claims"])
            our_tokens.values.append(
                (result["prompt_tokens"] + result["completion_tokens"]) / result["claims"]
            )
    finally:
        server.stop()
    return [wall, ours, calls, our_calls, tokens, our_tokens]


def _ragas_env_ready(ctx: Context) -> None:
    """bench/.venv-ragas with the pinned ragas; made here, once, on a fresh machine
    (`make bench`), the time it took in the notes."""
    if installed_version() == pinned_version():
        return
    started = time.perf_counter()
    try:
        version = ragas_env_ensure(say=ctx.say)
    except RagasEnvError as error:
        ctx.say(f"RAGAS peer rows skipped: the RAGAS environment could not be made: {error}")
        raise RuntimeError(f"bench/.venv-ragas could not be made: {error}") from error
    ctx.notes.append(
        f"ragas env: created bench/.venv-ragas with ragas {version} from PyPI in "
        f"{time.perf_counter() - started:.0f} s (untimed, before the RAGAS rows)"
    )


def _samples_write(slug: str) -> Path:
    """The project's answers as RAGAS samples (question, response, pile), in bench/out."""
    from annotate.models import Answer

    samples = [
        {
            "user_input": answer.question,
            "response": answer.text,
            "retrieved_contexts": [p.text for p in answer.passages.order_by("rank")],
        }
        for answer in Answer.objects.filter(project__slug=slug).order_by("position", "pk")
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    sample_path = OUT / "ragas-samples.json"
    sample_path.write_text(json.dumps(samples))
    return sample_path


def _ragas_once(server: LlmServer, sample_path: Path) -> tuple[dict, float]:
    """One evaluate() in the RAGAS venv: (its result line, the process's wall seconds)."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(RAGAS_PYTHON),
            str(ROOT / "bench" / "ragas_faithfulness.py"),
            "--base-url",
            server.base_url,
            "--samples",
            str(sample_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)},
    )
    elapsed = time.perf_counter() - started
    lines = [x for x in done.stdout.splitlines() if x.startswith("RAGAS ")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"ragas exited {done.returncode}: {tail[:300]}")
    return json.loads(lines[-1][len("RAGAS ") :]), elapsed

"""`python -m bench.compare [--claims 100000] [--keep]`: two systems with N claims each on
the same questions, gold on 20% of the questions, a judge's verdict on every claim; times
`metrics.services.compare.systems_compare` (the command's and page's work) on PostgreSQL.

Uses DATABASE_URL (default: the bench's own database, fa_bench). The data is written with the
import's COPY writer (`annotate.bulk_insert.RowsInserter`) and deleted afterwards unless --keep.
Target (issue 15): the comparison of two systems with 100k claims each within 30 s.
"""

from __future__ import annotations

import argparse
import time


def build(*, claims: int, seed: int = 15):
    import numpy as np
    from django.db import transaction

    from annotate.bulk_insert import RowsInserter
    from annotate.models import Answer, Claim, Gold, Project, System
    from judges.models import Backend, Judge, JudgeRun, JudgeVerdict

    rng = np.random.default_rng(seed)
    per_answer = 4
    questions = claims // per_answer
    with transaction.atomic():
        project = Project.objects.create(slug=f"bench-compare-{seed}", name="bench compare")
        systems = [
            System.objects.create(project=project, name="rag", version=v) for v in ("1", "2")
        ]
        judge = Judge.objects.create(project=project, name="bench", backend=Backend.IMPORTED)
        run = JudgeRun.objects.create(
            judge=judge,
            project=project,
            kind=JudgeRun.Kind.VERIFY,
            status=JudgeRun.Status.DONE,
            backend=Backend.IMPORTED,
            prompt_version="bench",
        )
        rows = RowsInserter()
        difficulty = 0.05 + 0.85 * rng.beta(0.6, 0.6, questions)
        audited = rng.random(questions) < 0.2
        for index, system in enumerate(systems):
            answer_ids = rows.insert(
                Answer,
                (
                    "project_id",
                    "external_id",
                    "position",
                    "question",
                    "text",
                    "system_id",
                    "question_id",
                ),
                [
                    (
                        project.pk,
                        f"{system.version}:{q}",
                        index * questions + q,
                        f"Q{q}?",
                        "answer",
                        system.pk,
                        f"q{q}",
                    )
                    for q in range(questions)
                ],
                ids=True,
            )
            claim_ids = rows.insert(
                Claim,
                ("project_id", "answer_id", "text", "position"),
                [
                    (project.pk, answer_id, f"claim {k}", k)
                    for answer_id in answer_ids
                    for k in range(per_answer)
                ],
                ids=True,
            )
            p = np.repeat(np.minimum(difficulty + 0.03 * index, 1.0), per_answer)
            truth = rng.random(p.size) < p
            judge_says = np.where(rng.random(p.size) < 0.85, truth, ~truth)
            label = np.where(truth, "SUPPORTED", "NOT_IN_PILE")
            said = np.where(judge_says, "SUPPORTED", "NOT_IN_PILE")
            gold_mask = np.repeat(audited, per_answer)
            rows.insert(
                Gold,
                ("claim_id", "verdict", "source"),
                [
                    (claim_id, label[i], "adjudicated")
                    for i, claim_id in enumerate(claim_ids)
                    if gold_mask[i]
                ],
            )
            rows.insert(
                JudgeVerdict,
                ("run_id", "claim_id", "verdict", "confidence", "raw_response"),
                [(run.pk, claim_id, said[i], None, "") for i, claim_id in enumerate(claim_ids)],
            )
    return project, systems, judge


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare")
    parser.add_argument("--claims", type=int, default=100_000, help="claims per system")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    args = parser.parse_args(argv)
    from bench.env import django_setup

    django_setup(migrate=True)
    from bench.datagen import project_delete, tables_vacuum
    from metrics.services.compare import systems_compare

    # Set-based deletes: the ORM's cascade over 200k claims takes many minutes.
    project_delete(slug="bench-compare-15")
    started = time.perf_counter()
    project, (a, b), judge = build(claims=args.claims)
    print(f"generated 2 × {args.claims} claims in {time.perf_counter() - started:.1f} s")
    # Untimed, as an import's own ANALYZE (interchange/sql.py) or autovacuum would: without it
    # the planner still counts the project as empty and joins 200k claims by a nested loop
    # over the answers (over 10 minutes; 10 s with statistics).
    tables_vacuum()
    try:
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = systems_compare(project=project, a=a, b=b, judge=judge)
            times.append(time.perf_counter() - started)
        times.sort()
        print(result["finding"])
        print(
            f"systems_compare, 2 × {args.claims} claims: median {times[len(times) // 2]:.2f} s "
            f"over {args.runs} runs (min {times[0]:.2f} s, max {times[-1]:.2f} s); target 30 s"
        )
    finally:
        if not args.keep:
            project_delete(slug=project.slug)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

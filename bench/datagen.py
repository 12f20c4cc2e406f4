"""Synthetic projects at scale, loaded with PostgreSQL COPY (psycopg 3's `cursor.copy()`).

    from bench.datagen import project_generate
    info = project_generate(slug="bench-1m", claims=1_000_000, labelled=1.0, gold=True, judge=True)

writes, in one transaction, straight into the product's tables: the users (one owner and
`analysts` analysts, all with the password `BENCH_PASSWORD`), the project and memberships,
answers with a pile of `passages` passages, `claims_per_answer` claims per answer (seeded
`queue_key` and `labels_required` from `annotate.queue_order`, `label_count` kept exact), for a
`labelled` share of the claims the analysts' labels with their evidence quotes and a CREATED
history row each, gold for every labelled claim (unanimous, or adjudicated where two analysts
disagreed), and a finished verify run of an OpenAI-compatible judge with a verdict and a
confidence (P(SUPPORTED)) for every claim. The ORM writes the few rows (users, project, judge,
run); COPY writes the millions. Any column this module does not fill gets the model field's
default, so an added field with a default does not break the generator.

Claims are built from the pile's own sentences, so their truth is known by construction: a
SUPPORTED claim is a sentence of a passage, a CONTRADICTED one the same sentence with another
figure, a NOT_IN_PILE one a sentence that is in no passage. The loopback LLM server
(`tests.llm_server`) decides the same way, so judge runs over this data give real verdicts.

`answers_jsonl_write()` writes the same shape as a native JSON Lines import file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection, models, transaction

from annotate.models import (
    Answer,
    Claim,
    Gold,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Reservation,
    Role,
)
from annotate.queue_order import claim_queue_fields
from judges.models import Judge, JudgeRun, JudgeVerdict
from judges.models import prompt_version as prompt_version_of

BENCH_PASSWORD = "bench-analyst-password-42"
VERIFY_PROMPT = (
    "Judge the claim only against the context; ignore what you know.\n\n"
    "Context:\n{context}\n\nClaim: {claim}\n\n"
    "Answer with one word: SUPPORTED, CONTRADICTED or NOT_MENTIONED."
)

# Sentence templates: {n} is the answer number, {a}/{b} figures. Plain ASCII, no tabs or
# backslashes, so the COPY text format needs no escaping.
_TEMPLATES = (
    "Refunds for order type {n} are processed within {a} days of the request.",
    "The warranty on model {n} covers parts and labour for {a} years.",
    "Branch {n} opens at {a} in the morning on weekdays.",
    "Policy {n} allows at most {a} dependants on one account.",
    "Plan {n} includes {a} gigabytes of storage per user.",
    "Clinic {n} accepts walk-in patients until {a} in the afternoon.",
    "Form {n} must be filed within {a} weeks of the change.",
    "Route {n} runs every {a} minutes during peak hours.",
    "Loan product {n} has a fixed rate for the first {a} years.",
    "Device {n} must be recharged after {a} hours of use.",
    "Contract {n} can be cancelled with {a} days of notice.",
    "Course {n} requires {a} credits before enrolment.",
)
_FILLER = (
    "This applies to customers in every region unless a local rule says otherwise. "
    "Questions about it go to the support desk."
)
_ABSENT = (
    "Office {n} keeps printed records for {a} months before shredding them.",
    "Team {n} reviews its budget every {a} quarters.",
)
_RISKS = ("none", "none", "none", "financial", "legal", "health", "safety", "security")
_VERDICTS = ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE")
_JUDGE_VERDICTS = ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE")


@dataclass
class GeneratedProject:
    slug: str
    project_id: int
    owner: str
    analysts: list[str]
    judge_id: int | None
    run_id: int | None
    answers: int
    claims: int
    labels: int
    seconds: float
    rows: dict[str, int] = field(default_factory=dict)


# --- the content ------------------------------------------------------------------------------


def _sentence(template: int, n: int, a: int) -> str:
    return _TEMPLATES[template % len(_TEMPLATES)].format(n=n, a=a)


def answer_content(n: int, *, passages: int = 5, claims: int = 4, kinds: list[int] | None = None):
    """Answer `n`: question, answer text, pile [(title, text)], claims [(text, kind, where)].

    `kind` indexes _VERDICTS (0 SUPPORTED, 1 CONTRADICTED, 2 NOT_IN_PILE); `where` is
    (passage index, start, end) of the sentence that decides a SUPPORTED or CONTRADICTED claim.
    """
    pile = []
    located = []  # (passage index, start, sentence) of every first sentence
    for k in range(passages):
        first = _sentence(n + 3 * k, n, 2 + (n + k) % 27)
        second = _sentence(n + 3 * k + 1, n + 1, 3 + (n + 2 * k) % 19)
        text = f"{first} {second} {_FILLER}"
        pile.append((f"Handbook section {n}.{k + 1}", text))
        located.append((k, 0, first))
    kinds = kinds or [0] * claims
    out = []
    for j in range(claims):
        kind = kinds[j]
        k, start, sentence = located[j % passages]
        if kind == 0:
            out.append((sentence, 0, (k, start, start + len(sentence))))
        elif kind == 1:
            a = 2 + (n + j % passages) % 27
            wrong = sentence.replace(f" {a} ", f" {a + 40} ", 1)
            out.append((wrong, 1, (k, start, start + len(sentence))))
        else:
            out.append((_ABSENT[j % 2].format(n=n, a=5 + j), 2, None))
    question = f"What do the rules say about case {n}?"
    text = " ".join(c[0] for c in out)
    return question, text, pile, out


# --- COPY plumbing ----------------------------------------------------------------------------


def _cell(value) -> str:
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if isinstance(value, dict | list):
        value = json.dumps(value)
    elif isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        text = (
            text.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return text


def _defaults(model: type[models.Model], given: list[str], now: datetime) -> tuple[list, str]:
    """Columns of `model` not in `given`, and their constant COPY cells (the field defaults)."""
    columns, cells = [], []
    for f in model._meta.concrete_fields:
        if f.column in given:
            continue
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            value = now
        else:
            value = f.get_default()
        columns.append(f.column)
        cells.append(_cell(value))
    return columns, ("\t" + "\t".join(cells)) if cells else ""


def _ids(table: str, n: int) -> int:
    """Reserve `n` ids from `table`'s sequence; return the first."""
    if n <= 0:
        return 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [table])
        first = cursor.fetchone()[0]
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, first + n - 1]
        )
    return first


def _copy(model: type[models.Model], columns: list[str], lines: Iterable[str], now) -> int:
    """COPY text `lines` (tab-separated cells of `columns`, no newline) into `model`'s table."""
    extra_columns, tail = _defaults(model, columns, now)
    sql = f"COPY {model._meta.db_table} ({', '.join([*columns, *extra_columns])}) FROM STDIN"
    count = 0
    buffer: list[str] = []
    with connection.cursor() as wrapper, wrapper.cursor.copy(sql) as copy:
        for line in lines:
            buffer.append(line + tail)
            count += 1
            if len(buffer) >= 20_000:
                copy.write("\n".join(buffer) + "\n")
                buffer.clear()
        if buffer:
            copy.write("\n".join(buffer) + "\n")
    return count


# --- the generator ----------------------------------------------------------------------------


def _users(slug: str, analysts: int) -> tuple:
    User = get_user_model()
    password = make_password(BENCH_PASSWORD)  # one hash for all: hashing is slow by design
    names = [f"{slug}-owner", *(f"{slug}-a{i:02d}" for i in range(1, analysts + 1))]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create(
        [User(username=name, password=password) for name in names if name not in existing]
    )
    by_name = dict(User.objects.filter(username__in=names).values_list("username", "id"))
    return names[0], names[1:], by_name


def _reverse_relations(model: type[models.Model]) -> list:
    """Every foreign key (and one-to-one) pointing at `model`, hidden M2M tables included."""
    return [
        f
        for f in model._meta.get_fields(include_hidden=True)
        if (f.one_to_many or f.one_to_one) and f.auto_created and not f.concrete
    ]


def _delete_where(cursor, model: type[models.Model], where: str, params: dict, depth=0) -> None:
    """DELETE `model` rows matching `where`, after whatever refers to them (set-based SQL)."""
    if depth > 8:
        raise RuntimeError(f"relations nest too deep at {model.__name__}")
    table = model._meta.db_table
    selected = f"SELECT {model._meta.pk.column} FROM {table} WHERE {where}"
    for relation in _reverse_relations(model):
        related = relation.related_model
        column = relation.field.column
        if relation.on_delete is models.SET_NULL:
            cursor.execute(
                f"UPDATE {related._meta.db_table} SET {column} = NULL WHERE {column} IN ({selected})",
                params,
            )
        elif related is not model:
            _delete_where(cursor, related, f"{column} IN ({selected})", params, depth + 1)
    cursor.execute(f"DELETE FROM {table} WHERE {where}", params)


def project_delete(*, slug: str) -> None:
    """Delete a project and everything that refers to it, fast: set-based SQL walking the
    model's reverse relations (the ORM's cascade fetches and deletes row by row, minutes at
    1M claims). Foreign-key triggers are skipped for the transaction, since every referring
    row is deleted first."""
    project_id = Project.objects.filter(slug=slug).values_list("id", flat=True).first()
    if project_id is None:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        # The rollup states' marks carry a plain state id, cascaded by a statement trigger
        # (metrics migration 0006) that the replica role skips: deleted here first.
        cursor.execute(
            "DELETE FROM metrics_rollupmark WHERE state_id IN "
            "(SELECT id FROM metrics_rollupstate WHERE project_id = %s)",
            [project_id],
        )
        # Claims, passages and answers first, so the walk below finds their tables empty.
        for model, where in (
            (Claim, "project_id = %(p)s"),
            (Passage, "answer_id IN (SELECT id FROM annotate_answer WHERE project_id = %(p)s)"),
            (Answer, "project_id = %(p)s"),
            (Project, "id = %(p)s"),
        ):
            _delete_where(cursor, model, where, {"p": project_id})


def tables_vacuum() -> None:
    """VACUUM ANALYZE the tables a project lives in, as autovacuum eventually would: after a
    deleted project, dead rows bloat them and a table vacuumed while empty tells the planner
    it is empty (an import's COMMIT then checked foreign keys by scanning an index: 320 s).
    Outside any transaction; the bench calls it untimed."""
    with connection.cursor() as cursor:
        for model in (
            Project,
            Membership,
            Answer,
            Passage,
            Claim,
            Reservation,
            Label,
            LabelHistory,
            Gold,
            JudgeVerdict,
        ):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")


@dataclass
class _Plan:
    """What every step of `project_generate` reads: the project, its sizes, the per-claim
    random draws and the first id of each table's reserved range."""

    slug: str
    project: Project
    claims: int
    claims_per_answer: int
    passages: int
    n_answers: int
    double_share: float
    seed: int
    analyst_ids: list[int]
    now: datetime
    say: Callable[[str], None]
    # Per claim: kind (gold truth), whether labelled, analyst, agreement, judge verdict.
    kinds: np.ndarray = None
    labelled_mask: np.ndarray = None
    analyst_pick: np.ndarray = None
    analyst_right: np.ndarray = None
    judge_right: np.ndarray = None
    judge_other: np.ndarray = None
    confidence_noise: np.ndarray = None
    answer_first: int = 0
    passage_first: int = 0
    claim_first: int = 0


@transaction.atomic
def project_generate(
    *,
    slug: str,
    claims: int,
    claims_per_answer: int = 4,
    passages: int = 5,
    analysts: int = 16,
    labelled: float = 1.0,
    double_share: float = 0.05,
    gold: bool = True,
    judge: bool = True,
    judge_agreement: float = 0.85,
    seed: int = 7,
    progress=None,
) -> GeneratedProject:
    """Generate project `slug` with `claims` claims (see the module docstring); replaces it.

    Split by step (the project, the random draws, answers with their piles and claims,
    labels, counters, gold, the judge run); the row loops stay inside the steps."""
    started = time.perf_counter()
    say = progress or (lambda message: None)
    # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: checked one row at a time at
    # COMMIT, which costs minutes at 1M claims. The rows written here are consistent by
    # construction, so this transaction skips the RI triggers (CHECK constraints, unique
    # indexes and NOT NULL still apply), as a bulk restore does.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
    project_delete(slug=slug)
    rng = np.random.default_rng(seed)
    owner, analyst_names, user_ids = _users(slug, analysts)
    plan = _Plan(
        slug=slug,
        project=_project_create(
            slug,
            user_ids[owner],
            [user_ids[n] for n in analyst_names],
            double_share=double_share,
            seed=seed,
        ),
        claims=claims,
        claims_per_answer=claims_per_answer,
        passages=passages,
        n_answers=-(-claims // claims_per_answer),
        double_share=double_share,
        seed=seed,
        analyst_ids=[user_ids[name] for name in analyst_names],
        now=datetime.now(UTC),
        say=say,
    )
    _draws(plan, rng, labelled=labelled, judge_agreement=judge_agreement)
    label_rows, required_of, n_claims = _answers_write(plan)
    rows = {
        "answers": plan.n_answers,
        "passages": plan.n_answers * passages,
        "claims": n_claims,
        "labels": _labels_write(plan, label_rows),
    }
    _counters_write(plan, label_rows, required_of)
    if gold and label_rows:
        rows["gold"] = _gold_write(plan, label_rows, owner_id=user_ids[owner])
    judge_id = run_id = None
    if judge:
        judge_id, run_id = _judge_write(plan, n_claims)
        rows["verdicts"] = n_claims
    # Planner statistics for the grown tables, as autovacuum would eventually have them: a
    # new project is invisible to stale statistics, and the queue's plan then degrades (see
    # RESULTS.md).
    with connection.cursor() as cursor:
        for model in (Answer, Claim, Label, Gold, JudgeVerdict):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    seconds = time.perf_counter() - started
    say(f"{slug}: generated in {seconds:.1f} s")
    return GeneratedProject(
        slug=slug,
        project_id=plan.project.pk,
        owner=owner,
        analysts=analyst_names,
        judge_id=judge_id,
        run_id=run_id,
        answers=plan.n_answers,
        claims=n_claims,
        labels=len(label_rows),
        seconds=seconds,
        rows=rows,
    )


def _project_create(
    slug: str, owner_id: int, analyst_ids: list[int], *, double_share: float, seed: int
) -> Project:
    """The project, its owner's and its analysts' memberships."""
    project = Project.objects.create(
        slug=slug,
        name=f"Benchmark {slug}",
        analysts_per_claim=1,
        double_labelled_share=double_share,
        queue_seed=seed,
        quote_required=True,
    )
    Membership.objects.create(project=project, user_id=owner_id, role=Role.OWNER)
    Membership.objects.bulk_create(
        [Membership(project=project, user_id=uid, role=Role.ANALYST) for uid in analyst_ids]
    )
    return project


def _draws(plan: _Plan, rng, *, labelled: float, judge_agreement: float) -> None:
    """The per-claim random draws (always in this order, so a seed gives the same data), then
    the id ranges of answers, passages and claims."""
    size = plan.n_answers * plan.claims_per_answer
    plan.kinds = rng.choice(3, size=size, p=[0.7, 0.1, 0.2])
    plan.labelled_mask = rng.random(size) < labelled
    plan.analyst_pick = rng.integers(0, len(plan.analyst_ids), size=size)
    plan.analyst_right = rng.random(size) < 0.95
    plan.judge_right = rng.random(size) < judge_agreement
    plan.judge_other = rng.integers(1, 3, size=size)
    plan.confidence_noise = rng.beta(2, 5, size=size)
    plan.answer_first = _ids(Answer._meta.db_table, plan.n_answers)
    plan.passage_first = _ids(Passage._meta.db_table, plan.n_answers * plan.passages)
    plan.claim_first = _ids(Claim._meta.db_table, size)


def _answers_write(plan: _Plan) -> tuple[list[tuple], dict[int, int], int]:
    """COPY the answers, passages and claims, 200k claims at a time.

    One pass over the answers builds their text lines and remembers per claim what labels,
    gold and verdicts need. Returns (label rows (claim_id, analyst_id, verdict, passage_id,
    start, end, quote), labels required by labelled claim id, claims written)."""
    slug, project, passages, claims_per_answer = (
        plan.slug,
        plan.project,
        plan.passages,
        plan.claims_per_answer,
    )
    n_answers, claims, seed, double_share = (
        plan.n_answers,
        plan.claims,
        plan.seed,
        plan.double_share,
    )
    kinds, labelled_mask, analyst_pick, analyst_right = (
        plan.kinds,
        plan.labelled_mask,
        plan.analyst_pick,
        plan.analyst_right,
    )
    analyst_ids = plan.analyst_ids
    plan.say(
        f"{slug}: writing {n_answers:,} answers with {passages} passages and "
        f"{claims_per_answer} claims each"
    )
    answer_lines: list[str] = []
    passage_lines: list[str] = []
    claim_lines: list[str] = []
    label_rows: list[tuple] = []
    required_of: dict[int, int] = {}
    made = 0
    for i in range(n_answers):
        n = i + 1
        answer_id = plan.answer_first + i
        per = claims_per_answer if (i + 1) * claims_per_answer <= claims else claims - made
        ks = [int(k) for k in kinds[made : made + per]]
        question, text, pile, out = answer_content(n, passages=passages, claims=per, kinds=ks)
        external_id = f"a{n}"
        risk = _RISKS[n % len(_RISKS)]
        answer_lines.append(
            f"{answer_id}\t{project.pk}\t{external_id}\t{i}\t{question}\t{text}\t{risk}\tt"
        )
        base_passage = plan.passage_first + i * passages
        for k, (title, body) in enumerate(pile):
            passage_lines.append(
                f"{base_passage + k}\t{answer_id}\t{k + 1}\tdoc-{n}-{k + 1}\t{title}\t{body}"
            )
        for j, (claim_text, kind, where) in enumerate(out):
            index = made + j
            claim_id = plan.claim_first + i * claims_per_answer + j
            key, required = claim_queue_fields(
                seed=seed,
                answer_external_id=external_id,
                position=j,
                text=claim_text,
                by_answer=project.queue_order == "answer",
                analysts_per_claim=1,
                double_share=double_share,
            )
            n_labels = 0
            if labelled_mask[index]:
                first = analyst_ids[int(analyst_pick[index])]
                who = [first]
                if required > 1:
                    who.append(analyst_ids[(int(analyst_pick[index]) + 1) % len(analyst_ids)])
                for w, annotator in enumerate(who):
                    verdict_index = kind if (analyst_right[index] or w > 0) else (kind + 1) % 3
                    verdict = _VERDICTS[verdict_index]
                    if verdict == "NOT_IN_PILE" or where is None:
                        label_rows.append((claim_id, annotator, verdict, None, None, None, ""))
                    else:
                        k, start, end = where
                        quote = pile[k][1][start:end]
                        label_rows.append(
                            (claim_id, annotator, verdict, base_passage + k, start, end, quote)
                        )
                n_labels = len(who)
                required_of[claim_id] = required
            claim_lines.append(
                f"{claim_id}\t{project.pk}\t{answer_id}\t{claim_text}\t{j}\t{key}\t{required}\t{n_labels}"
            )
        made += per
        if len(claim_lines) >= 200_000 or i == n_answers - 1:
            _answer_lines_copy(answer_lines, passage_lines, claim_lines, plan.now)
            plan.say(f"{slug}: {made:,} claims written")
    return label_rows, required_of, made


def _answer_lines_copy(
    answer_lines: list[str], passage_lines: list[str], claim_lines: list[str], now: datetime
) -> None:
    """COPY one chunk of answer, passage and claim lines, then empty the lists."""
    _copy(
        Answer,
        [
            "id",
            "project_id",
            "external_id",
            "position",
            "question",
            "text",
            "risk_category",
            "answerable",
        ],
        answer_lines,
        now,
    )
    _copy(Passage, ["id", "answer_id", "rank", "source_id", "title", "text"], passage_lines, now)
    _copy(
        Claim,
        [
            "id",
            "project_id",
            "answer_id",
            "text",
            "position",
            "queue_key",
            "labels_required",
            "label_count",
        ],
        claim_lines,
        now,
    )
    answer_lines.clear()
    passage_lines.clear()
    claim_lines.clear()


def _labels_write(plan: _Plan, label_rows: list[tuple]) -> int:
    """COPY the labels and a CREATED history row each; the number of labels."""
    label_first = _ids(Label._meta.db_table, len(label_rows))
    history_first = _ids(LabelHistory._meta.db_table, len(label_rows))

    def label_lines() -> Iterator[str]:
        for offset, (claim_id, annotator, verdict, passage_id, start, end, quote) in enumerate(
            label_rows
        ):
            yield (
                f"{label_first + offset}\t{claim_id}\t{annotator}\t{verdict}\t{_cell(passage_id)}\t"
                f"{_cell(start)}\t{_cell(end)}\t{quote}"
            )

    def history_lines() -> Iterator[str]:
        for offset, (claim_id, annotator, verdict, passage_id, start, end, quote) in enumerate(
            label_rows
        ):
            yield (
                f"{history_first + offset}\t{label_first + offset}\t{claim_id}\t{annotator}\t"
                f"created\t{verdict}\t{_cell(passage_id)}\t{_cell(start)}\t{_cell(end)}\t{quote}"
            )

    plan.say(f"{plan.slug}: writing {len(label_rows):,} labels and their history")
    columns = [
        "id",
        "claim_id",
        "annotator_id",
        "verdict",
        "evidence_passage_id",
        "evidence_start",
        "evidence_end",
        "evidence_quote",
    ]
    _copy(Label, columns, label_lines(), plan.now)
    _copy(
        LabelHistory,
        [
            "id",
            "label_id_at_time",
            "claim_id",
            "annotator_id",
            "action",
            "verdict",
            "evidence_passage_id_at_time",
            "evidence_start",
            "evidence_end",
            "evidence_quote",
        ],
        history_lines(),
        plan.now,
    )
    return len(label_rows)


def _counters_write(plan: _Plan, label_rows: list[tuple], required_of: dict[int, int]) -> None:
    """The project's completion and answer counters and each analyst's labels saved."""
    project = plan.project
    complete = sum(1 for _ in required_of)  # every labelled claim got exactly its quota
    Project.objects.filter(pk=project.pk).update(
        claims_complete=complete, answers_count=plan.n_answers
    )
    per_analyst: dict[int, int] = {}
    for row in label_rows:
        per_analyst[row[1]] = per_analyst.get(row[1], 0) + 1
    for uid, count in per_analyst.items():
        Membership.objects.filter(project=project, user_id=uid).update(labels_saved=count)


def _gold_write(plan: _Plan, label_rows: list[tuple], *, owner_id: int) -> int:
    """COPY gold for every labelled claim: unanimous where the labels agree, else a lead
    adjudicates (to the truth). The number of gold rows."""
    plan.say(f"{plan.slug}: writing gold")
    verdicts_of: dict[int, list[str]] = {}
    for claim_id, _annotator, verdict, *_ in label_rows:
        verdicts_of.setdefault(claim_id, []).append(verdict)
    gold_first = _ids(Gold._meta.db_table, len(verdicts_of))
    kinds, claim_first = plan.kinds, plan.claim_first

    def gold_lines() -> Iterator[str]:
        for offset, (claim_id, verdicts) in enumerate(verdicts_of.items()):
            if len(set(verdicts)) == 1:
                yield f"{gold_first + offset}\t{claim_id}\t{verdicts[0]}\tunanimous\t\\N"
            else:
                yield (
                    f"{gold_first + offset}\t{claim_id}\t{_VERDICTS[int(kinds[claim_id - claim_first])]}\t"
                    f"adjudicated\t{owner_id}"
                )

    return _copy(
        Gold, ["id", "claim_id", "verdict", "source", "decided_by_id"], gold_lines(), plan.now
    )


def _judge_write(plan: _Plan, n_claims: int) -> tuple[int, int]:
    """A finished verify run of the loopback judge with a verdict and a confidence for every
    claim (COPY); (judge id, run id)."""
    project, now = plan.project, plan.now
    plan.say(f"{plan.slug}: writing a judge run with {n_claims:,} verdicts")
    judge_obj = Judge.objects.create(
        project=project,
        name="loopback judge",
        backend="openai",
        model="loopback",
        endpoint="bench-loopback",  # a written run: no endpoint is called
        verify_prompt=VERIFY_PROMPT,
        max_concurrency=32,
    )
    run = JudgeRun.objects.create(
        judge=judge_obj,
        project=project,
        kind=JudgeRun.Kind.VERIFY,
        status=JudgeRun.Status.DONE,
        backend="openai",
        model="loopback",
        prompt_version=prompt_version_of(VERIFY_PROMPT),
        prompt_text=VERIFY_PROMPT,
        total=n_claims,
        done=n_claims,
        started_at=now,
        finished_at=now,
    )
    run_id = run.pk
    verdict_first = _ids(JudgeVerdict._meta.db_table, n_claims)
    n_answers, claims_per_answer, claim_first = (
        plan.n_answers,
        plan.claims_per_answer,
        plan.claim_first,
    )
    kinds, judge_right, judge_other, confidence_noise = (
        plan.kinds,
        plan.judge_right,
        plan.judge_other,
        plan.confidence_noise,
    )

    def verdict_lines() -> Iterator[str]:
        index = 0
        for i in range(n_answers):
            per = min(claims_per_answer, n_claims - i * claims_per_answer)
            for j in range(per):
                truth_index = int(kinds[index])
                chosen = (
                    truth_index
                    if judge_right[index]
                    else (truth_index + int(judge_other[index])) % 3
                )
                # P(SUPPORTED): high when the judge says SUPPORTED, low otherwise, noisy.
                noise = float(confidence_noise[index])
                p = 1.0 - 0.6 * noise if chosen == 0 else 0.6 * noise
                claim_id = claim_first + i * claims_per_answer + j
                yield (
                    f"{verdict_first + index}\t{run_id}\t{claim_id}\t{_JUDGE_VERDICTS[chosen]}\t"
                    f"{p:.4f}\t{_JUDGE_VERDICTS[chosen]}\t100.0\t60\t1"
                )
                index += 1

    _copy(
        JudgeVerdict,
        [
            "id",
            "run_id",
            "claim_id",
            "verdict",
            "confidence",
            "raw_response",
            "latency_ms",
            "prompt_tokens",
            "completion_tokens",
        ],
        verdict_lines(),
        now,
    )
    JudgeRun.objects.filter(pk=run_id).update(
        prompt_tokens=60 * n_claims, completion_tokens=n_claims
    )
    return judge_obj.pk, run_id


def answers_jsonl_write(
    path, *, answers: int, passages: int = 5, claims: int = 4, start: int = 1
) -> int:
    """Write `answers` native-format answers (pile and claims) as JSON Lines; return bytes."""
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        lines = []
        for n in range(start, start + answers):
            kinds = [(n + j) % 5 // 3 * (1 + (n + j) % 2) for j in range(claims)]
            question, text, pile, out = answer_content(
                n, passages=passages, claims=claims, kinds=kinds
            )
            record = {
                "id": f"q{n}",
                "question": question,
                "answer": text,
                "pile": [
                    {"id": f"doc-{n}-{k + 1}", "title": title, "text": body}
                    for k, (title, body) in enumerate(pile)
                ],
                "risk_category": _RISKS[n % len(_RISKS)],
                "claims": [{"text": claim_text} for claim_text, _kind, _where in out],
            }
            lines.append(json.dumps(record, ensure_ascii=False))
            if len(lines) >= 5000:
                chunk = "\n".join(lines) + "\n"
                handle.write(chunk)
                written += len(chunk.encode())
                lines.clear()
        if lines:
            chunk = "\n".join(lines) + "\n"
            handle.write(chunk)
            written += len(chunk.encode())
    return written

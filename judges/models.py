"""Judges (configured automatic labellers), their runs, and the verdicts each run wrote.

An audit belongs to one instrument: judge, model and prompt version. A run therefore snapshots
the backend, model, prompt text and its version when it starts; editing the judge later makes
new runs a new instrument without touching the old ones.
"""

import hashlib

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from annotate.models import Answer, Claim, Project, System
from annotate.vocabulary import UNPARSEABLE, verdict_choices
from judges.backends.registry import backends
from judges.prompts import DEFAULT_PAIRWISE_PROMPT


def prompt_version(text: str) -> str:
    """A prompt's version is the hash of its text: change the text, get a new version."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# A judge writes one of the three verdicts, or UNPARSEABLE (annotate/vocabulary.py).
JudgeVerdictChoice = models.TextChoices(
    "JudgeVerdictChoice", verdict_choices((UNPARSEABLE, "Unparseable"))
)


class Backend(models.TextChoices):
    """The built-in backends' names, for code that names one; what a judge may hold is every
    registered backend (judges/backends/registry.py), checked by `backend_validate`."""

    OPENAI = "openai", "OpenAI-compatible endpoint"
    BASELINE = "baseline", "Offline lexical baseline"
    BITS = "bits", "Grounding bits (prompt log-probabilities of a completions endpoint)"
    IMPORTED = "imported", "Imported verdicts"


def backend_validate(value: str) -> None:
    """A judge's (or run's) backend is one the registry knows: a new backend is one file in
    judges/backends/, with no choices or constraint here to change."""
    if value not in backends():
        raise ValidationError(
            f"Unknown judge backend {value!r}: use {', '.join(sorted(backends()))}."
        )


class Judge(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    backend = models.CharField(
        max_length=10, default=Backend.BASELINE, validators=[backend_validate]
    )
    model = models.CharField(max_length=200, blank=True)
    # The NAME of an endpoint the operator declared (judges/endpoints.py): its URL and key
    # variable live in the settings, never here, so a judge cannot choose where it calls.
    endpoint = models.CharField(
        max_length=100,
        blank=True,
        help_text="Name of an LLM endpoint the operator declared (FAITHAUDIT_LLM_ENDPOINTS).",
    )
    temperature = models.FloatField(default=0.0)
    max_concurrency = models.PositiveSmallIntegerField(default=8)
    # Asked for by the judge; the endpoint's caps bound them at every call.
    timeout_seconds = models.FloatField(default=30.0)
    max_retries = models.PositiveSmallIntegerField(default=5)
    verify_prompt = models.TextField(blank=True)
    decompose_prompt = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    # A judge version (issue 28): the judge it was made from, and the few-shot examples its
    # verify prompt carries — [{claim_id, answer_id, claim, gold, quote}], every one from the
    # project's development gold (judges/versions.py refuses held-out gold).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="versions"
    )
    few_shot = models.JSONField(
        default=list, blank=True, help_text="Few-shot examples: development gold claims."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by live monitoring (monitor.drift) when the judge's error rates on a human anchor set
    # have moved; every page showing this judge's judge-assisted figures flags them until a
    # lead re-audits the judge and clears it.
    drifted_on = models.DateField(null=True, blank=True)
    drift_sentence = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="judge_name_unique"),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1), name="judge_concurrency_ge_1"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def prompt_version(self) -> str:
        return prompt_version(self.verify_prompt)

    @property
    def pairwise_prompt(self) -> str:
        """The pairwise prompt (`parameters["pairwise_prompt"]`, else the default)."""
        return (self.parameters or {}).get("pairwise_prompt") or DEFAULT_PAIRWISE_PROMPT

    @property
    def pairwise_prompt_version(self) -> str:
        """The version a pairwise run of this judge records: the hash of its pairwise prompt."""
        return prompt_version(self.pairwise_prompt)


def _unit_interval(seed: int, answer_id: int) -> float:
    digest = hashlib.sha256(f"{seed}:{answer_id}".encode()).hexdigest()
    return int(digest[:15], 16) / 16**15


class GoldSplit(models.Model):
    """A project's gold split once, by answer, into development and held-out (issue 28).

    Membership is not stored claim by claim but derived by a stored rule: an answer is held out
    when u(seed, answer) < heldout_share, u a SHA-256 of seed and answer id mapped to [0, 1).
    Claims of one answer never straddle; gold added later joins by the same rule; and since the
    draw is an independent coin per answer whatever the stratum, the held-out answers are a
    Poisson subsample of every design stratum at the same rate, so the design's weights (N_h/n_h,
    1/π) stay the estimators' weights on the held-out part.
    """

    RULE = "sha256(seed:answer_id) < heldout_share"

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="gold_split")
    seed = models.PositiveIntegerField()
    heldout_share = models.FloatField()
    rule = models.CharField(max_length=100, default=RULE)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(heldout_share__gt=0) & Q(heldout_share__lt=1),
                name="goldsplit_share_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"gold split of project {self.project_id} (seed {self.seed}, {self.heldout_share:.0%} held out)"

    def is_heldout(self, answer_id: int) -> bool:
        return _unit_interval(self.seed, int(answer_id)) < self.heldout_share


class JudgeRun(models.Model):
    class Kind(models.TextChoices):
        VERIFY = "verify", "Verify claims against the pile"
        CITATION = "citation", "Verify claims against their cited passages"
        CANARY = "canary", "Leniency canary"
        PAIRWISE = "pairwise", "Pairwise: two systems' answers, both orders"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Scope(models.TextChoices):
        ALL = "all"
        UNJUDGED = "unjudged"
        GOLD = "gold"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_runs")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.VERIFY)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.ALL)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # The instrument, frozen at start.
    backend = models.CharField(max_length=10, validators=[backend_validate])
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    prompt_text = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    answer_ids = models.JSONField(
        null=True,
        blank=True,
        help_text="The answers whose claims the run covers, frozen at the start (the answers "
        "list's filtered set); empty: every answer of the project.",
    )
    answers_filter = models.CharField(
        max_length=500, blank=True, help_text="The answers list's filters the run was started with."
    )
    # Progress and cost, updated in chunks.
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    unparseable = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    latency_ms_total = models.FloatField(default=0.0)
    canary_pass_rate = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The lease: one task execution at a time works on a run. The holder touches heartbeat_at
    # while it works; a lease whose heartbeat is older than JUDGE_RUN_LEASE_SECONDS is free to
    # take (its worker died), which is how a run resumes. See judges/tasks.py.
    lease_owner = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed", "cancelled"]),
                name="judgerun_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} run {self.pk} ({self.kind}, {self.status})"

    @property
    def mean_latency_ms(self) -> float | None:
        finished = self.done + self.unparseable
        return self.latency_ms_total / finished if finished else None


class Canary(models.Model):
    """A statement true in the world but absent from a pile: a fair judge says NOT_IN_PILE."""

    class Source(models.TextChoices):
        LIST = "list", "Lead's list"
        TRANSPLANT = "transplant", "Transplanted gold-supported claim"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="canaries")
    text = models.TextField()
    pile_answer = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="+", help_text="Whose pile it is checked on."
    )
    source = models.CharField(max_length=12, choices=Source.choices)
    source_claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "canaries"

    def __str__(self) -> str:
        return self.text[:80]


class JudgeVerdict(models.Model):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_verdicts"
    )
    canary = models.ForeignKey(
        Canary, null=True, blank=True, on_delete=models.CASCADE, related_name="verdicts"
    )
    verdict = models.CharField(max_length=12, choices=JudgeVerdictChoice.choices)
    confidence = models.FloatField(
        null=True, blank=True, help_text="P(SUPPORTED); empty when the backend gives none."
    )
    raw_response = models.TextField(blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # Grounding bits (backend "bits", judges/backends/bits_backend.py): log2 p(claim | question,
    # pile) - log2 p(claim | question), summed over the claim's tokens; empty for other backends
    # and for an UNPARSEABLE reply (never made up).
    bits = models.FloatField(
        null=True, blank=True, help_text="Bits the pile adds to the claim (grounding bits)."
    )
    log2p_with_pile = models.FloatField(
        null=True, blank=True, help_text="log2 p(claim tokens | question, pile)."
    )
    log2p_without_pile = models.FloatField(
        null=True, blank=True, help_text="log2 p(claim tokens | question)."
    )
    claim_tokens_with_pile = models.PositiveIntegerField(null=True, blank=True)
    claim_tokens_without_pile = models.PositiveIntegerField(null=True, blank=True)
    token_bits = models.JSONField(
        null=True,
        blank=True,
        help_text="Per claim token: [token, bits] (aligned tokens), or both sides' "
        "[token, log2p] lists when the two prompts tokenised the claim differently.",
    )
    # Set when a lead changes the claim's text (edit, split, merge): the verdict judged text the
    # claim no longer has, so it counts nowhere (report, agreement, audit card, export, the
    # "unjudged" scope) but is kept, with that text, as the record of what the judge said.
    # Labels on an edited claim are flagged for review the same way (`Label.needs_review`).
    stale = models.BooleanField(
        default=False, help_text="Made on the claim's previous text; counts nowhere."
    )
    stale_claim_text = models.TextField(
        blank=True, help_text="The claim's text this verdict judged, kept when it went stale."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Stale verdicts are few: counting them (run page, report method) reads this small
        # index, not the run's verdicts.
        indexes = [
            models.Index(fields=["run"], condition=Q(stale=True), name="verdict_stale_run_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["run", "claim"], name="verdict_one_per_run_claim"),
            models.UniqueConstraint(fields=["run", "canary"], name="verdict_one_per_run_canary"),
            models.CheckConstraint(
                condition=Q(verdict__in=JudgeVerdictChoice.values), name="verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True)
                | (Q(confidence__gte=0) & Q(confidence__lte=1)),
                name="verdict_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=Q(claim__isnull=False, canary__isnull=True)
                | Q(claim__isnull=True, canary__isnull=False),
                name="verdict_claim_xor_canary",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on claim {self.claim_id} (run {self.run_id})"


class PairwiseVerdict(models.Model):
    """A judge's verdict on one pair (one question, the answers of systems A and B) shown in one
    order. Every pair is asked in both orders (seed 004); `verdict` names a position, not a
    system: "first" under order "b_first" is a win for B. UNPARSEABLE keeps its `reason` and
    counts nowhere (metrics.services.compare counts it apart)."""

    class Order(models.TextChoices):
        A_FIRST = "a_first", "A's answer first"
        B_FIRST = "b_first", "B's answer first"

    class Choice(models.TextChoices):
        FIRST = "first", "First"
        SECOND = "second", "Second"
        TIE = "tie", "Tie"
        UNPARSEABLE = UNPARSEABLE, "Unparseable"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="pairwise_verdicts")
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="pairwise_verdicts")
    question_id = models.CharField(max_length=200, help_text="The pair's question key.")
    system_a = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    system_b = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=8, choices=Order.choices)
    verdict = models.CharField(max_length=12, choices=Choice.choices)
    reason = models.CharField(max_length=200, blank=True, help_text="Why it is UNPARSEABLE.")
    raw_response = models.TextField(blank=True, help_text="The reply, truncated.")
    latency_ms = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "question_id", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "question_id", "order"], name="pairwise_one_per_run_pair_order"
            ),
            models.CheckConstraint(
                condition=Q(order__in=["a_first", "b_first"]), name="pairwise_order_valid"
            ),
            models.CheckConstraint(
                condition=Q(verdict__in=["first", "second", "tie", UNPARSEABLE]),
                name="pairwise_verdict_valid",
            ),
            models.CheckConstraint(
                condition=~Q(system_a=models.F("system_b")), name="pairwise_two_systems"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.question_id} ({self.order}, run {self.run_id})"


class JudgeFailure(models.Model):
    """A claim (or canary) a run could not judge: retries exhausted or the request refused.

    Kept apart from verdicts so a failure is never read as any verdict, and so a resumed run
    does not call the endpoint again for it. `error` never contains the API key.
    """

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="failures")
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    canary = models.ForeignKey(
        Canary, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    error = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "claim"], name="failure_one_per_run_claim"),
            models.UniqueConstraint(fields=["run", "canary"], name="failure_one_per_run_canary"),
            models.CheckConstraint(
                condition=Q(claim__isnull=False, canary__isnull=True)
                | Q(claim__isnull=True, canary__isnull=False),
                name="failure_claim_xor_canary",
            ),
        ]

    def __str__(self) -> str:
        return f"failed on claim {self.claim_id or '-'} / canary {self.canary_id or '-'}: {self.error[:60]}"


class SplitJob(models.Model):
    """Splitting answers into claims on a worker: through a judge's decompose prompt (by LLM),
    or by annotate's rule splitter over many answers at once (by rule, no judge).

    The work runs in the `split_claims` task, never inside a web request; the job holds the
    progress the claims page and the bulk split page poll. `answer_ids` is the work, frozen at
    the start; `done + failed` answers of it are behind, so a redelivered task carries on
    from there.
    """

    class Method(models.TextChoices):
        RULE = "rule", "By rule"
        LLM = "llm", "By LLM"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Splitting"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="split_jobs")
    method = models.CharField(max_length=4, choices=Method.choices, default=Method.LLM)
    judge = models.ForeignKey(
        Judge,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="split_jobs",
        help_text="By LLM: the judge whose decompose prompt splits; empty by rule.",
    )
    answer = models.ForeignKey(
        Answer,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The one answer to split; empty: the project's answers.",
    )
    answer_ids = models.JSONField(default=list, blank=True)
    answers_filter = models.CharField(
        max_length=500, blank=True, help_text="The answers list's filters the job was started with."
    )
    force = models.BooleanField(default=False)
    origin = models.CharField(max_length=60, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    claims_created = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    failures = models.JSONField(
        default=list, blank=True, help_text="[{answer, error}] for answers that could not split."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]),
                name="splitjob_status_valid",
            ),
            # A judge exactly when the split is by LLM: a rule job has no prompt to name.
            models.CheckConstraint(
                condition=(Q(method="llm") & Q(judge__isnull=False))
                | (Q(method="rule") & Q(judge__isnull=True)),
                name="splitjob_judge_iff_llm",
            ),
        ]

    def __str__(self) -> str:
        return f"split job {self.pk} ({self.status}, {self.done + self.failed}/{self.total})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def processed(self) -> int:
        return self.done + self.failed

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.finished else 0
        return min(100, round(100 * self.processed / self.total))

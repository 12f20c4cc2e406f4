"""The queue's designs (issue 14): active (u/π keys), stratified (Neyman's stratum), selective
judging, and what labels record of them."""

import hashlib

import numpy as np
import pytest
from scipy import stats as scipy_stats

from annotate.models import ActiveStratum, Answer, Claim, Label, Project, Verdict
from annotate.queue_order import claim_queue_fields
from annotate.services.design import (
    DesignError,
    claims_design_store,
    neyman_next_stratum,
    strata_ranked,
)
from annotate.services.label_undo import label_undo
from annotate.services.labels import label_save_and_next
from annotate.services.projects import project_settings_update
from annotate.services.queue import claim_next_for_user
from tests.factories import MembershipFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def bulk_project(*, answers: int, per_answer: int, order: str = "claim", **fields) -> Project:
    """A project of `answers` × `per_answer` claims with today's seeded uniform keys, built in
    bulk (what the import writes)."""
    project = ProjectFactory(queue_order=order, **fields)
    rows = Answer.objects.bulk_create(
        [
            Answer(project=project, external_id=f"ans-{a}", position=a, question="q", text="t")
            for a in range(answers)
        ]
    )
    claims = []
    for answer in rows:
        for c in range(per_answer):
            text = f"Claim {c} of {answer.external_id}."
            key, required = claim_queue_fields(
                seed=project.queue_seed,
                answer_external_id=answer.external_id,
                position=c,
                text=text,
                by_answer=order == "answer",
                analysts_per_claim=1,
                double_share=0.0,
            )
            claims.append(
                Claim(
                    project=project,
                    answer=answer,
                    text=text,
                    position=c,
                    queue_key=key,
                    labels_required=required,
                )
            )
    Claim.objects.bulk_create(claims)
    return project


def _u(seed: int, external_id: str, position: int, text: str) -> float:
    """u of a claim, recomputed here from the hash the queue documents (blake2b, 8 bytes,
    top 62 bits; u = its top 42 bits, plus half a step)."""
    digest = hashlib.blake2b(
        f"{seed}\x1f{external_id}\x1f{position}\x1f{text}".encode(), digest_size=8
    ).digest()
    key62 = int.from_bytes(digest, "big") >> 2
    return ((key62 >> 20) + 0.5) / 2**42


def served_order(project: Project) -> list[int]:
    return list(
        Claim.objects.filter(project=project)
        .order_by("queue_key", "id")
        .values_list("id", flat=True)
    )


def save_next(project, member, claim, verdict=Verdict.NOT_IN_PILE):
    project.refresh_from_db()
    return label_save_and_next(
        project=project,
        membership=member,
        annotator=member.user,
        claim_id=claim.pk,
        verdict=verdict,
    )


# ------------------------------------------------------------------------------------------
# active: u/π


@pytest.fixture
def two_groups():
    """2,000 claims a claim at a time: the first 1,000 (by id) with π = 0.2, the rest 0.1."""
    project = bulk_project(answers=400, per_answer=5)
    ids = served_order(project)
    ids.sort()
    pi = {cid: (0.2 if i < 1000 else 0.1) for i, cid in enumerate(ids)}
    claims_design_store(project=project, design="active", probabilities=pi, run_id=1, budget=300)
    return project, pi


def test_the_active_order_is_ascending_u_over_pi(two_groups):
    project, pi = two_groups
    rows = Claim.objects.filter(project=project).select_related("answer")
    ratio = {
        c.pk: _u(project.queue_seed, c.answer.external_id, c.position, c.text) / pi[c.pk]
        for c in rows
    }
    assert served_order(project) == sorted(ratio, key=lambda cid: (ratio[cid], cid))
    assert Claim.objects.filter(project=project, inclusion_probability=0.2).count() == 1000


def test_a_claim_with_twice_the_pi_is_served_first_twice_as_often(two_groups):
    # Sequential Poisson sampling: among the first n served, each claim's chance is ∝ π, so the
    # high-π group's share is 0.2 / (0.2 + 0.1) = 2/3 (1,000 claims each). Binomial sd at
    # n = 300 is sqrt(2/9 / 300) = 0.027: a 4-sd tolerance. Uniform order: 1/2, outside it.
    project, pi = two_groups
    for n in (100, 300, 600):
        first = served_order(project)[:n]
        share = sum(pi[cid] == 0.2 for cid in first) / n
        sd = np.sqrt((2 / 3) * (1 / 3) / n)
        assert abs(share - 2 / 3) <= 4 * sd, (n, share)
    # and the uniform order does not do this (the test can fail)
    claims_design_store(project=project, design="uniform")
    first = served_order(project)[:300]
    share = sum(pi[cid] == 0.2 for cid in first) / 300
    assert scipy_stats.binomtest(round(share * 300), 300, 2 / 3).pvalue < 1e-4


def test_switching_back_to_uniform_restores_todays_keys_exactly(two_groups):
    project, _ = two_groups
    claims_design_store(project=project, design="uniform")
    rows = Claim.objects.filter(project=project).select_related("answer")
    for claim in rows:
        fresh, _ = claim_queue_fields(
            seed=project.queue_seed,
            answer_external_id=claim.answer.external_id,
            position=claim.position,
            text=claim.text,
            by_answer=False,
            analysts_per_claim=1,
            double_share=0.0,
        )
        assert claim.queue_key == fresh
    project.refresh_from_db()
    assert project.queue_design == "uniform"


def test_the_queue_serves_the_lowest_u_over_pi_and_labels_record_pi_and_design():
    project = bulk_project(answers=20, per_answer=3)
    ids = sorted(served_order(project))
    pi = {cid: 0.05 + 0.9 * (i % 7) / 6 for i, cid in enumerate(ids)}
    claims_design_store(project=project, design="active", probabilities=pi, run_id=4, budget=20)
    member = MembershipFactory(project=project)
    project.refresh_from_db()
    order = served_order(project)
    claim = claim_next_for_user(project=project, user=member.user)
    assert claim.pk == order[0]
    for expected in order[1:6]:
        label, claim = save_next(project, member, claim)
        assert label.design == "active"
        assert label.inclusion_probability == pytest.approx(pi[label.claim_id])
        assert claim.pk == expected
    stored = Label.objects.get(pk=Label.objects.latest("id").pk)
    assert (stored.design, stored.inclusion_probability) == ("active", pi[stored.claim_id])
    # A claim reached outside the queue order (j/k): design "", no π, outside_queue as before.
    other = Claim.objects.get(pk=order[10])
    label, _ = save_next(project, member, other)
    stored = Label.objects.get(pk=label.pk) if label.pk else Label.objects.get(claim=other)
    assert (stored.design, stored.inclusion_probability) == ("", None)
    assert stored.stratum == {"outside_queue": True}


def test_uniform_labels_record_the_uniform_design_without_pi():
    project = bulk_project(answers=3, per_answer=2)
    member = MembershipFactory(project=project)
    claim = claim_next_for_user(project=project, user=member.user)
    save_next(project, member, claim)
    stored = Label.objects.get(claim=claim)
    assert (stored.design, stored.inclusion_probability) == ("uniform", None)


def test_pi_is_frozen_for_labelled_claims():
    project = bulk_project(answers=10, per_answer=2)
    ids = sorted(served_order(project))
    claims_design_store(
        project=project, design="active", probabilities=dict.fromkeys(ids, 0.3), budget=6
    )
    member = MembershipFactory(project=project)
    project.refresh_from_db()
    first = claim_next_for_user(project=project, user=member.user)
    save_next(project, member, first)
    claims_design_store(
        project=project, design="active", probabilities=dict.fromkeys(ids, 0.6), budget=12
    )
    assert Claim.objects.get(pk=first.pk).inclusion_probability == 0.3
    assert set(
        Claim.objects.filter(project=project)
        .exclude(pk=first.pk)
        .values_list("inclusion_probability", flat=True)
    ) == {0.6}


def test_an_answer_at_a_time_shares_the_answers_pi_and_keeps_reading_order():
    project = bulk_project(answers=30, per_answer=4, order="answer")
    rows = list(Claim.objects.filter(project=project).order_by("id"))
    answers = sorted({c.answer_id for c in rows})
    answer_pi = {a: 0.1 + 0.8 * (i % 5) / 4 for i, a in enumerate(answers)}
    claims_design_store(
        project=project,
        design="active",
        probabilities={c.pk: answer_pi[c.answer_id] for c in rows},
        budget=40,
    )
    served = list(
        Claim.objects.filter(project=project)
        .order_by("queue_key", "id")
        .values_list("answer_id", "position", "answer__external_id")
    )
    # each answer's claims come together, in position order
    blocks = [served[i : i + 4] for i in range(0, len(served), 4)]
    for block in blocks:
        assert len({row[0] for row in block}) == 1
        assert [row[1] for row in block] == [0, 1, 2, 3]

    # answers in ascending u_a/π_a, u_a from the answer's own hash (top 50 bits of 62)
    def u_answer(external_id):
        digest = hashlib.blake2b(f"{project.queue_seed}\x1f{external_id}".encode(), digest_size=8)
        bits = int.from_bytes(digest.digest(), "big") >> 14
        return (bits + 0.5) / 2**50

    order = [block[0][0] for block in blocks]
    ext = {row[0]: row[2] for row in served}
    assert order == sorted(order, key=lambda a: u_answer(ext[a]) / answer_pi[a])
    # back to uniform: the import's answer-at-a-time keys, exactly
    claims_design_store(project=project, design="uniform")
    for claim in Claim.objects.filter(project=project).select_related("answer"):
        fresh, _ = claim_queue_fields(
            seed=project.queue_seed,
            answer_external_id=claim.answer.external_id,
            position=claim.position,
            text=claim.text,
            by_answer=True,
            analysts_per_claim=1,
            double_share=0.0,
        )
        assert claim.queue_key == fresh


def test_changing_the_order_under_the_active_design_is_refused():
    from django.core.exceptions import ValidationError

    project = bulk_project(answers=2, per_answer=2)
    ids = served_order(project)
    claims_design_store(
        project=project, design="active", probabilities=dict.fromkeys(ids, 0.5), budget=2
    )
    project.refresh_from_db()
    with pytest.raises(ValidationError) as error:
        project_settings_update(project=project, queue_order="answer")
    assert "queue_order" in error.value.message_dict
    assert Project.objects.get(pk=project.pk).queue_order == "claim"


def test_bad_probabilities_are_refused_with_nothing_written():
    project = bulk_project(answers=2, per_answer=2)
    ids = served_order(project)
    before = served_order(project)
    with pytest.raises(DesignError, match="inclusion_probability"):
        claims_design_store(
            project=project,
            design="active",
            probabilities={**dict.fromkeys(ids, 0.5), ids[0]: 0.0},
            budget=2,
        )
    assert served_order(project) == before
    assert Project.objects.get(pk=project.pk).queue_design == "uniform"
    assert not Claim.objects.filter(project=project, inclusion_probability__isnull=False).exists()


# ------------------------------------------------------------------------------------------
# selective judging


def test_routed_claims_are_not_served_while_selective_judging_is_on():
    project = bulk_project(answers=4, per_answer=2)
    order = served_order(project)
    Claim.objects.filter(pk__in=order[:3]).update(routed_to_judge=True)
    member = MembershipFactory(project=project)
    Project.objects.filter(pk=project.pk).update(selective_judging=True)
    project.refresh_from_db()
    claim = claim_next_for_user(project=project, user=member.user)
    assert claim.pk == order[3]
    seen = [claim.pk]
    while claim is not None:
        _, claim = save_next(project, member, claim)
        if claim is not None:
            seen.append(claim.pk)
    assert seen == order[3:]
    # off again: the routed claims are served
    Project.objects.filter(pk=project.pk).update(selective_judging=False)
    project.refresh_from_db()
    assert claim_next_for_user(project=project, user=member.user).pk == order[0]


def test_routed_claims_stay_out_of_a_restricted_members_queue_too():
    project = bulk_project(answers=3, per_answer=1)
    order = served_order(project)
    Answer.objects.filter(project=project).update(risk_category="health")
    Claim.objects.filter(pk=order[0]).update(routed_to_judge=True)
    Project.objects.filter(pk=project.pk).update(selective_judging=True)
    project.refresh_from_db()
    member = MembershipFactory(project=project, queue_stratum={"risk_category": "health"})
    claim = claim_next_for_user(project=project, user=member.user, stratum=member.queue_stratum)
    assert claim.pk == order[1]


# ------------------------------------------------------------------------------------------
# stratified


def brute_force_next(n_h, big_n, sd_h):
    """The stratum whose extra label lowers Σ W_h² S_h² / n_h most, by recomputing the whole
    variance for each candidate (unlabelled strata first, by size)."""
    total = sum(big_n)
    open_ = [h for h in range(len(n_h)) if n_h[h] < big_n[h]]
    if not open_:
        return -1
    empty = [h for h in open_ if n_h[h] == 0]
    if empty:
        return max(empty, key=lambda h: (big_n[h], -h))

    def variance(ns):
        return sum((big_n[h] / total) ** 2 * sd_h[h] ** 2 / ns[h] for h in range(len(ns)) if ns[h])

    base = variance(n_h)
    gains = {}
    for h in open_:
        more = list(n_h)
        more[h] += 1
        gains[h] = base - variance(more)
    best = max(gains.values())
    return min(h for h in open_ if gains[h] == best)


def test_neyman_next_stratum_matches_a_brute_force_variance_reduction():
    rng = np.random.default_rng(14)
    for _ in range(300):
        k = int(rng.integers(1, 7))
        big_n = [int(x) for x in rng.integers(1, 60, size=k)]
        n_h = [int(rng.integers(0, n + 1)) for n in big_n]
        sd_h = [float(x) for x in rng.uniform(0.01, 0.5, size=k)]
        assert neyman_next_stratum(n_h, big_n, sd_h) == brute_force_next(n_h, big_n, sd_h)


def test_neyman_next_stratum_agrees_with_the_metrics_version():
    from metrics.stats import active

    rng = np.random.default_rng(15)
    for _ in range(200):
        k = int(rng.integers(1, 7))
        big_n = [int(x) for x in rng.integers(1, 60, size=k)]
        n_h = [int(rng.integers(0, n + 1)) for n in big_n]
        if all(n >= size for n, size in zip(n_h, big_n, strict=True)):
            continue
        sd_h = [float(x) for x in rng.uniform(0.01, 0.5, size=k)]
        assert neyman_next_stratum(n_h, big_n, sd_h) == active.neyman_next_stratum(
            np.array(n_h), np.array(big_n), np.array(sd_h)
        )


def stratified_project():
    """12 claims in two strata: "big" (9 claims, prior p 0.5) and "small" (3 claims, p 0.9)."""
    project = bulk_project(answers=12, per_answer=1, quote_required=False)
    ids = sorted(served_order(project))
    strata = {cid: ("big" if i < 9 else "small") for i, cid in enumerate(ids)}
    claims_design_store(
        project=project,
        design="stratified",
        strata=strata,
        priors={"big": 0.5, "small": 0.9},
        run_id=3,
    )
    project.refresh_from_db()
    return project, strata


def test_the_stratified_queue_serves_the_neyman_stratum_and_counts_as_labels_arrive():
    project, strata = stratified_project()
    rows = {s.name: s for s in ActiveStratum.objects.filter(project=project)}
    assert (rows["big"].claims, rows["small"].claims) == (9, 3)
    member = MembershipFactory(project=project)
    claim = claim_next_for_user(project=project, user=member.user)
    served = [strata[claim.pk]]
    n = {"big": 0, "small": 0}
    supported = {"big": 0, "small": 0}
    for _ in range(8):
        verdict = Verdict.SUPPORTED if len(served) % 2 else Verdict.CONTRADICTED
        label, following = save_next(project, member, claim, verdict)
        stored = Label.objects.get(claim=claim)
        assert stored.design == "stratified"
        assert stored.stratum == {"active_stratum": strata[claim.pk]}
        n[strata[claim.pk]] += 1
        supported[strata[claim.pk]] += verdict == Verdict.SUPPORTED
        # the next stratum is the brute-force choice from the counts so far
        sd = [
            np.sqrt(p * (1 - p))
            for p in (
                (10 * 0.5 + supported["big"]) / (10 + n["big"]),
                (10 * 0.9 + supported["small"]) / (10 + n["small"]),
            )
        ]
        expected = brute_force_next([n["big"], n["small"]], [9, 3], sd)
        assert strata[following.pk] == ["big", "small"][expected]
        claim = following
        served.append(strata[claim.pk])
    rows = {s.name: s for s in ActiveStratum.objects.filter(project=project)}
    assert (rows["big"].labelled, rows["small"].labelled) == (n["big"], n["small"])
    assert (rows["big"].supported, rows["small"].supported) == (
        supported["big"],
        supported["small"],
    )
    assert set(served) == {"big", "small"}
    # an undo takes the claim's count back
    label_undo(user=member.user, project=project)
    rows_after = {s.name: s.labelled for s in ActiveStratum.objects.filter(project=project)}
    assert sum(rows_after.values()) == sum(n.values()) - 1


def test_an_exhausted_stratum_is_skipped():
    project, strata = stratified_project()
    member = MembershipFactory(project=project)
    small = [cid for cid, name in strata.items() if name == "small"]
    # another analyst has labelled every small claim but the counts say the stratum is open
    Claim.objects.filter(pk__in=small).update(label_count=1)
    claim = claim_next_for_user(project=project, user=member.user)
    assert strata[claim.pk] == "big"


def test_strata_ranked_tries_every_open_stratum_once():
    rows = [("a", 10, 2, 1, 0.5, 10.0), ("b", 5, 5, 3, 0.5, 10.0), ("c", 20, 0, 0, 0.5, 10.0)]
    assert strata_ranked(strata=rows) == ["c", "a"]


def test_the_stratified_save_and_next_costs_no_extra_round_trip_on_postgresql():
    """The strata are read in the claim lock's round trip: on PostgreSQL (a batch is one
    round trip) a stratified save-and-next sends as many queries as a uniform one; SQLite runs
    a batch's statements one by one, the read is one more there."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for design in ("uniform", "stratified"):
        project, _ = stratified_project()
        if design == "uniform":
            claims_design_store(project=project, design="uniform")
            project.refresh_from_db()
        member = MembershipFactory(project=project)
        claim = claim_next_for_user(project=project, user=member.user)
        project.refresh_from_db()
        with CaptureQueriesContext(connection) as queries:
            _, following = label_save_and_next(
                project=project,
                membership=member,
                annotator=member.user,
                claim_id=claim.pk,
                verdict=Verdict.NOT_IN_PILE,
            )
        assert following is not None
        counts[design] = len(queries)
    extra = 0 if connection.vendor == "postgresql" else 1
    assert counts["stratified"] == counts["uniform"] + extra

"""A project scored by a grounding-bits judge, built straight from rows (no endpoint): for the
dashboard panel and the claim pages."""

from dataclasses import dataclass

import numpy as np

from judges.backends.bits_backend import confidence_from_bits
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

# gold verdict -> mean bits (the seed's panel: supported +0.49, hallucinated −0.73)
MEANS = {"SUPPORTED": 0.9, "CONTRADICTED": 0.2, "NOT_IN_PILE": -1.0}


@dataclass
class BitsProject:
    project: object
    judge: object
    lead: object
    claims: list
    bits: dict  # claim id -> bits


def build_bits_project(n_answers: int = 10, seed: int = 18) -> BitsProject:
    rng = np.random.default_rng(seed)
    project = ProjectFactory(slug="bits-demo", name="Bits demo")
    lead = UserFactory(username="bitslead")
    MembershipFactory(project=project, user=lead, role="lead")
    judge = JudgeFactory(project=project, name="grounding bits", backend="bits", model="loopback")
    run = JudgeRunFactory(judge=judge, prompt_version="bits-v1", parameters={"bits_threshold": 0})
    claims, bits = [], {}
    order = ["SUPPORTED", "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"]
    for a in range(n_answers):
        answer = AnswerFactory(project=project, question=f"Question {a}?")
        PassageFactory(answer=answer, rank=1, text=f"Passage of answer {a}.")
        for position, gold in enumerate(order):
            claim = ClaimFactory(
                answer=answer, project=project, text=f"Claim {a}.{position}", position=position
            )
            GoldFactory(claim=claim, verdict=gold)
            value = float(np.round(rng.normal(MEANS[gold], 0.7), 3))
            JudgeVerdictFactory(
                run=run,
                claim=claim,
                verdict="SUPPORTED" if value > 0 else "NOT_IN_PILE",
                confidence=confidence_from_bits(value),
                bits=value,
                log2p_with_pile=-10.0 + value,
                log2p_without_pile=-10.0,
                claim_tokens_with_pile=4,
                claim_tokens_without_pile=4,
                token_bits=[["Claim", value]],
            )
            claims.append(claim)
            bits[claim.pk] = value
    return BitsProject(project, judge, lead, claims, bits)

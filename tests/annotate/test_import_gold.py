"""Imported labels count like saved ones: unanimous gold and the labelling counters follow."""

import json

import pytest

from annotate.models import Claim, Gold, Membership
from interchange.services.imports import answers_import
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

PILE = [{"id": "p1", "title": "Policy", "text": "Refunds are issued within 14 days."}]


def _record(answer_id, claims):
    return {
        "id": answer_id,
        "question": "How fast are refunds?",
        "answer": "Refunds take 14 days. They come by cheque.",
        "pile": PILE,
        "claims": claims,
    }


@pytest.mark.django_db
def test_import_makes_unanimous_gold_and_leaves_disagreements_to_a_lead(tmp_path):
    project = ProjectFactory(analysts_per_claim=2)
    for name in ("ana", "ben"):  # members, their names mapped: the counters are theirs
        MembershipFactory(project=project, user=UserFactory(username=name))
    quote = {"passage": "p1", "start": 0, "end": 34}
    records = [
        _record(
            "a1",
            [
                {
                    "text": "Refunds take 14 days.",
                    "labels": [
                        {"annotator": "ana", "verdict": "SUPPORTED", "quote": quote},
                        {"annotator": "ben", "verdict": "SUPPORTED", "quote": quote},
                    ],
                },
                {
                    "text": "Refunds come by cheque.",
                    "labels": [
                        {"annotator": "ana", "verdict": "NOT_IN_PILE"},
                        {"annotator": "ben", "verdict": "CONTRADICTED", "quote": quote},
                    ],
                },
                {
                    "text": "Refunds are final.",
                    "labels": [{"annotator": "ana", "verdict": "NOT_IN_PILE"}],
                },
            ],
        )
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")

    result = answers_import(
        project=project,
        path_or_file=str(path),
        format="native",
        annotator_map={"ana": "ana", "ben": "ben"},
    )

    golds = dict(Gold.objects.values_list("claim__text", "verdict"))
    assert golds == {"Refunds take 14 days.": "SUPPORTED"}  # one label is not enough for 2
    assert result.gold == 1
    project.refresh_from_db()
    assert project.claims_complete == 2
    counts = dict(Claim.objects.values_list("text", "label_count"))
    assert counts == {
        "Refunds take 14 days.": 2,
        "Refunds come by cheque.": 2,
        "Refunds are final.": 1,
    }
    saved = dict(
        Membership.objects.filter(project=project).values_list("user__username", "labels_saved")
    )
    assert saved == {"ana": 3, "ben": 2}

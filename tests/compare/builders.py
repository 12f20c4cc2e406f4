"""Two systems' answers to the same questions, imported through the native format (so the
tests go through the same path a user's files do)."""

import io
import json

from interchange.services.imports import answers_import

PILE = [{"id": "p1", "title": "Policy", "text": "Refunds take 14 days."}]


def answer_record(question, system, claims, *, risk="none", abstention=False):
    """`claims`: a list of (gold verdict or None, judge verdict or None)."""
    return {
        "id": f"{system}:{question}",
        "question_id": question,
        "question": f"Question {question}?",
        "answer": f"The answer of {system} to {question}.",
        "system": system
        if "@" not in system
        else {
            "name": system.split("@")[0],
            "version": system.split("@")[1],
        },
        "risk_category": risk,
        "abstention": abstention,
        "pile": PILE,
        "claims": [
            {
                "text": f"Claim {i} of {system} on {question}.",
                **({"gold": {"verdict": gold, "source": "adjudicated"}} if gold else {}),
                **({"judge": {"name": "j", "verdict": judge}} if judge else {}),
            }
            for i, (gold, judge) in enumerate(claims)
        ],
    }


def import_records(project, records):
    text = "".join(json.dumps(record) + "\n" for record in records)
    return answers_import(project=project, path_or_file=io.BytesIO(text.encode()), format="native")

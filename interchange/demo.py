"""The demo project: a handful of RAG answers in critical-information domains.

Each answer comes with the exact pile the model was handed, its claims, and two analysts'
labels (with quotes) — including a few disagreements for a lead to adjudicate, one
contradiction worth a bug report, and one abstention. `demo_records()` yields native-schema
records with quote offsets computed from the quote text, so the data stays readable here.

Two systems answer the same questions (seed 002's experiment: "do the same five again with the
old policy document removed from the shelf, and watch the contradiction disappear"): the
assistant as released (`SYSTEM_A`, the answers above) and the same assistant after its index
was rebuilt without the outdated 2019 refund policy (`SYSTEM_B`, `demo_records_second_system`):
the refund deadline is now right, the dose too, but it invents a minimum fee on the fees
question — a comparison with a gain and a regression to look at.
"""

from collections.abc import Iterator

from annotate.vocabulary import VERDICTS

S, C, N = VERDICTS

SYSTEM_A = {
    "name": "assistant",
    "version": "2024-06",
    "retriever": "bm25 over the full policy index",
    "prompt_version": "answer-v3",
    "generator_model": "llama-3.1-8b-instruct",
}
SYSTEM_B = {
    "name": "assistant",
    "version": "2024-07",
    "retriever": "bm25 over the index without the outdated 2019 refund policy",
    "prompt_version": "answer-v3",
    "generator_model": "llama-3.1-8b-instruct",
}

# Per claim: (text, [(annotator, verdict, passage rank or None, quote or None, correct)], cites)
DEMO_ANSWERS = [
    {
        "id": "refund-001",
        "risk_category": "financial",
        "answerable": True,
        "question": "How long do I have to request a refund for a cancelled flight?",
        "answer": (
            "You must request a refund within 30 days of the cancellation date. "
            "Refunds are issued to the original form of payment. "
            "If you paid by card, the money usually arrives within 7 business days."
        ),
        "pile": [
            (
                "policy-refunds-2024",
                "Refund policy (2024)",
                "Refund requests for cancelled flights must be submitted within 90 days of the "
                "cancellation date. Refunds are issued to the original form of payment.",
            ),
            (
                "faq-payments",
                "Payments FAQ",
                "Card refunds are processed by your bank. Processing times vary by bank.",
            ),
        ],
        "claims": [
            (
                "You must request a refund within 30 days of the cancellation date.",
                [
                    (
                        "ana",
                        C,
                        1,
                        "must be submitted within 90 days of the cancellation date",
                        "no",
                    ),
                    (
                        "ben",
                        C,
                        1,
                        "must be submitted within 90 days of the cancellation date",
                        "no",
                    ),
                ],
            ),
            (
                "Refunds are issued to the original form of payment.",
                [
                    ("ana", S, 1, "Refunds are issued to the original form of payment.", ""),
                    ("ben", S, 1, "Refunds are issued to the original form of payment.", ""),
                ],
            ),
            (
                "Card refunds usually arrive within 7 business days.",
                [("ana", N, None, None, "unknown"), ("ben", N, None, None, "unknown")],
            ),
        ],
    },
    {
        "id": "fees-002",
        "risk_category": "financial",
        "answerable": True,
        "question": "What does it cost to withdraw cash abroad with the Standard account?",
        "answer": (
            "With the Standard account, cash withdrawals abroad cost 2% of the amount, "
            "with a minimum fee of €2.50. There is no fee for withdrawals in euros within "
            "the EU. 💳 Premium account holders get five free withdrawals per month."
        ),
        "pile": [
            (
                "tariff-standard",
                "Standard account tariff",
                "Cash withdrawal outside the euro area: 2% of the amount, minimum €2.50 💶. "
                "Withdrawals in euro within the EU are free of charge.",
            ),
            (
                "tariff-premium",
                "Premium account tariff",
                "Premium: unlimited free cash withdrawals worldwide.",
            ),
        ],
        "claims": [
            (
                "Cash withdrawals abroad with the Standard account cost 2% of the amount.",
                [
                    ("ana", S, 1, "Cash withdrawal outside the euro area: 2% of the amount", ""),
                    ("ben", S, 1, "Cash withdrawal outside the euro area: 2% of the amount", ""),
                ],
            ),
            (
                "The minimum fee is €2.50.",
                [("ana", S, 1, "minimum €2.50", ""), ("ben", S, 1, "minimum €2.50", "")],
            ),
            (
                "Withdrawals in euros within the EU are free.",
                [
                    ("ana", S, 1, "Withdrawals in euro within the EU are free of charge.", ""),
                    ("ben", S, 1, "Withdrawals in euro within the EU are free of charge.", ""),
                ],
            ),
            (
                "Premium account holders get five free withdrawals per month.",
                [
                    ("ana", C, 2, "unlimited free cash withdrawals worldwide", "no"),
                    ("ben", N, None, None, "no"),
                ],
            ),
        ],
    },
    {
        "id": "eligibility-003",
        "risk_category": "eligibility",
        "answerable": True,
        "question": "Who can apply for the housing allowance?",
        "answer": (
            "Applicants must be at least 18 years old and have lived in the municipality "
            "for 12 months. Students are not eligible. The allowance is not taxable."
        ),
        "pile": [
            (
                "housing-rules",
                "Housing allowance rules §2",
                "Eligible applicants are residents aged 18 or over who have been registered in "
                "the municipality for at least 12 months. Full-time students may apply if they "
                "also work at least 20 hours a week.",
            ),
        ],
        "claims": [
            (
                "Applicants must be at least 18 years old.",
                [
                    ("ana", S, 1, "residents aged 18 or over", ""),
                    ("ben", S, 1, "residents aged 18 or over", ""),
                ],
            ),
            (
                "Applicants must have lived in the municipality for 12 months.",
                [
                    ("ana", S, 1, "registered in the municipality for at least 12 months", ""),
                    ("ben", S, 1, "registered in the municipality for at least 12 months", ""),
                ],
            ),
            (
                "Students are not eligible.",
                [
                    (
                        "ana",
                        C,
                        1,
                        "Full-time students may apply if they also work at least 20 hours a week.",
                        "no",
                    ),
                    ("ben", C, 1, "Full-time students may apply", "no"),
                ],
            ),
            (
                "The allowance is not taxable.",
                [("ana", N, None, None, "unknown"), ("ben", N, None, None, "unknown")],
            ),
        ],
    },
    {
        "id": "dosage-004",
        "risk_category": "health",
        "answerable": True,
        "question": "What is the maximum daily dose of paracetamol for adults?",
        "answer": (
            "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours. "
            "Do not take more than 4 g in 24 hours. "
            "It is safe to combine it with ibuprofen."
        ),
        "pile": [
            (
                "leaflet-paracetamol",
                "Patient leaflet: paracetamol 500 mg",
                "Adults and children over 16: take one or two 500 mg tablets every 4 to 6 hours "
                "as needed. Do not take more than 8 tablets (4 g) in 24 hours.",
            ),
            (
                "leaflet-warnings",
                "Warnings",
                "Do not take with other medicines containing paracetamol. Ask your pharmacist "
                "before combining with other painkillers.",
            ),
        ],
        "claims": [
            (
                "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours.",
                [
                    ("ana", S, 1, "take one or two 500 mg tablets every 4 to 6 hours", ""),
                    ("ben", S, 1, "take one or two 500 mg tablets every 4 to 6 hours", ""),
                ],
            ),
            (
                "Adults should not take more than 4 g of paracetamol in 24 hours.",
                [
                    ("ana", S, 1, "Do not take more than 8 tablets (4 g) in 24 hours.", ""),
                    ("ben", S, 1, "Do not take more than 8 tablets (4 g) in 24 hours.", ""),
                ],
            ),
            (
                "It is safe to combine paracetamol with ibuprofen.",
                [
                    ("ana", N, None, None, "unknown"),
                    (
                        "ben",
                        C,
                        2,
                        "Ask your pharmacist before combining with other painkillers.",
                        "unknown",
                    ),
                ],
            ),
        ],
    },
    {
        "id": "filing-005",
        "risk_category": "financial",
        "answerable": True,
        "question": "How did Northwind's most recent quarter look?",
        "answer": (
            "Northwind reported revenue of $4.2 bn for Q3, up 12.5% year over year. "
            "It beat consensus estimates. The operating margin was 18%. "
            "Northwind raised its full-year guidance. Cloud revenue grew 40%. "
            "The company also announced a $2 bn share buyback."
        ),
        "pile": [
            (
                "10q-q3-mdna",
                "Form 10-Q, Q3: Management's discussion",
                "Revenue for the third quarter was $4.2 billion, an increase of 12.5% compared "
                "with the same quarter last year. Operating margin was 18%.",
            ),
            (
                "pr-q3",
                "Press release: Q3 results",
                "Results exceeded analyst consensus. The company raised its full-year revenue "
                "guidance.",
            ),
            (
                "10q-risk",
                "Form 10-Q: Risk factors",
                "Foreign-exchange movements reduced reported revenue growth.",
            ),
        ],
        "claims": [
            (
                "Northwind reported revenue of $4.2 bn for Q3.",
                [
                    ("ana", S, 1, "Revenue for the third quarter was $4.2 billion", ""),
                    ("ben", S, 1, "Revenue for the third quarter was $4.2 billion", ""),
                ],
            ),
            (
                "Revenue was up 12.5% year over year.",
                [
                    (
                        "ana",
                        S,
                        1,
                        "an increase of 12.5% compared with the same quarter last year",
                        "",
                    ),
                    (
                        "ben",
                        S,
                        1,
                        "an increase of 12.5% compared with the same quarter last year",
                        "",
                    ),
                ],
            ),
            (
                "Northwind beat consensus estimates.",
                [
                    ("ana", S, 2, "Results exceeded analyst consensus.", ""),
                    ("ben", S, 2, "Results exceeded analyst consensus.", ""),
                ],
            ),
            (
                "The operating margin was 18%.",
                [
                    ("ana", S, 1, "Operating margin was 18%.", ""),
                    ("ben", S, 1, "Operating margin was 18%.", ""),
                ],
            ),
            (
                "Northwind raised its full-year guidance.",
                [
                    ("ana", S, 2, "The company raised its full-year revenue guidance.", ""),
                    ("ben", S, 2, "The company raised its full-year revenue guidance.", ""),
                ],
            ),
            (
                "Cloud revenue grew 40%.",
                [("ana", N, None, None, "unknown"), ("ben", N, None, None, "unknown")],
            ),
            (
                "The company announced a $2 bn share buyback.",
                [("ana", N, None, None, "no"), ("ben", N, None, None, "no")],
            ),
        ],
    },
    {
        "id": "security-006",
        "risk_category": "security",
        "answerable": True,
        "question": "How do I reset my password if I lost access to my phone?",
        "answer": (
            "You can reset your password with one of your backup codes. "
            "Support can also disable two-factor authentication after verifying your identity "
            "by video call."
        ),
        "pile": [
            (
                "help-2fa",
                "Help: two-factor authentication",
                "If you lose your phone, sign in with one of the backup codes you saved when "
                "you turned on two-factor authentication. Support staff will never disable "
                "two-factor authentication on request.",
            ),
        ],
        "claims": [
            (
                "You can reset your password with one of your backup codes.",
                [
                    ("ana", S, 1, "sign in with one of the backup codes", ""),
                    ("ben", N, None, None, "unknown"),
                ],
            ),
            (
                "Support can disable two-factor authentication after verifying your identity.",
                [
                    (
                        "ana",
                        C,
                        1,
                        "Support staff will never disable two-factor authentication on request.",
                        "no",
                    ),
                    (
                        "ben",
                        C,
                        1,
                        "Support staff will never disable two-factor authentication on request.",
                        "no",
                    ),
                ],
            ),
        ],
    },
    {
        "id": "legal-007",
        "risk_category": "legal",
        "answerable": True,
        "question": "Vilken uppsägningstid gäller för hyresgästen? (notice period for tenants)",
        "answer": ("Hyresgästen har tre månaders uppsägningstid. Uppsägningen ska vara skriftlig."),
        "pile": [
            (
                "hyreslagen-4",
                "Hyreslagen 4 §",
                "Uppsägningstiden för hyresgästen är tre månader. En uppsägning ska vara "
                "skriftlig om inte hyresvärden godtar en muntlig uppsägning.",
            ),
        ],
        "claims": [
            (
                "Hyresgästen har tre månaders uppsägningstid.",
                [
                    ("ana", S, 1, "Uppsägningstiden för hyresgästen är tre månader.", ""),
                    ("ben", S, 1, "Uppsägningstiden för hyresgästen är tre månader.", ""),
                ],
            ),
            (
                "Uppsägningen ska vara skriftlig.",
                [
                    ("ana", S, 1, "En uppsägning ska vara skriftlig", ""),
                    ("ben", S, 1, "En uppsägning ska vara skriftlig", ""),
                ],
            ),
        ],
    },
    {
        "id": "insurance-008",
        "risk_category": "financial",
        "answerable": False,
        "abstention": True,
        "question": "Does my travel insurance cover volcanic ash delays?",
        "answer": "I don't know: the documents provided do not say whether volcanic ash "
        "delays are covered.",
        "pile": [
            (
                "travel-policy",
                "Travel insurance summary",
                "Cover includes medical expenses abroad and lost luggage up to €1,500.",
            ),
        ],
        "claims": [],
    },
    {
        "id": "health-009",
        "risk_category": "health",
        "answerable": True,
        "question": "هل يمكن تناول الدواء مع الطعام؟ (Can the medicine be taken with food?)",
        "answer": "نعم، يمكن تناول الدواء مع الطعام أو بدونه. الجرعة مرتين يوميًا.",
        "pile": [
            (
                "leaflet-ar",
                "نشرة الدواء",
                "يمكن تناول الأقراص مع الطعام أو بدونه. تؤخذ الجرعة مرة واحدة يوميًا.",
            ),
        ],
        "claims": [
            (
                "يمكن تناول الدواء مع الطعام أو بدونه.",
                [
                    ("ana", S, 1, "يمكن تناول الأقراص مع الطعام أو بدونه.", ""),
                    ("ben", S, 1, "يمكن تناول الأقراص مع الطعام أو بدونه.", ""),
                ],
            ),
            (
                "الجرعة مرتين يوميًا.",
                [
                    ("ana", C, 1, "تؤخذ الجرعة مرة واحدة يوميًا.", "no"),
                    ("ben", C, 1, "تؤخذ الجرعة مرة واحدة يوميًا.", "no"),
                ],
            ),
        ],
    },
]


def _quote(pile: list, rank: int | None, text: str | None) -> dict | None:
    if rank is None:
        return None
    passage_text = pile[rank - 1][2]
    start = passage_text.find(text)
    if start < 0:
        raise ValueError(f"demo quote {text!r} is not in passage {rank}")
    return {"passage": pile[rank - 1][0], "start": start, "end": start + len(text), "text": text}


# What the second system answered differently: id → the answer and claims replacing A's.
SECOND_SYSTEM_CHANGES = {
    "refund-001": {
        "answer": (
            "You must request a refund within 90 days of the cancellation date. "
            "Refunds are issued to the original form of payment. "
            "If you paid by card, the money usually arrives within 7 business days."
        ),
        "claims": {
            0: (
                "You must request a refund within 90 days of the cancellation date.",
                [
                    ("ana", S, 1, "must be submitted within 90 days of the cancellation date", ""),
                    ("ben", S, 1, "must be submitted within 90 days of the cancellation date", ""),
                ],
            ),
        },
    },
    "fees-002": {
        "answer": (
            "With the Standard account, cash withdrawals abroad cost 2% of the amount, "
            "with a minimum fee of €5. There is no fee for withdrawals in euros within "
            "the EU. 💳 Premium account holders get five free withdrawals per month."
        ),
        "claims": {
            1: (
                "The minimum fee is €5.",
                [("ana", C, 1, "minimum €2.50", "no"), ("ben", C, 1, "minimum €2.50", "no")],
            ),
        },
    },
    "health-009": {
        "answer": "نعم، يمكن تناول الدواء مع الطعام أو بدونه. الجرعة مرة واحدة يوميًا.",
        "claims": {
            1: (
                "الجرعة مرة واحدة يوميًا.",
                [
                    ("ana", S, 1, "تؤخذ الجرعة مرة واحدة يوميًا.", ""),
                    ("ben", S, 1, "تؤخذ الجرعة مرة واحدة يوميًا.", ""),
                ],
            ),
        },
    },
}


def demo_records() -> Iterator[dict]:
    """The demo answers of the first system in the native import schema, quote offsets in
    code points."""
    for record in _records(DEMO_ANSWERS):
        yield {**record, "system": SYSTEM_A, "question_id": record["id"]}


def demo_records_second_system() -> Iterator[dict]:
    """The second system's answers to the same questions (`SECOND_SYSTEM_CHANGES` applied);
    ids end in "@2024-07", question ids are the first system's ids."""
    specs = []
    for spec in DEMO_ANSWERS:
        change = SECOND_SYSTEM_CHANGES.get(spec["id"])
        if change:
            claims = list(spec["claims"])
            for index, claim in change["claims"].items():
                claims[index] = claim
            spec = {**spec, "answer": change["answer"], "claims": claims}
        specs.append(spec)
    for record in _records(specs):
        yield {
            **record,
            "id": f"{record['id']}@{SYSTEM_B['version']}",
            "system": SYSTEM_B,
            "question_id": record["id"],
        }


def _records(specs: list[dict]) -> Iterator[dict]:
    for spec in specs:
        pile = spec["pile"]
        claims = []
        for text, labels in spec["claims"]:
            claims.append(
                {
                    "text": text,
                    "labels": [
                        {
                            "annotator": who,
                            "verdict": verdict,
                            **({"quote": q} if (q := _quote(pile, rank, quote)) else {}),
                            **({"correct": correct} if correct else {}),
                        }
                        for who, verdict, rank, quote, correct in labels
                    ],
                }
            )
        yield {
            "id": spec["id"],
            "question": spec["question"],
            "answer": spec["answer"],
            "pile": [{"id": sid, "title": title, "text": text} for sid, title, text in pile],
            "risk_category": spec["risk_category"],
            "answerable": spec["answerable"],
            "abstention": spec.get("abstention", False),
            "claims": claims,
        }

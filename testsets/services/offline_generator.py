"""The offline generator: a rule BASELINE that needs no LLM, so the whole loop runs offline.

It is a baseline, not a question writer to trust: it reads no meaning, only markers. Each
sentence of a passage (testsets/chunking.py `sentence_spans`) that carries a critical marker
becomes one item; the sentence itself is the quote and the ground-truth answer. Markers, in
the order that picks the question's form:

- amount: a currency sign or code with a number ("€40", "25 USD");
- percentage: "12%", "3.5 percent";
- deadline: a count of days, weeks, months, years or hours ("within 90 days");
- date: a day and a month name, or an ISO or d/m/y date;
- age: "under 18", "aged 65", "16 years old", "minors";
- obligation or prohibition: must, shall, may not, cannot, only, never, not, required,
  prohibited (and their French, German and Spanish counterparts).

The question: for a figure, the sentence with that figure left out — "What does “Refund
policy” state for: “Refunds are paid within …”?"; for an obligation alone, "What is the rule
in “Refund policy” on <the words before the modal verb>?". Templates exist in English,
French, German and Spanish (the document's language; English otherwise). The risk class is
the class with the most keywords in the sentence (ties in RiskCategory's order); with none,
eligibility for an age marker, else none. ("May" is not read as a month: it is the modal.)
Candidates are listed passage by passage in turn (first sentence of each passage, then the
second...), so a document's quota spreads over its passages.
"""

from __future__ import annotations

import re
from itertools import zip_longest

from testsets.chunking import sentence_spans
from testsets.services.verify import RISKS, PassageView

VERSION = "offline-rules-1"
_MONTHS = (
    "january|february|march|april|june|july|august|september|october|november|december|"
    "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
    "januar|februar|märz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|"
    "julio|agosto|septiembre|octubre|noviembre|diciembre"
)
_UNITS = (
    r"(?:business |working |calendar )?(?:days?|weeks?|months?|years?|hours?|"
    r"jours?|semaines?|mois|ans|heures?|tage?n?|wochen|monate?n?|jahre?n?|stunden|"
    r"días?|semanas?|meses|años?|horas?)"
)
MARKERS: tuple[tuple[str, re.Pattern], ...] = (
    (
        "amount",
        re.compile(
            r"[$€£¥]\s?\d[\d,.]*\d|[$€£¥]\s?\d|\b\d[\d,.]*\s?(?:€|\$|£|USD|EUR|GBP|CHF|"
            r"dollars?|euros?|pounds?)(?!\w)",
            re.IGNORECASE,
        ),
    ),
    (
        "percentage",
        re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:%|per ?cent\b|pour cent\b|prozent\b)", re.I),
    ),
    ("deadline", re.compile(rf"\b\d+\s+{_UNITS}\b", re.IGNORECASE)),
    (
        "date",
        re.compile(
            rf"\b\d{{1,2}}(?:st|nd|rd|th|er)?\s+(?:{_MONTHS})\b|\b(?:{_MONTHS})\s+\d{{1,2}}\b|"
            r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
            re.IGNORECASE,
        ),
    ),
    (
        "age",
        re.compile(
            r"\b(?:aged?|under|over|below|above|moins de|plus de|unter|über|menores de|mayores de)"
            r"\s+(?:the age of\s+)?\d{1,3}\b|\b\d{1,3}\s+(?:years?\s+(?:old|of age)|ans\b|"
            r"jahre alt|años de edad)|\bminors?\b|\bmineurs?\b|\bminderjährige?n?\b",
            re.IGNORECASE,
        ),
    ),
)
_OBLIGATION = re.compile(
    r"\b(?:must not|must|shall not|shall|may not|cannot|can ?not|is required to|are required to|"
    r"required|prohibited|forbidden|only|never|not|"
    r"doit|doivent|interdit|obligatoire|uniquement|seulement|jamais|"
    r"muss|müssen|darf|dürfen|verboten|nur|nie|nicht|"
    r"debe|deben|prohibido|obligatorio|solo|sólo|nunca)\b|\b\w+n't\b",
    re.IGNORECASE,
)
TEMPLATES = {
    "en": (
        "What does “{title}” state for: “{masked}”?",
        "What is the rule in “{title}” on {subject}?",
    ),
    "fr": (
        "Que dit « {title} » pour : « {masked} » ?",
        "Quelle est la règle de « {title} » sur {subject} ?",
    ),
    "de": (
        "Was steht in „{title}“ für: „{masked}“?",
        "Was ist die Regel in „{title}“ zu {subject}?",
    ),
    "es": (
        "¿Qué dice «{title}» para: «{masked}»?",
        "¿Cuál es la regla de «{title}» sobre {subject}?",
    ),
}
RISK_KEYWORDS = {
    "legal": "law laws legal court contract liability liable regulation comply compliance "
    "penalty penalties lawsuit jurisdiction statute rights loi contrat gesetz vertrag ley",
    "financial": "fee fees refund refunds payment payments price charge charges cost costs "
    "interest tax invoice credit loan paid pay € $ £ frais remboursement gebühr pago",
    "safety": "safety safe helmet helmets fire injury injuries hazard emergency protective "
    "evacuate danger dangerous sécurité sicherheit seguridad",
    "health": "health medical medication medicine dose doctor patient patients allergy vaccine "
    "symptom symptoms treatment santé gesundheit salud",
    "security": "password passwords security access breach encrypted encryption credential "
    "credentials unauthorised unauthorized login authentication",
    "eligibility": "eligible eligibility qualify qualifies age minors minor adults resident "
    "residents apply membership entitled admission",
    "discrimination": "discrimination discriminate gender race religion disability equal "
    "ethnicity bias harassment",
}
_WORD = re.compile(r"[$€£]|[^\W\d_]+", re.UNICODE)
_RISK_WORDS = {risk: frozenset(words.split()) for risk, words in RISK_KEYWORDS.items()}


def risk_by_keyword(sentence: str, marker: str = "") -> str:
    """The risk class with the most keywords in `sentence`; with none, an age marker is an
    eligibility rule and anything else "none"."""
    words = [w.casefold() for w in _WORD.findall(sentence)]
    scores = {risk: sum(w in _RISK_WORDS[risk] for w in words) for risk in RISKS}
    best = max(RISKS, key=lambda r: (scores[r], -RISKS.index(r)))
    if scores[best]:
        return best
    return "eligibility" if marker == "age" else "none"


def _marker(sentence: str) -> tuple[str, re.Match] | None:
    for kind, pattern in MARKERS:
        found = pattern.search(sentence)
        if found:
            return kind, found
    found = _OBLIGATION.search(sentence)
    return ("obligation", found) if found else None


def offline_question(sentence: str, title: str, language: str) -> str | None:
    """The rule question for `sentence`, or None when it carries no critical marker."""
    found = _marker(sentence)
    if found is None:
        return None
    kind, match = found
    figure_form, rule_form = TEMPLATES.get(language[:2], TEMPLATES["en"])
    if kind != "obligation":
        masked = f"{sentence[: match.start()]}…{sentence[match.end() :]}".strip()
        return figure_form.format(title=title, masked=masked)
    subject = sentence[: match.start()].strip(" ,;:")
    words = subject.split()
    if not 1 <= len(words) <= 12:
        masked = f"{sentence[: match.start()]}…{sentence[match.end() :]}".strip()
        return figure_form.format(title=title, masked=masked)
    subject = subject[0].lower() + subject[1:] if not subject[:2].isupper() else subject
    return rule_form.format(title=title, subject=subject)


def offline_candidates(*, title: str, language: str, passages: list[PassageView]) -> list[dict]:
    """The rule items of one document, in the shape an LLM generator answers."""
    per_passage = []
    for passage in passages:
        items = []
        for start, end in sentence_spans(passage.text):
            sentence = passage.text[start:end]
            question = offline_question(sentence, title, language)
            if question is None:
                continue
            marker = _marker(sentence)[0]
            items.append(
                {
                    "question": question,
                    "answer": sentence,
                    "quotes": [{"passage": passage.position, "text": sentence}],
                    "risk": risk_by_keyword(sentence, marker),
                    "language": language,
                }
            )
        per_passage.append(items)
    return [item for row in zip_longest(*per_passage) for item in row if item is not None]

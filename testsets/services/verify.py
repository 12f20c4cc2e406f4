"""Every generated item is verified before it is kept (issue 27, item 2); pure functions and
one stateful checker, no database (the bench measures them alone).

An item is a dict `{question, answer, quotes: [{passage, text}], risk, language}` where
`passage` is the passage's position in its document (or `passage_id` its id). In order:

1. malformed: a field missing or of the wrong kind, an unknown risk class;
2. quote_not_found: a quote not found verbatim in the passage it names, by the code analysts'
   quotes are checked with (annotate/quotes.py `quote_locate`, then `quote_verify` on the
   offsets found: the same exact code-point match, no normalisation beyond it); a quote found
   in another passage of the document is still dropped, and the detail says where it is;
3. wrong_language: the question reads as another language than the document's
   (testsets/language.py; an unknown is not a wrong language);
4. not_supported: the entailment backend (the offline lexical baseline, judges/backends/
   baseline.py, or the project's judge) does not find the answer SUPPORTED by its quotes;
5. duplicate: the question is a near-duplicate of one already kept in the test set
   (rapidfuzz `fuzz.ratio` on the case-folded words ≥ the threshold setting, and the same
   figures: "within 30 days" and "within 90 days" are two questions);
6. quota: the document already has its quota of kept items.

A dropped item is returned as `Dropped(reason, detail)`, never kept with a score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from annotate.quotes import QuoteError, quote_locate, quote_verify
from annotate.vocabulary import Verdict
from testsets.language import language_name, language_scores

MALFORMED = "malformed"
QUOTE_NOT_FOUND = "quote_not_found"
NOT_SUPPORTED = "not_supported"
DUPLICATE = "duplicate"
WRONG_LANGUAGE = "wrong_language"
QUOTA = "quota"
REASONS = (MALFORMED, QUOTE_NOT_FOUND, WRONG_LANGUAGE, NOT_SUPPORTED, DUPLICATE, QUOTA)

RISKS = ("legal", "financial", "safety", "health", "security", "eligibility", "discrimination")
RISK_ALIASES = {"discrimination/bias": "discrimination", "bias": "discrimination", "": "none"}
_FIGURES = re.compile(r"\d+(?:[.,]\d+)*")
_NOT_WORD = re.compile(r"[^\w]+", re.UNICODE)


@dataclass(frozen=True)
class PassageView:
    id: int
    position: int
    text: str


@dataclass(frozen=True)
class VerifiedQuote:
    passage_id: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class VerifiedItem:
    question: str
    answer: str
    risk: str
    language: str
    quotes: tuple[VerifiedQuote, ...]


@dataclass(frozen=True)
class Dropped:
    reason: str
    detail: str


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def risk_parse(value) -> str | None:
    """The RiskCategory value of a generator's risk class, or None when it is none of them."""
    if value is None:
        return "none"
    if not isinstance(value, str):
        return None
    risk = value.strip().lower()
    risk = RISK_ALIASES.get(risk, risk)
    return risk if risk in (*RISKS, "none") else None


def item_shape_problem(raw) -> str:
    """What is malformed about a generated item, or "" when its shape is right."""
    if not isinstance(raw, dict):
        return "the item is not a JSON object"
    for name in ("question", "answer"):
        if _text(raw.get(name)) is None:
            return f"field {name!r}: give a non-empty string"
    quotes = raw.get("quotes")
    if not isinstance(quotes, list) or not quotes:
        return "field 'quotes': give a non-empty list of {passage, text}"
    for number, quote in enumerate(quotes, start=1):
        if not isinstance(quote, dict) or _text(quote.get("text")) is None:
            return f"field 'quotes', quote {number}: give an object with a non-empty 'text'"
        where = quote.get("passage", quote.get("passage_id"))
        if isinstance(where, bool) or not isinstance(where, int):
            return f"field 'quotes', quote {number}: give 'passage' (its number) or 'passage_id'"
    if risk_parse(raw.get("risk")) is None:
        known = ", ".join((*RISKS, "none"))
        return f"field 'risk': {raw.get('risk')!r} is not a risk class ({known})"
    return ""


def quotes_verify(quotes: list[dict], passages: list[PassageView]) -> list[VerifiedQuote] | Dropped:
    """Each quote located verbatim in the passage it names, with its offsets; else Dropped."""
    by_position = {p.position: p for p in passages}
    by_id = {p.id: p for p in passages}
    verified = []
    for number, quote in enumerate(quotes, start=1):
        text = quote["text"]
        if "passage_id" in quote and "passage" not in quote:
            passage, named = by_id.get(quote["passage_id"]), f"passage id {quote['passage_id']}"
        else:
            passage, named = by_position.get(quote["passage"]), f"passage {quote['passage']}"
        if passage is None:
            return Dropped(QUOTE_NOT_FOUND, f"quote {number}: {named} is not in this document")
        span = quote_locate(passage_text=passage.text, quote=text)
        if span is None:
            elsewhere = [p.position for p in passages if p is not passage and text in p.text]
            where = f" (it is in passage {elsewhere[0]})" if elsewhere else ""
            return Dropped(
                QUOTE_NOT_FOUND, f"quote {number} is not verbatim in {named}{where}: {text!r}"
            )
        try:
            quote_verify(passage_text=passage.text, start=span[0], end=span[1], quote=text)
        except QuoteError as exc:  # cannot happen after quote_locate; kept as the contract
            return Dropped(QUOTE_NOT_FOUND, f"quote {number}: {exc}")
        verified.append(VerifiedQuote(passage.id, span[0], span[1], text))
    return verified


def language_problem(question: str, document_language: str) -> str:
    """Why the question is not in the document's language, or ""."""
    if not document_language:
        return ""
    scores = language_scores(question)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0]
    if best_score == 0 or ranked[1][1] == best_score or best == document_language[:2]:
        return ""
    own = scores.get(document_language[:2], 0)
    return (
        f"the question reads as {language_name(best)} ({best_score} {language_name(best)} "
        f"function words, {own} {language_name(document_language[:2])}); the document is "
        f"{language_name(document_language[:2])}"
    )


def question_key(question: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", question.casefold()).split())


@dataclass
class ItemChecker:
    """Checks items one after another for one test set: it remembers the kept questions (for
    duplicates) and each document's kept count (for the quota). `entailment` is a judge
    backend (`verify(claim, passages)`); `seen` and `per_document_kept` resume a job."""

    entailment: object
    quota: int
    threshold: float
    # Kept question keys by their figures: a near-duplicate needs the same figures, so only
    # the questions of the same figures are compared (a bench row shows the gain).
    seen: dict[tuple, list[str]] = field(default_factory=dict)
    per_document_kept: dict = field(default_factory=dict)

    def check(
        self, raw, *, document_key, document_language: str, passages: list[PassageView]
    ) -> VerifiedItem | Dropped:
        problem = item_shape_problem(raw)
        if problem:
            return Dropped(MALFORMED, problem)
        quotes = quotes_verify(raw["quotes"], passages)
        if isinstance(quotes, Dropped):
            return quotes
        question, answer = raw["question"].strip(), raw["answer"].strip()
        problem = language_problem(question, document_language)
        if problem:
            return Dropped(WRONG_LANGUAGE, problem)
        result = self.entailment.verify(answer, [q.text for q in quotes])
        if result.verdict != Verdict.SUPPORTED:
            why = (result.raw or "")[:300]
            return Dropped(NOT_SUPPORTED, f"the entailment check says {result.verdict}: {why}")
        key = question_key(question)
        twin = self._twin(key)
        if twin is not None:
            return Dropped(DUPLICATE, f"near-duplicate of the kept question {twin!r}")
        if self.per_document_kept.get(document_key, 0) >= self.quota:
            return Dropped(QUOTA, f"the document already has its {self.quota} items")
        self.remember(key, document_key)
        return VerifiedItem(
            question,
            answer,
            risk_parse(raw.get("risk")),
            self._language(raw, document_language),
            tuple(quotes),
        )

    @staticmethod
    def _language(raw, document_language: str) -> str:
        return document_language or (raw.get("language") or "")

    def remember(self, key: str, document_key) -> None:
        """Count a kept question (its key, `question_key`) against duplicates and the quota."""
        self.seen.setdefault(tuple(_FIGURES.findall(key)), []).append(key)
        self.per_document_kept[document_key] = self.per_document_kept.get(document_key, 0) + 1

    def _twin(self, key: str) -> str | None:
        same_figures = self.seen.get(tuple(_FIGURES.findall(key)))
        if not same_figures:
            return None
        found = process.extractOne(
            key, same_figures, scorer=fuzz.ratio, score_cutoff=self.threshold
        )
        return found[0] if found else None

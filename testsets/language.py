"""Which language a short text is in, by counting common function words.

Why stopwords and not a model: a question is 5-30 words, all we need is "is this question in
the document's language", and the languages a team writes policies in share few function
words ("the/of/is" against "le/de/est" against "der/die/ist"). A stopword count needs no
dependency, is deterministic, explains itself ("7 English words, 0 French") and is fast
enough for every generated item. It answers None when it cannot tell (no function word, or
a tie), and a None never drops an item: an unknown is not a wrong language.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The commonest function words of each language, chosen to be rare in the others: words two
# languages share ("de" fr/es/pt/nl, "in" en/de/nl/it, "a" en/es/it/pt) are left out.
STOPWORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "the of and is are was were what which who when how does do did must shall should "
        "this that these those with for from by be been has have can may will would their "
        "it its or not an any within after before than"
    ),
    "fr": _words(
        "le la les des du est sont une un et que qui quel quelle quels quelles pour dans "
        "sur avec par au aux doit doivent peut ne pas ce cette ces leur être été avant "
        "après délai"
    ),
    "de": _words(
        "der die das und ist sind ein eine einen wer wie was welche welcher muss müssen "
        "darf nicht mit für von zu auf dem den des bei nach vor innerhalb kann werden"
    ),
    "es": _words(
        "el los las del es son una y que quién cuál cuáles cómo cuándo para por con debe "
        "deben puede no lo su sus al antes después plazo está"
    ),
    "it": _words(
        "il lo gli della delle dei è sono una e che chi quale quali come quando per con "
        "deve devono può non alla alle prima dopo entro"
    ),
    "nl": _words(
        "het een en is zijn wat wie welke hoe wanneer moet moeten mag niet met voor van "
        "bij na binnen kan worden"
    ),
}
NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def language_scores(text: str) -> dict[str, int]:
    """How many words of `text` are function words of each language."""
    words = [w.casefold() for w in _WORD.findall(text)]
    return {code: sum(w in stop for w in words) for code, stop in STOPWORDS.items()}


def language_detect(text: str) -> str | None:
    """The ISO 639-1 code of the language with the most function words in `text`, or None when
    none is found or two languages tie."""
    scores = language_scores(text)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0]
    if best_score == 0 or (len(ranked) > 1 and ranked[1][1] == best_score):
        return None
    return best


def language_name(code: str) -> str:
    return NAMES.get(code, code or "unknown")

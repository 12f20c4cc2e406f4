"""The built-in reference system: BM25 over the project's knowledge base and an extractive
answer, so the whole loop (test set → system under test → split → judge) runs offline.

It is a baseline, not a RAG system anyone should ship: the pile is the top passages by BM25
(`bm25s`) over the project's DocumentPassage rows, and the answer is the sentence(s) of the
first passage sharing the most words with the question. It is called in-process under the
reserved endpoint name "reference" (testsets/rag_endpoints.py) rather than over HTTP: no
route to guard, no loopback URL to let past the SSRF checks, and it works with no server.
The index is cached per project, keyed by the passages' count and max id, so new documents
rebuild it and nothing else does.
"""

from __future__ import annotations

import re
import threading

from django.db.models import Count, Max

from testsets.models import DocumentPassage

TOP_K = 5
TOKEN = re.compile(r"\w+", re.UNICODE)
SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "do",
        "does",
        "did",
        "can",
    ]
)
_cache: dict[int, tuple[tuple, object, list, list]] = {}
_lock = threading.Lock()


def tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if t not in STOPWORDS]


def _index(project_id: int):
    rows = DocumentPassage.objects.filter(document__project_id=project_id)
    # The passages' count and newest id, and the newest document's time: a changed knowledge
    # base changes one of them (ids a rolled-back SQLite transaction gave out are given again,
    # the time is not).
    key_row = rows.aggregate(n=Count("id"), top=Max("id"), at=Max("document__created_at"))
    key = (key_row["n"], key_row["top"], key_row["at"])
    with _lock:
        cached = _cache.get(project_id)
        if cached and cached[0] == key:
            return cached[1:]
    passages = list(
        rows.order_by("id").values_list("id", "document__external_id", "document__title", "text")
    )
    corpus = [tokens(p[3]) or ["\0empty"] for p in passages]
    # Imported here: testsets.apps loads this module at start-up, where bm25s (with SciPy)
    # costs 0.4 s and 100 MB of every web process's memory; only an index build needs it.
    import bm25s

    retriever = bm25s.BM25()
    vocab: set[str] = set()
    if passages:
        retriever.index(corpus, show_progress=False)
        vocab = {t for doc in corpus for t in doc}
    with _lock:
        _cache[project_id] = (key, retriever, passages, vocab)
    return retriever, passages, vocab


def _best_sentences(question: str, text: str) -> str:
    wanted = set(tokens(question))
    sentences = [s.strip() for s in SENTENCE.findall(text) if s.strip()]
    if not sentences:
        return text.strip()
    scored = [(len(wanted & set(tokens(s))), -i, s) for i, s in enumerate(sentences)]
    best = max(scored)
    return best[2]


def reference_answer(*, project_id: int, question: str, k: int = TOP_K) -> dict:
    """A native-contract response: {"answer", "passages": [{"id", "text", "title"}, ...]}."""
    retriever, passages, vocab = _index(project_id)
    query = [t for t in tokens(question) if t in vocab]
    if not passages or not query:
        return {"answer": "I could not find this in the documents.", "passages": []}
    k = min(k, len(passages))
    ranks, scores = retriever.retrieve([query], k=k, show_progress=False)
    pile = []
    for index, score in zip(ranks[0], scores[0], strict=True):
        if score <= 0:
            continue
        pk, doc_id, title, text = passages[int(index)]
        pile.append({"id": f"{doc_id}#{pk}", "text": text, "title": title or ""})
    if not pile:
        return {"answer": "I could not find this in the documents.", "passages": []}
    return {"answer": _best_sentences(question, pile[0]["text"]), "passages": pile}

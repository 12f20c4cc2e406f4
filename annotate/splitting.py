"""Rule-based claim splitting, abstention detection and claim tags: pure functions, no database.

The rule split is offline and deterministic:

1. Lines (bullets and numbered items lose their markers), then sentences by pysbd, a proper
   sentence segmenter ("Dr.", "12.5%", "$4.2 bn", "a.m." survive).
2. Politeness and filler are dropped ("I hope this helps", "Let me know if ...", "Great
   question", "Sure!", "Here is ..."), as are questions and abstention sentences ("I do not
   know"): none is a checkable claim. Abstention is recorded on the answer instead.
3. Coordinated independent clauses are split on ", and", " and ", "; " and ", but" only when
   both sides have a verb ("Refunds take 14 days and are issued to the original card" → two
   claims); the second clause borrows the first's subject when it has none ("Refunds are issued
   to the original card."). Noun phrases ("fees and charges") are never split.

There is no part-of-speech model here (none ships offline); verbs are recognised from a
lexicon of auxiliaries and common verbs with their inflections, with a determiner check so
"the cost" is a noun. Where that is unsure, the split is not made: a claim left compound is
tagged `multi-part` so a lead can split it by hand.

Every claim keeps the span of its source text in the answer, in code points.
"""

import re
from dataclasses import dataclass
from functools import cache

import pysbd

# ---------------------------------------------------------------------------------------------
# Words


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


AUXILIARIES = _wordset("""
    am is are was were be been being has have had having do does did
    can could will would shall should may might must
    isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't
    can't cannot couldn't won't wouldn't shan't shouldn't mightn't mustn't
    """)
MODALS = _wordset("can could will would shall should may might must cannot do does did")
BE_HAVE = _wordset("am is are was were be been being has have had")
NEGATORS = frozenset({"not", "never", "no", "n't"})
ADVERBS_IN_VERB_GROUP = _wordset(
    "also usually always often typically generally normally only then still already just "
    "automatically immediately fully"
)

_BASE_VERBS = """
accept access add affect agree allow announce answer appear apply approve arrive ask assess become begin
believe borrow build buy calculate call cancel carry cause change charge check choose claim
close come complete confirm consider contact contain continue cost cover create cut decide
decline deduct deliver deny depend describe determine develop die drop earn enable end ensure
exceed exchange expect expire explain extend fall feel file find finish follow get give go
grant grow happen help hire hold identify improve include increase indicate inform invest issue
keep know last lead learn leave lend let limit list live lose make manage mean meet mention
move need note notify obtain occur offer open operate order owe own pay permit place plan play
prevent process produce protect provide publish purchase qualify raise reach read receive rise
recommend reduce refund reject release remain remember remove renew repair replace report
request require reserve reset respond return review run say see seem sell send serve set ship
show sign speak spend stand start state stay stop store submit suggest supply support take teach
tell tend test think treat try turn understand update use vary verify visit wait waive walk want
warn watch win work write
"""

_IRREGULAR_FORMS = """
arose arisen became begun began bought brought built came chose chosen cut dealt did done drew
drawn drove driven fell fallen felt found forgot forgotten gave given got gotten went gone grew
grown held hid hidden kept knew known laid led left lent let lost made meant met paid put quit
ran read rose risen said saw seen sold sent set shown shut sat spoke spoken spent stood stole
stolen struck swore sworn took taken taught told thought threw thrown understood woke woken
won wore worn wrote written
"""

# Words that make the next word a noun ("the cost", "14 refunds", "of charges").
_NOUN_MARKERS = _wordset("""
    a an the this that these those its their your our my his her some any no each every all
    many few several more most other another such of for to in on at by with from into over
    under about per and or
    """)

# Words, and numbers with their units ("$4.2", "12.5%"); punctuation alone is not a token.
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]*\d[^\sA-Za-z]*")


def _inflections(base: str) -> set[str]:
    forms = {base}
    if base.endswith("y") and base[-2] not in "aeiou":
        forms |= {base[:-1] + "ies", base[:-1] + "ied"}
    elif base.endswith(("s", "sh", "ch", "x", "z", "o")):
        forms |= {base + "es", base + "ed"}
    else:
        forms |= {base + "s", base + "d" if base.endswith("e") else base + "ed"}
    stem = base[:-1] if base.endswith("e") and not base.endswith("ee") else base
    forms.add(stem + "ing")
    # Short words ending consonant-vowel-consonant double it: stop → stopped, ship → shipped.
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", base):
        forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


@cache
def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """(every inflected verb form, the base forms)."""
    bases = frozenset(_BASE_VERBS.split())
    forms = set(_IRREGULAR_FORMS.split())
    for base in bases:
        forms |= _inflections(base)
    return frozenset(forms), bases


def _normalise(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _clean(token: str) -> str:
    return token.lower().strip('.,;:!?"()[]')


def _words(text: str) -> list[str]:
    return [_clean(w) for w in _WORD_RE.findall(_normalise(text))]


def _is_verb(words: list[str], index: int) -> bool:
    word = words[index]
    if word in AUXILIARIES:
        return True
    forms, _ = _lexicon()
    if word not in forms:
        return False
    previous = words[index - 1] if index > 0 else ""
    if previous in _NOUN_MARKERS:
        return False
    # "14 refunds" is a noun; "orders over £50 ship free" is a verb.
    return not (re.fullmatch(r"[\d$£€.,%]+", previous) and word.endswith("s"))


def _is_participle(word: str) -> bool:
    return word.endswith(("ed", "en")) or word in _IRREGULAR_FORMS.split()


@dataclass(frozen=True)
class _Clause:
    subject: str  # words before the verb group, as written ("" when verb-initial)
    verb_index: int | None  # index in words of the first verb, None if no verb
    aux_chain: str  # auxiliaries (and not) before the main verb, as written


def _analyse(text: str) -> _Clause:
    """Find the clause's subject and first verb (see the module docstring for the method)."""
    text = _normalise(text)
    tokens = list(_WORD_RE.finditer(text))
    words = [_clean(t.group()) for t in tokens]
    if not words:
        return _Clause("", None, "")
    forms, bases = _lexicon()
    first = words[0]
    verb_index = None
    if first in AUXILIARIES:
        verb_index = 0
    elif first in bases and len(words) > 1 and words[1] in bases and words[1] not in AUXILIARIES:
        verb_index = 0  # an instruction: "Contact support", "Go to Settings"
    elif first in forms:
        later_verb = any(_is_verb(words, i) for i in range(1, len(words)))
        next_is_verb = len(words) > 1 and _is_verb(words, 1)
        # "cost nothing", "issued to the card", "contact support": verb-initial.
        # "charges apply", "refunds are processed": a noun subject.
        if not next_is_verb and (not later_verb or first in bases or first.endswith("ed")):
            verb_index = 0
    if verb_index is None:
        for i in range(1, len(words)):
            if _is_verb(words, i):
                verb_index = i
                break
    if verb_index is None:
        return _Clause(text.strip(), None, "")
    subject = text[: tokens[verb_index].start()].strip(" ,")
    i = verb_index
    while i < len(words) and (
        words[i] in AUXILIARIES or words[i] in NEGATORS or words[i] in ADVERBS_IN_VERB_GROUP
    ):
        i += 1
    chain = ""
    if verb_index < i < len(words):  # "it is" alone has no lexical verb to carry them to
        chain = text[tokens[verb_index].start() : tokens[i - 1].end()]
    return _Clause(subject, verb_index, chain)


def _has_verb(text: str) -> bool:
    return _analyse(text).verb_index is not None


# ---------------------------------------------------------------------------------------------
# Filler, questions and abstentions

_FILLER_RES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(?:i\s+)?hope\s+(?:this|that|it)\s+helps",
        r"^(?:please\s+)?(?:let\s+me\s+know|feel\s+free|do\s+not\s+hesitate|don't\s+hesitate)",
        r"^(?:that's\s+a\s+|what\s+a\s+)?(?:great|good|excellent|nice|interesting)\s+question",
        r"^(?:thanks|thank\s+you)\b",
        r"^(?:i'd|i\s+would|i'm|i\s+am)\s+(?:be\s+)?(?:happy|glad)\s+to\s+help",
        r"^(?:happy|glad)\s+to\s+help",
        r"^is\s+there\s+anything\s+else",
        r"^(?:sure|certainly|of\s+course|absolutely|okay|ok|no\s+problem|got\s+it)\s*[!.]*$",
        r"^(?:i'm\s+|i\s+am\s+)?(?:so\s+)?(?:sorry|apologies)\s*[!.]*$",
    )
]
_HERE_IS_RE = re.compile(r"^here(?:\s+is|\s+are|'s)\b[^:]*(?::\s*(?P<rest>.*))?$", re.I | re.S)
_LEADING_FILLER_RE = re.compile(
    r"^(?:(?:sure|certainly|of\s+course|absolutely|yes|okay|ok|well|great\s+question|"
    r"good\s+question)\s*[,!.:]|(?:i'm\s+|i\s+am\s+)?sorry,\s+but)\s+(?=\S)",
    re.IGNORECASE,
)

_ABSTENTION_RES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bi\s+(?:do\s+not|don't)\s+know\b",
        r"\bi\s+(?:do\s+not|don't)\s+have\s+(?:enough\s+|sufficient\s+|any\s+|the\s+)?"
        r"(?:information|details|data|context)",
        r"\b(?:documents?|context|passages?|sources?|information|texts?|materials?)\s+"
        r"(?:do|does)\s*(?:not|n't)\s+(?:say|mention|specify|state|contain|include|provide|"
        r"cover|address|indicate|tell)",
        r"\bi\s+(?:cannot|can't|could\s*not|couldn't|was\s+unable\s+to|am\s+unable\s+to|"
        r"wasn't\s+able\s+to|was\s+not\s+able\s+to)\s+(?:find|determine|locate|answer|tell)",
        r"\bnot\s+(?:mentioned|specified|stated|covered|provided|addressed|found|included)\s+"
        r"in\s+the\s+(?:provided\s+|given\s+|available\s+|retrieved\s+)?"
        r"(?:context|documents?|passages?|sources?|information|texts?)",
        r"\bthere\s+is\s+no\s+(?:information|mention|data)\b",
        r"\bno\s+information\s+(?:about|on|regarding)\b",
        r"\b(?:i'm|i\s+am)\s+(?:not\s+sure|unable\s+to\s+answer|not\s+able\s+to\s+answer)",
        r"\binsufficient\s+information\b",
    )
]


def is_filler(sentence: str) -> bool:
    text = _normalise(sentence).strip()
    if any(p.search(text) for p in _FILLER_RES):
        return True
    match = _HERE_IS_RE.match(text)
    return bool(match) and not (match.group("rest") or "").strip()


def abstention_phrase(sentence: str) -> str | None:
    """The abstention phrase in `sentence` ("I don't know", "the documents do not say"), or None."""
    text = _normalise(sentence)
    for pattern in _ABSTENTION_RES:
        match = pattern.search(text)
        if match:
            return sentence[match.start() : match.end()]
    return None


# ---------------------------------------------------------------------------------------------
# Tags

_NUMBER_WORDS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion trillion dozen twice half percent"
)
_NUMERIC_RE = re.compile(
    r"\d|[$£€¥₹%]|\bper\s*cent\b|\b(?:" + "|".join(_NUMBER_WORDS.split()) + r")\b(?!-)|"
    r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b|"
    r"\bMay\s+\d|\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.\s*\d",
    re.IGNORECASE,
)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|nowhere|without|cannot)\b|n't\b",
    re.IGNORECASE,
)
_COORDINATOR_RE = re.compile(r"\s+(?:and|or)\s+", re.IGNORECASE)
_ITEM = r"[\w$£€%.'-]+(?:\s+[\w$£€%.'-]+){0,2}"
_LIST_RE = re.compile(rf"{_ITEM},\s+(?:{_ITEM},\s+)*{_ITEM},?\s+(?:and|or)\s+\w", re.IGNORECASE)


def _is_compound(text: str) -> bool:
    if _LIST_RE.search(text):
        return True
    for match in _COORDINATOR_RE.finditer(text):
        left, right = text[: match.start()], text[match.end() :]
        clause = _analyse(_SPLIT_RE.split(right, maxsplit=1)[0])
        n_words = len(_words(right))
        if (
            _has_verb(left)
            and n_words >= 2
            and clause.verb_index is not None
            and (clause.verb_index == 0 or clause.verb_index < n_words - 1)
        ):
            return True
    return False


def claim_tags(text: str) -> list[str]:
    """Auto-tags: `numeric`, `negation`, `multi-part` (still compound after splitting)."""
    normal = _normalise(text)
    tags = []
    if _NUMERIC_RE.search(normal):
        tags.append("numeric")
    if _NEGATION_RE.search(normal):
        tags.append("negation")
    if _is_compound(normal):
        tags.append("multi-part")
    return tags


# ---------------------------------------------------------------------------------------------
# Sentences and clauses


@dataclass(frozen=True)
class Segment:
    """A piece of the answer: its text and its span [start, end) in code points."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class ClaimDraft:
    """A claim before it is saved: text, the span of its source in the answer, tags."""

    text: str
    span_start: int | None
    span_end: int | None
    tags: tuple[str, ...]


_BULLET_RE = re.compile(r"^\s*(?:[-*•‣▪–]|\d{1,3}[.)])\s+")


@cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def _trimmed(text: str, start: int) -> Segment | None:
    stripped = text.strip()
    if not stripped:
        return None
    offset = start + text.index(stripped)
    return Segment(stripped, offset, offset + len(stripped))


def sentences(text: str) -> list[Segment]:
    """The answer's sentences with their spans: per line (bullet markers dropped), then pysbd."""
    found = []
    line_start = 0
    for line in text.split("\n"):
        bullet = _BULLET_RE.match(line)
        body_start = line_start + (bullet.end() if bullet else 0)
        body = text[body_start : line_start + len(line)]
        cursor = 0
        for piece in _segmenter().segment(body) if body.strip() else []:
            piece = piece.strip()
            if not piece:
                continue
            index = body.find(piece, cursor)
            if index < 0:  # pysbd changed the text; never invent a span
                continue
            cursor = index + len(piece)
            found.append(Segment(piece, body_start + index, body_start + cursor))
        line_start += len(line) + 1
    return found


_SPLIT_RE = re.compile(r"\s*;\s+|,\s+and\s+|\s+and\s+|,\s+but\s+", re.IGNORECASE)


def _carried_prefix(left: _Clause, right_text: str) -> str:
    """What a verb-initial right clause borrows from the left: the subject, and the
    auxiliaries when the right verb needs them ("can be returned and exchanged")."""
    right_words = _words(right_text)
    if not left.subject:
        return ""
    first = right_words[0] if right_words else ""
    chain_words = [w.lower() for w in _words(left.aux_chain)]
    if first in ("have", "be") and chain_words[0] in MODALS:
        # "must be 18 and have lived here": the modal carries over, the rest of the chain not.
        return f"{left.subject} {' '.join(_modal_part(left.aux_chain))}"
    if first in AUXILIARIES or not chain_words:
        return left.subject
    last_aux = next((w for w in reversed(chain_words) if w in AUXILIARIES), "")
    if _is_participle(first) and last_aux in BE_HAVE:
        return f"{left.subject} {left.aux_chain}"
    if first in _lexicon()[1] and (set(chain_words) & MODALS):
        return f"{left.subject} {left.aux_chain}"
    return left.subject


def _modal_part(chain: str) -> list[str]:
    """The leading modal of an auxiliary chain: "must" of "must not be". A restarted verb
    ("must not be opened and be returned") does not inherit the "not"."""
    words = chain.split()
    return words[:1] if words and _clean(words[0]) in MODALS else []


def _split_clauses(segment: Segment, carried: str = "") -> list[tuple[Segment, str]]:
    """[(source segment, subject prefix to carry)] for the coordinated clauses of a sentence."""
    text = segment.text
    for match in _SPLIT_RE.finditer(text):
        left_text, right_text = text[: match.start()], text[match.end() :]
        left = _analyse(f"{carried} {left_text}" if carried else left_text)
        if left.verb_index is None or len(_words(left_text)) < 2:
            continue
        if len(_words(right_text)) < 2:
            continue
        # Judge the right side by its own first clause, not by what follows it.
        right_first = _SPLIT_RE.split(right_text, maxsplit=1)[0]
        right = _analyse(right_first)
        if right.verb_index is None:
            continue
        if right.verb_index > 0 and right.verb_index >= len(_words(right_first)) - 1:
            continue  # "priority support": a noun phrase ending in a verb-like word
        if right.verb_index == 0:
            prefix = _carried_prefix(left, right_text)
            next_carried = prefix
        else:
            # A right subject holding another coordinator ("Visa and Mastercard and refunds
            # take ...") means the real boundary is further on.
            if _COORDINATOR_RE.search(right.subject) or "," in right.subject:
                continue
            prefix, next_carried = "", ""
        left_segment = _trimmed(left_text.rstrip(" ,;"), segment.start)
        right_segment = _trimmed(right_text, segment.start + match.end())
        if left_segment is None or right_segment is None:
            continue
        series = [(left_segment, carried)]
        if right.verb_index == 0 and prefix:
            # "take 14 days, are issued to the card and cost nothing": the whole series.
            pieces = _verb_series(left_segment)
            series = [(pieces[0], carried), *((piece, prefix) for piece in pieces[1:])]
        return [*series, *_split_clauses(right_segment, next_carried or prefix)]
    return [(segment, carried)]


def _verb_series(segment: Segment) -> list[Segment]:
    """Cut a clause at each ", " that starts a verb phrase without a subject."""
    text, start, pieces = segment.text, 0, []
    for match in re.finditer(r",\s+", text):
        rest = text[match.end() :]
        piece = rest.split(",", 1)[0]
        if (
            _analyse(piece).verb_index == 0
            and len(_words(piece)) >= 2
            and _has_verb(text[start : match.start()])
        ):
            pieces.append(_trimmed(text[start : match.start()], segment.start + start))
            start = match.end()
    pieces.append(_trimmed(text[start:], segment.start + start))
    return [piece for piece in pieces if piece is not None]


def _claim_text(source: str, prefix: str) -> str:
    text = f"{prefix} {source}" if prefix else source
    text = text.strip().rstrip(",;:")
    if text and text[-1] not in ".!?":
        text += "."
    return text[0].upper() + text[1:] if text else text


def _strip_leading_filler(segment: Segment) -> Segment | None:
    text = _normalise(segment.text)
    match = _LEADING_FILLER_RE.match(text) or None
    here = _HERE_IS_RE.match(text)
    if here and (here.group("rest") or "").strip():
        cut = here.start("rest")
    elif match:
        cut = match.end()
    else:
        return segment
    return _trimmed(segment.text[cut:], segment.start + cut)


def split_rule(text: str) -> list[ClaimDraft]:
    """Split an answer into claims by rule (see the module docstring)."""
    drafts = []
    for sentence in sentences(text):
        if is_filler(sentence.text) or sentence.text.rstrip().endswith("?"):
            continue
        sentence = _strip_leading_filler(sentence)
        if sentence is None or is_filler(sentence.text):
            continue
        for clause, prefix in _split_clauses(sentence):
            if abstention_phrase(clause.text) or is_filler(clause.text):
                continue
            if not any(char.isalnum() for char in clause.text):
                continue  # stray punctuation or an emoji alone is not a claim
            claim = _claim_text(clause.text, prefix)
            drafts.append(ClaimDraft(claim, clause.start, clause.end, tuple(claim_tags(claim))))
    return drafts


def abstention_detect(text: str) -> str | None:
    """The abstention phrase if the answer as a whole abstains, else None.

    An answer abstains when its first sentence that is not filler abstains, or every such
    sentence does; "Refunds take 14 days. The documents do not say whether fees apply." is a
    partial answer, not an abstention. A lead confirms either way.
    """
    content = [s.text for s in sentences(text) if not is_filler(s.text)]
    phrases = [abstention_phrase(s) for s in content]
    if not content or not phrases[0] and not all(phrases):
        return None
    return next(p for p in phrases if p)


def _content_words(text: str) -> set[str]:
    return {w for w in _words(text) if len(w) > 2 and w not in _NOUN_MARKERS}


def align_claims(answer_text: str, claim_texts: list[str]) -> list[ClaimDraft]:
    """Drafts for claims written elsewhere (an LLM): each gets the span of its source in the
    answer when it can be found — verbatim, else the sentence sharing most of its content words
    (at least half) — and no span otherwise."""
    segments = sentences(answer_text)
    folded = answer_text.casefold()
    drafts = []
    for raw in claim_texts:
        claim = raw.strip()
        if not claim:
            continue
        start = folded.find(claim.casefold().rstrip("."))
        if start >= 0 and len(claim.casefold()) == len(claim):
            span = (start, start + len(claim.rstrip(".")))
        else:
            words = _content_words(claim)
            best, best_score = None, 0.0
            for segment in segments:
                if not words:
                    break
                score = len(words & _content_words(segment.text)) / len(words)
                if score > best_score:
                    best, best_score = segment, score
            span = (best.start, best.end) if best and best_score >= 0.5 else (None, None)
        drafts.append(ClaimDraft(claim, span[0], span[1], tuple(claim_tags(claim))))
    return drafts

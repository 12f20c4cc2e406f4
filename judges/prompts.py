"""The default prompt templates (seed 004's shapes) and how a pile becomes a prompt's context.

A prompt's version is the hash of its text (`judges.models.prompt_version`): editing a judge's
prompt makes a new instrument, audited afresh.
"""

import re

_PLACEHOLDER = re.compile(r"\{(context|claim|answer)\}")
_PAIRWISE_PLACEHOLDER = re.compile(r"\{(question|answer_1|pile_1|answer_2|pile_2)\}")
# What `pairwise_prompt_render` fills: a pairwise prompt must hold every one of them.
PAIRWISE_PLACEHOLDERS = ("question", "answer_1", "pile_1", "answer_2", "pile_2")

DEFAULT_VERIFY_PROMPT = """Context:
{context}

Claim: {claim}

Is the claim supported by the context? Answer with exactly one word:
SUPPORTED, CONTRADICTED, or NOT_MENTIONED.
Judge only against the context. Do not use outside knowledge."""

DEFAULT_DECOMPOSE_PROMPT = """Split the answer into atomic factual claims.
One claim per line, each independently verifiable, no commentary.

Answer: {answer}"""

# Pairwise judging (judges/pairwise_runner.py): one question, two answers each with its own pile;
# asked twice per pair, once in each order. Its version is the hash of its text, as any prompt's.
DEFAULT_PAIRWISE_PROMPT = """Two answers to one question follow, each with the passages it was
generated from (its pile). Which answer is more faithful to its own pile: every statement it
makes is supported by its passages, none contradicts them, nothing is added from elsewhere?

Question: {question}

Answer 1:
{answer_1}

Pile of answer 1:
{pile_1}

Answer 2:
{answer_2}

Pile of answer 2:
{pile_2}

Reply with exactly one word: FIRST if answer 1 is more faithful to its pile, SECOND if
answer 2 is, TIE if they are equally faithful. Judge only against each answer's own pile."""


def pairwise_prompt_problem(template: str) -> str:
    """Why `template` cannot be a pairwise prompt ("" when it can): the placeholders it lacks
    of those the runner fills, by name."""
    missing = [f"{{{name}}}" for name in PAIRWISE_PLACEHOLDERS if f"{{{name}}}" not in template]
    if not missing:
        return ""
    every = ", ".join(f"{{{name}}}" for name in PAIRWISE_PLACEHOLDERS)
    which = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
    return (
        f"The pairwise prompt must contain {which}: the runner fills {every} (the question, "
        "then each answer with its own pile)."
    )


def context_render(passages) -> str:
    """The context block: each passage of the pile in rank order, numbered, with its title."""
    blocks = []
    for i, passage in enumerate(passages, start=1):
        title = getattr(passage, "title", "") or ""
        text = getattr(passage, "text", passage)
        header = f"[{i}] {title}".rstrip()
        blocks.append(f"{header}\n{text}")
    return "\n\n".join(blocks)


def _fill(template: str, values: dict[str, str]) -> str:
    # One pass, not str.format: passages are full of braces, and a passage that happens to
    # contain "{claim}" must not be filled in.
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def verify_prompt_render(template: str, *, claim: str, passages) -> str:
    return _fill(template, {"context": context_render(passages), "claim": claim})


def decompose_prompt_render(template: str, *, answer: str) -> str:
    return _fill(template, {"answer": answer})


def pairwise_prompt_render(
    template: str, *, question: str, answer_1: str, pile_1, answer_2: str, pile_2
) -> str:
    values = {
        "question": question,
        "answer_1": answer_1,
        "pile_1": context_render(pile_1) or "(no passages)",
        "answer_2": answer_2,
        "pile_2": context_render(pile_2) or "(no passages)",
    }
    # One pass, as `_fill`: an answer that contains "{pile_2}" is not filled in.
    return _PAIRWISE_PLACEHOLDER.sub(lambda m: values[m.group(1)], template)

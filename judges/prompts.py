"""The default prompt templates (seed 004's shapes) and how a pile becomes a prompt's context.

A prompt's version is the hash of its text (`judges.models.prompt_version`): editing a judge's
prompt makes a new instrument, audited afresh.
"""

import re

_PLACEHOLDER = re.compile(r"\{(context|claim|answer)\}")

DEFAULT_VERIFY_PROMPT = """Context:
{context}

Claim: {claim}

Is the claim supported by the context? Answer with exactly one word:
SUPPORTED, CONTRADICTED, or NOT_MENTIONED.
Judge only against the context. Do not use outside knowledge."""

DEFAULT_DECOMPOSE_PROMPT = """Split the answer into atomic factual claims.
One claim per line, each independently verifiable, no commentary.

Answer: {answer}"""


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

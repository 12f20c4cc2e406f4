"""The loopback server's `POST /v1/completions`: prompt-token log-probabilities from a small
deterministic language model built over the prompt's own text (tests/llm_server.py routes
here; same controller, faults and log).

The language model: the prompt is cut into tokens (`TOKEN`: optional leading whitespace, then
a word or one other character, so the tokens spell the prompt exactly); each token after the
first gets an add-one-smoothed bigram probability estimated on the prompt *so far*,

    p(t_i | t_{i-1}) = (n(t_{i-1}, t_i) + 1) / (n(t_{i-1}) + VOCABULARY)

where n counts the bigrams among t_0..t_{i-1} (types compared case-folded, without their
leading whitespace) and n(t_{i-1}) how often t_{i-1} was followed by anything there. So a claim
copied from the pile repeats bigrams the pile already showed, and scores higher with the pile
than without it (positive bits); a claim of new bigrams only meets a larger denominator with
the pile (non-positive bits).

Reply shapes, as real servers send them:
- `echo: true` + `logprobs` (OpenAI legacy, vLLM): `choices[0].logprobs` = {tokens,
  token_logprobs (first null), text_offset, top_logprobs: null}, followed by `max_tokens`
  generated tokens (" ." each, logprob -1) past the prompt's end;
- `prompt_logprobs` (vLLM): `choices[0].prompt_logprobs` = [null, {token id: {logprob, rank,
  decoded_token}}, ...]; with `ctl.prompt_logprobs_decoys` each entry also lists a decoy
  candidate (a top-k above 0), which a client must tell apart by its text.

Faults (`ctl.fail(kind, claim=...)`, claim = the text after the prompt's last "Answer: "):
429, 500, 401, slow, refuse_logprobs (HTTP 400 naming logprobs), no_logprobs (a 200 reply
without any log-probabilities), garbage (the same, with text).
"""

from __future__ import annotations

import functools
import json
import math
import re
import time

TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
VOCABULARY = 1000
GENERATED = " ."


def tokens_of(text: str) -> list[str]:
    return TOKEN.findall(text)


def bigram_logprobs(tokens: list[str]) -> list[float | None]:
    """Natural-log probability of each token given the tokens before it (None for the first)."""
    return _continue(_EMPTY, tokens)[0]


_EMPTY = ((), {}, {}, "")


def _continue(state, tokens: list[str]):
    """Extend a fitted state (logprobs so far, bigram counts, predecessor counts, last type)
    by `tokens`: (their logprobs, the new counts as overlays). The state is never mutated."""
    _, pairs, followed, prev = state
    new_pairs: dict[tuple[str, str], int] = {}
    new_followed: dict[str, int] = {}
    out: list[float | None] = []
    for token in tokens:
        cur = token.strip().lower()
        if prev == "" and not state[0] and not out:
            out.append(None)  # the prompt's first token: nothing to condition on
        else:
            pair = (prev, cur)
            n_pair = pairs.get(pair, 0) + new_pairs.get(pair, 0)
            n_prev = followed.get(prev, 0) + new_followed.get(prev, 0)
            out.append(math.log((n_pair + 1) / (n_prev + VOCABULARY)))
            new_pairs[pair] = new_pairs.get(pair, 0) + 1
            new_followed[prev] = new_followed.get(prev, 0) + 1
        prev = cur
    return out, new_pairs, new_followed, prev


@functools.lru_cache(maxsize=4096)
def _head(head: str):
    """The bigram model fitted on a prompt's head (up to the claim): every claim of an answer
    shares it, so the benchmark's server fits it once per answer, not once per call."""
    tokens = tokens_of(head)
    logprobs, pairs, followed, prev = _continue(_EMPTY, tokens)
    return tokens, logprobs, (tuple(logprobs), pairs, followed, prev)


def prompt_logprobs_of(prompt: str) -> tuple[list[str], list[float | None]]:
    """The prompt's tokens and their log-probabilities; the head before the last "Answer:"
    (a token boundary: ":" is a token of its own, the claim's first token starts with a space)
    comes from the cache."""
    cut = prompt.rfind("Answer:")
    if cut < 0:
        tokens = tokens_of(prompt)
        return tokens, bigram_logprobs(tokens)
    cut += len("Answer:")
    head_tokens, head_logprobs, state = _head(prompt[:cut])
    tail = tokens_of(prompt[cut:])
    tail_logprobs = _continue(state, tail)[0]
    return head_tokens + tail, head_logprobs + tail_logprobs


def _token_id(token: str) -> str:
    return str(sum((i + 1) * ord(c) for i, c in enumerate(token)) % 50000)


def completion_body(body: dict, *, fault_kind: str | None, decoys: bool) -> dict:
    prompt = body.get("prompt") or ""
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    model = body.get("model", "loopback")
    tokens, logprobs = prompt_logprobs_of(prompt)
    n_generated = max(0, int(body.get("max_tokens") or 0))
    choice: dict = {"index": 0, "finish_reason": "length", "logprobs": None}
    text = GENERATED * n_generated
    if fault_kind in ("no_logprobs", "garbage"):
        choice["text"] = "I think it is probably fine." if fault_kind == "garbage" else text
    elif body.get("prompt_logprobs") is not None:
        entries: list = [None]
        for token, logprob in zip(tokens[1:], logprobs[1:], strict=True):
            entry = {_token_id(token): {"logprob": logprob, "rank": 2, "decoded_token": token}}
            if decoys:
                decoy = token + "zz"
                entry[_token_id(decoy)] = {"logprob": -0.1, "rank": 1, "decoded_token": decoy}
            entries.append(entry)
        choice.update(text=text, prompt_logprobs=entries)
    elif body.get("echo") and body.get("logprobs") is not None:
        return _echo_json(prompt, model, n_generated)
    else:
        choice["text"] = text
    return {
        "id": f"cmpl-{time.time_ns()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(tokens),
            "completion_tokens": n_generated,
            "total_tokens": len(tokens) + n_generated,
        },
    }


@functools.lru_cache(maxsize=4096)
def _head_json(head: str) -> tuple[str, str, str, int]:
    """The head's tokens, log-probabilities and offsets as JSON list items, cached: encoding
    hundreds of floats per reply was most of the server's CPU per call."""
    tokens, logprobs, _ = _head(head)
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    items = [json.dumps(tokens)[1:-1], json.dumps(logprobs)[1:-1], json.dumps(offsets)[1:-1]]
    return items[0], items[1], items[2], at


def _echo_json(prompt: str, model: str, n_generated: int) -> str:
    """The echo+logprobs reply as JSON text (what `completion_body` would give, encoded)."""
    cut = prompt.rfind("Answer:")
    cut = cut + len("Answer:") if cut >= 0 else 0
    head_tokens, head_logprobs, head_offsets, at = _head_json(prompt[:cut])
    state = _head(prompt[:cut])[2]
    tail = tokens_of(prompt[cut:]) + [GENERATED] * n_generated
    n_tail = len(tail) - n_generated
    tail_logprobs = _continue(state, tail[:n_tail])[0] + [-1.0] * n_generated
    if not head_tokens and tail_logprobs:  # no cached head: the prompt's first token
        tail_logprobs[0] = None
    offsets = []
    for token in tail:
        offsets.append(at)
        at += len(token)

    def join(head: str, rest: list) -> str:
        more = json.dumps(rest)[1:-1]
        return "[" + ",".join(part for part in (head, more) if part) + "]"

    n_prompt = len(_head(prompt[:cut])[0]) + n_tail
    return (
        f'{{"id": "cmpl-{time.time_ns()}", "object": "text_completion", '
        f'"created": {int(time.time())}, "model": {json.dumps(model)}, "choices": [{{'
        f'"index": 0, "finish_reason": "length", "text": {json.dumps(prompt + GENERATED * n_generated)}, '
        f'"logprobs": {{"tokens": {join(head_tokens, tail)}, '
        f'"token_logprobs": {join(head_logprobs, tail_logprobs)}, '
        f'"text_offset": {join(head_offsets, offsets)}, "top_logprobs": null}}}}], '
        f'"usage": {{"prompt_tokens": {n_prompt}, "completion_tokens": {n_generated}, '
        f'"total_tokens": {n_prompt + n_generated}}}}}'
    )


def claim_of(prompt: str) -> str:
    return prompt.rsplit("Answer: ", 1)[-1] if "Answer: " in prompt else prompt


def respond_completions(ctl, headers, raw: bytes):
    """The reply to one `POST /v1/completions` (recorded in `ctl.log` with its prompt)."""
    from tests.llm_server import Call, Reply

    body = json.loads(raw or b"{}")
    arrived = time.monotonic()
    prompt = body.get("prompt") or ""
    claim = claim_of(prompt if isinstance(prompt, str) else "")
    fault = ctl._next_fault(claim)
    asks_logprobs = body.get("logprobs") is not None or body.get("prompt_logprobs") is not None
    status = 200
    if fault and fault.kind in ("429", "500", "401"):
        status = int(fault.kind)
    elif fault and fault.kind == "refuse_logprobs" and asks_logprobs:
        status = 400
    auth = headers.get("Authorization", "")
    with ctl._lock:
        ctl.log.append(Call(claim, arrived, status, "score", auth, prompt=prompt))
    delay = ctl.latency_s or 0.0
    if status == 429:
        extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        return Reply(
            429, {"error": {"message": "rate limited", "type": "rate_limit"}}, extra, delay
        )
    if status == 500:
        return Reply(
            500, {"error": {"message": "internal error", "type": "server_error"}}, delay=delay
        )
    if status == 401:
        message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')}"
        return Reply(
            401, {"error": {"message": message, "type": "invalid_request_error"}}, delay=delay
        )
    if status == 400:
        error = {"error": {"message": "logprobs is not supported", "type": "invalid_request"}}
        return Reply(400, error, delay=delay)
    if fault and fault.kind == "slow":
        delay += fault.delay
    kind = fault.kind if fault and fault.kind in ("no_logprobs", "garbage") else None
    decoys = bool(getattr(ctl, "prompt_logprobs_decoys", False))
    return Reply(200, completion_body(body, fault_kind=kind, decoys=decoys), delay=delay)

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
    pairs: dict[tuple[str, str], int] = {}
    followed: dict[str, int] = {}
    types = [t.strip().lower() for t in tokens]
    out: list[float | None] = [None]
    for i in range(1, len(types)):
        prev, cur = types[i - 1], types[i]
        p = (pairs.get((prev, cur), 0) + 1) / (followed.get(prev, 0) + VOCABULARY)
        out.append(math.log(p))
        pairs[(prev, cur)] = pairs.get((prev, cur), 0) + 1
        followed[prev] = followed.get(prev, 0) + 1
    return out


def _token_id(token: str) -> str:
    return str(sum((i + 1) * ord(c) for i, c in enumerate(token)) % 50000)


def completion_body(body: dict, *, fault_kind: str | None, decoys: bool) -> dict:
    prompt = body.get("prompt") or ""
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    model = body.get("model", "loopback")
    tokens = tokens_of(prompt)
    logprobs = bigram_logprobs(tokens)
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
        offsets, at = [], 0
        for token in tokens:
            offsets.append(at)
            at += len(token)
        gen_tokens = [GENERATED] * n_generated
        for _ in gen_tokens:
            offsets.append(at)
            at += len(GENERATED)
        choice["text"] = prompt + text
        choice["logprobs"] = {
            "tokens": tokens + gen_tokens,
            "token_logprobs": logprobs + [-1.0] * n_generated,
            "text_offset": offsets,
            "top_logprobs": None,
        }
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

"""A small, real OpenAI chat-completions server on loopback, for tests and benchmarks.

    from tests.llm_server import start_server
    base_url, ctl = start_server(latency_s=0.05)
    ctl.fail("429", claim="Refunds take 14 days.", times=1, retry_after=1.0)
    ...  # point a judge at base_url (ends in /v1)
    ctl.calls_for("Refunds take 14 days.")  # -> 2
    ctl.stop()

It speaks `POST /v1/chat/completions` (JSON in, JSON out, no streaming), `GET /v1/models`, and
`POST /v1/completions` with prompt-token log-probabilities from a bigram model of the prompt
(tests/llm_completions.py, for the grounding-bits judge).
Verdicts are decided deterministically from the prompt, which is expected in the shape of the
default VERIFY prompt (`Context:\\n...\\n\\nClaim: ...\\n`):

- SUPPORTED     if the claim text (case-insensitive, without its final full stop) appears in
                the context;
- CONTRADICTED  else if every word of the claim that is not a number appears in the context
                (same words, different figure or order: "Refunds take 30 days.");
- NOT_MENTIONED otherwise.

`script` may override this: a dict {claim text: verdict or reply text} or a callable
`(claim, context) -> str | None` (None falls back to the rule). A pairwise prompt (a
`Question:` line, then `Answer 1:` and `Answer 2:` blocks, as judges/prompts.py's
DEFAULT_PAIRWISE_PROMPT) is recorded with kind "pairwise" and the question as its claim (so
faults queue per question); the callable gets `(question, (answer 1 text, answer 2 text))` and
its reply is sent as is ("TIE" when there is no script or it says None). A verdict's reply carries
`logprobs.content[0].top_logprobs` for its first token: the chosen verdict's token gets
probability `ctl.p_chosen` (0.8 by default), the two others 0.08 and 0.05, and a stray token
("The") the rest; `ctl.expected_confidence(verdict)` is P(SUPPORTED) renormalised over the
three verdict tokens, which a judge should store.

Faults are queued per claim (or for any claim with claim=None) and served in order:
"429" (with Retry-After), "500", "401" (echoing the Authorization header back in its
message, as OpenAI's "Incorrect API key provided: sk-..." does), "slow" (sleeps `delay` seconds before answering, past the
client's timeout), "garbage" (a reply that is not a verdict), "no_logprobs" (a valid verdict
without logprobs), "refuse_logprobs" (HTTP 400 to a request asking for logprobs, as
servers without logprob support answer). `times=None` repeats a fault forever. A decompose
request gets the faults queued for exactly its answer's text (`claim=<answer text>`). Every request is recorded with its
claim, monotonic arrival time and the status served (`ctl.log`), so tests assert on what the
server saw rather than on their own wall clock; `ctl.max_in_flight` is the most requests it
was answering at once (threads transport). Decompose prompts ("Split the answer into
atomic factual claims") get one claim per sentence of the answer.

Two transports serve the same replies (`_respond`): a thread per connection (`start_server`,
what tests use) and one asyncio event loop parsing HTTP/1.1 with h11
(`start_server(transport="asyncio")`, what the benchmark uses: at hundreds of calls per second
on two cores the threads' GIL hand-offs, not the replies, became the limit).

Run it by hand: `python -m tests.llm_server --port 8765 --latency 0.05 [--transport asyncio]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import h11

VERDICTS = ("SUPPORTED", "CONTRADICTED", "NOT_MENTIONED")
FIRST_TOKEN = {"SUPPORTED": "SUP", "CONTRADICTED": "CON", "NOT_MENTIONED": "NOT"}
FAULTS = ("429", "500", "401", "slow", "garbage", "no_logprobs", "refuse_logprobs")

_CLAIM_RE = re.compile(r"^Claim:\s*(.*?)\s*$", re.MULTILINE)
_CONTEXT_RE = re.compile(r"Context:\s*\n(.*?)\n\s*Claim:", re.DOTALL)
_ANSWER_RE = re.compile(r"Answer:\s*(.*)\Z", re.DOTALL)
# A pairwise prompt (judges/prompts.py DEFAULT_PAIRWISE_PROMPT): its question, then two answers.
_PAIR_RE = re.compile(
    r"^Question:\s*(.*?)\s*$(?=.*^Answer 1:.*^Answer 2:)", re.MULTILINE | re.DOTALL
)
_PAIR_ANSWERS_RE = re.compile(
    r"^Answer 1:\s*\n(.*?)\n\s*\nPile of answer 1:.*?^Answer 2:\s*\n(.*?)\n\s*\nPile of answer 2:",
    re.MULTILINE | re.DOTALL,
)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'_-]*")


@dataclass
class Call:
    claim: str | None
    received_at: float  # time.monotonic() in the server process
    status: int
    kind: str  # "verify", "decompose", "score" (a /completions call) or "other"
    authorization: str = ""
    prompt: str = ""  # kept for /completions calls (tests recompute their log-probabilities)


@dataclass
class Fault:
    kind: str
    retry_after: float | None = None
    delay: float = 5.0
    text: str = "I think the answer is probably yes, mostly."


@dataclass
class Controller:
    latency_s: float = 0.0
    script: Any = None
    p_chosen: float = 0.8
    prompt_logprobs_decoys: bool = False
    log: list[Call] = field(default_factory=list)
    _faults: dict[str | None, deque] = field(default_factory=dict)
    _forever: dict[str | None, Fault] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    loop: asyncio.AbstractEventLoop | None = None  # the asyncio transport's, when used
    thread: threading.Thread | None = None
    # Requests being answered now, and at each arrival how many were (itself counted): the
    # threads transport counts them.
    in_flight: int = 0
    in_flight_seen: list[int] = field(default_factory=list)

    @property
    def max_in_flight(self) -> int:
        """The most requests answered at once."""
        with self._lock:
            return max(self.in_flight_seen, default=0)

    # --- what tests configure ---------------------------------------------------------------
    def fail(
        self,
        kind: str,
        *,
        claim: str | None = None,
        times: int | None = 1,
        retry_after: float | None = None,
        delay: float = 5.0,
        text: str | None = None,
    ) -> None:
        """Queue a fault for `claim` (None: whichever request comes next)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
        fault = Fault(kind=kind, retry_after=retry_after, delay=delay)
        if text is not None:
            fault.text = text
        with self._lock:
            if times is None:
                self._forever[claim] = fault
            else:
                self._faults.setdefault(claim, deque()).extend([fault] * times)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._forever.clear()

    # --- what tests read --------------------------------------------------------------------
    def calls_for(self, claim: str) -> int:
        with self._lock:
            return sum(1 for c in self.log if c.claim == claim)

    def calls_per_claim(self) -> Counter:
        with self._lock:
            return Counter(c.claim for c in self.log if c.kind == "verify")

    def times_for(self, claim: str) -> list[tuple[float, int]]:
        """(arrival time, status served) of every call for `claim`, in order."""
        with self._lock:
            return [(c.received_at, c.status) for c in self.log if c.claim == claim]

    @property
    def total_calls(self) -> int:
        with self._lock:
            return len(self.log)

    def expected_confidence(self, verdict: str) -> float:
        """P(SUPPORTED) a judge should derive from the logprobs served with `verdict`."""
        probs = self._distribution(verdict)
        total = sum(probs[FIRST_TOKEN[v]] for v in VERDICTS)
        return probs["SUP"] / total

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        if self.loop is not None:
            loop, self.loop = self.loop, None
            loop.call_soon_threadsafe(loop.stop)
            if self.thread is not None:
                self.thread.join(timeout=5)

    # --- deciding ---------------------------------------------------------------------------
    def _distribution(self, verdict: str) -> dict[str, float]:
        others = [v for v in VERDICTS if v != verdict]
        probs = {FIRST_TOKEN[verdict]: self.p_chosen}
        probs[FIRST_TOKEN[others[0]]] = 0.08
        probs[FIRST_TOKEN[others[1]]] = 0.05
        probs["The"] = max(1e-6, 1.0 - self.p_chosen - 0.13)
        return probs

    def _next_fault(self, claim: str | None) -> Fault | None:
        with self._lock:
            for key in (claim, None):
                queue = self._faults.get(key)
                if queue:
                    return queue.popleft()
            return self._forever.get(claim) or self._forever.get(None)

    def _decompose_fault(self, answer: str) -> Fault | None:
        """Faults queued for exactly this answer's text (never the any-claim ones)."""
        with self._lock:
            queue = self._faults.get(answer)
            if queue:
                return queue.popleft()
            return self._forever.get(answer)

    def decide_pair(self, question: str, prompt: str) -> str:
        """A pairwise reply: `script(question, (answer 1, answer 2))` when it is callable and
        says something, else "TIE"."""
        if callable(self.script):
            found = _PAIR_ANSWERS_RE.search(prompt)
            answers = (found.group(1).strip(), found.group(2).strip()) if found else ("", "")
            scripted = self.script(question, answers)
            if scripted is not None:
                return scripted
        return "TIE"

    def decide(self, claim: str, context: str) -> str:
        if self.script is not None:
            scripted = (
                self.script(claim, context) if callable(self.script) else self.script.get(claim)
            )
            if scripted is not None:
                return scripted
        norm_claim = claim.strip().rstrip(".").lower()
        norm_context = context.lower()
        if norm_claim and norm_claim in norm_context:
            return "SUPPORTED"
        context_words = set(_WORD_RE.findall(norm_context))
        claim_words = _WORD_RE.findall(norm_claim)
        if claim_words and all(w in context_words for w in claim_words):
            return "CONTRADICTED"
        return "NOT_MENTIONED"


def _completion(text: str, *, model: str, logprobs: list | None, prompt: str) -> dict:
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": {"content": logprobs} if logprobs is not None else None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": max(1, len(prompt.split())),
            "completion_tokens": max(1, len(text.split())),
            "total_tokens": max(1, len(prompt.split())) + max(1, len(text.split())),
        },
    }


@dataclass
class Reply:
    """What to answer one request with, after waiting `delay` seconds (the latency, plus a
    "slow" fault's delay): the same for the threaded and the asyncio transport."""

    status: int
    body: dict | str
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


def _respond(ctl: Controller, method: str, path: str, headers, raw: bytes) -> Reply:
    """Decide the reply to one request, and record it in `ctl.log` (POSTs only)."""
    if method == "GET":
        if path.rstrip("/").endswith("/models"):
            return Reply(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})
        return Reply(404, {"error": {"message": "not found"}})
    if path.rstrip("/").endswith("/v1/completions"):
        from tests.llm_completions import respond_completions

        return respond_completions(ctl, headers, raw)
    body = json.loads(raw or b"{}")
    arrived = time.monotonic()
    if not path.rstrip("/").endswith("/chat/completions"):
        return Reply(404, {"error": {"message": "not found"}})
    prompt = "\n".join(
        m.get("content", "") for m in body.get("messages", []) if isinstance(m, dict)
    )
    model = body.get("model", "loopback")
    claim_match = _CLAIM_RE.search(prompt)
    auth = headers.get("Authorization", "")
    pair_match = _PAIR_RE.search(prompt)
    if "Split the answer into atomic factual claims" in prompt:
        kind, claim = "decompose", None
    elif pair_match:
        kind, claim = "pairwise", pair_match.group(1)
    elif claim_match:
        kind, claim = "verify", claim_match.group(1)
    else:
        kind, claim = "other", None

    answer_text = None
    if kind == "decompose":
        answer_text = (_ANSWER_RE.search(prompt) or re.match(r"(.*)", prompt)).group(1).strip()
    if kind in ("verify", "pairwise"):
        fault = ctl._next_fault(claim)
    elif answer_text is not None:
        fault = ctl._decompose_fault(answer_text)
    else:
        fault = None
    status = 200
    if fault and fault.kind == "429":
        status = 429
    elif fault and fault.kind in ("500", "401"):
        status = int(fault.kind)
    elif fault and fault.kind == "refuse_logprobs" and body.get("logprobs"):
        status = 400
    with ctl._lock:
        ctl.log.append(Call(claim, arrived, status, kind, auth))

    delay = ctl.latency_s or 0.0
    if fault and fault.kind == "429":
        extra = {}
        if fault.retry_after is not None:
            extra["Retry-After"] = f"{fault.retry_after:g}"
        error = {"error": {"message": "rate limited", "type": "rate_limit"}}
        return Reply(429, error, extra, delay)
    if fault and fault.kind == "refuse_logprobs":
        if body.get("logprobs"):
            message = "logprobs is not supported by this server"
            error = {"error": {"message": message, "type": "invalid_request"}}
            return Reply(400, error, delay=delay)
        fault = None
    if fault and fault.kind == "401":
        message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')}"
        error = {"error": {"message": message, "type": "invalid_request_error"}}
        return Reply(401, error, delay=delay)
    if fault and fault.kind == "500":
        error = {"error": {"message": "internal error", "type": "server_error"}}
        return Reply(500, error, delay=delay)
    if fault and fault.kind == "slow":
        delay += fault.delay

    if kind == "decompose":
        answer = (_ANSWER_RE.search(prompt) or re.match(r"(.*)", prompt)).group(1)
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer) if s.strip()]
        text = "\n".join(sentences)
        return Reply(200, _completion(text, model=model, logprobs=None, prompt=prompt), delay=delay)
    if kind not in ("verify", "pairwise"):
        return Reply(200, _completion("OK", model=model, logprobs=None, prompt=prompt), delay=delay)

    if fault and fault.kind == "garbage":
        completion = _completion(fault.text, model=model, logprobs=None, prompt=prompt)
        return Reply(200, completion, delay=delay)
    if kind == "pairwise":
        text = ctl.decide_pair(claim, prompt)
        return Reply(200, _completion(text, model=model, logprobs=None, prompt=prompt), delay=delay)
    context_match = _CONTEXT_RE.search(prompt)
    reply = ctl.decide(claim, context_match.group(1) if context_match else "")
    want_logprobs = bool(body.get("logprobs")) and not (fault and fault.kind == "no_logprobs")
    logprobs = None
    if want_logprobs and reply in VERDICTS:
        probs = ctl._distribution(reply)
        top = sorted(probs.items(), key=lambda kv: -kv[1])[: int(body.get("top_logprobs") or 5)]
        first = FIRST_TOKEN[reply]
        logprobs = [
            {
                "token": first,
                "logprob": math.log(probs[first]),
                "bytes": list(first.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in top
                ],
            }
        ]
        rest = reply[len(first) :]
        if rest:
            logprobs.append(
                {
                    "token": rest,
                    "logprob": -0.01,
                    "bytes": list(rest.encode()),
                    "top_logprobs": [
                        {"token": rest, "logprob": -0.01, "bytes": list(rest.encode())}
                    ],
                }
            )
    completion = _completion(reply, model=model, logprobs=logprobs, prompt=prompt)
    return Reply(200, completion, delay=delay)


def _encode(reply: Reply) -> tuple[bytes, list[tuple[str, str]]]:
    data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    return data, headers + list(reply.headers.items())


def _make_handler(ctl: Controller, respond=_respond):
    """A thread-per-connection handler (http.server) around `respond`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - silence the default stderr log
            pass

        def _answer(self, method: str) -> None:
            raw = b""
            if method == "POST":
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with ctl._lock:
                ctl.in_flight += 1
                ctl.in_flight_seen.append(ctl.in_flight)
            try:
                self._reply(respond(ctl, method, self.path, self.headers, raw))
            finally:
                with ctl._lock:
                    ctl.in_flight -= 1

        def _reply(self, reply) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            data, headers = _encode(reply)
            try:
                self.send_response(reply.status)
                for key, value in headers:
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): nothing to answer

        def do_GET(self):
            self._answer("GET")

        def do_POST(self):
            self._answer("POST")

    return Handler


async def _serve_connection(ctl: Controller, respond, reader, writer) -> None:
    """One keep-alive connection of the asyncio transport: HTTP/1.1 parsed by h11."""
    conn = h11.Connection(h11.SERVER)
    request, body = None, bytearray()
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
            elif isinstance(event, h11.Request):
                request, body = event, bytearray()
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                headers = {
                    k.decode("latin-1").title(): v.decode("latin-1") for k, v in request.headers
                }
                reply = respond(
                    ctl, request.method.decode(), request.target.decode(), headers, bytes(body)
                )
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                data, extra = _encode(reply)
                writer.write(
                    conn.send(h11.Response(status_code=reply.status, headers=extra))
                    + conn.send(h11.Data(data=data))
                    + conn.send(h11.EndOfMessage())
                )
                await writer.drain()
                if conn.our_state is h11.MUST_CLOSE:
                    break
                conn.start_next_cycle()
            else:  # ConnectionClosed, or PAUSED on a client that pipelines and closes
                break
    except (h11.RemoteProtocolError, ConnectionError):
        pass  # a client that gave up (a timeout) or spoke nonsense: drop the connection
    finally:
        writer.close()


def start_server(
    latency_s: float = 0.0, script: Any = None, port: int = 0, *, transport: str = "threads"
) -> tuple[str, Controller]:
    """Start the server on 127.0.0.1 in a daemon thread; returns (base_url ending in /v1, ctl).

    `transport="asyncio"` serves every connection from one event loop (asyncio + h11) instead
    of a thread per connection: the same replies, at a fraction of the CPU, which is what a
    benchmark at hundreds of calls per second needs (bench/llmproc.py).
    """
    ctl = Controller(latency_s=latency_s, script=script)
    return serve(ctl, port=port, transport=transport), ctl


def serve(ctl: Controller, *, port: int = 0, transport: str = "threads", respond=_respond) -> str:
    """Serve `ctl` on 127.0.0.1:`port` from a daemon thread; returns the base URL (…/v1)."""
    if transport == "threads":
        server = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(ctl, respond))
        server.daemon_threads = True
        ctl.server = server
        ctl.thread = threading.Thread(target=server.serve_forever, name="llm-server", daemon=True)
        ctl.thread.start()
        return f"http://127.0.0.1:{server.server_address[1]}/v1"
    if transport != "asyncio":
        raise ValueError(f"unknown transport {transport!r}: threads or asyncio")
    loop = asyncio.new_event_loop()

    async def handle(reader, writer):
        await _serve_connection(ctl, respond, reader, writer)

    server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", port, backlog=1024))

    def run() -> None:
        try:
            loop.run_forever()
        finally:
            server.close()
            loop.close()

    ctl.loop = loop
    ctl.thread = threading.Thread(target=run, name="llm-server", daemon=True)
    ctl.thread.start()
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--transport", choices=("threads", "asyncio"), default="threads")
    args = parser.parse_args()
    base_url, ctl = start_server(latency_s=args.latency, port=args.port, transport=args.transport)
    print(f"serving OpenAI chat-completions at {base_url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        ctl.stop()


if __name__ == "__main__":
    main()

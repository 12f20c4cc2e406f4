"""The loopback OpenAI-compatible server (`tests.llm_server`) in a process of its own.

    python -m bench.llmproc --latency 0.1 [--ragas]

prints `PORT <n>` once serving, then obeys lines on stdin: `stats` prints `STATS <json>`
(calls by kind and status, distinct claims, calls per verify claim), `reset` clears the log,
`quit` (or end of input) stops. A separate process keeps the server from competing for the
measured process's GIL; it serves every connection from one asyncio event loop
(`tests.llm_server.serve(transport="asyncio")`).

    python -m bench.llmproc --calibrate http://127.0.0.1:<n>/v1 [--concurrency 32 --seconds 3]

is the other side: a trivial asyncio client that keeps `concurrency` verify calls in flight
and prints `CALIBRATE <json>` (calls/s, p50/p99, its own CPU) — what the server and the
machine allow before any judge code runs.

`--ragas` also answers RAGAS's faithfulness prompts (statement generation and NLI, recognised
by their `input: {json}` tail) in the JSON schema RAGAS parses, deciding each statement by the
same rule as the judge's verify calls (`Controller.decide`) after the same latency: the
loopback server alone answers verdict words, which RAGAS cannot parse. Everything else gets
`tests.llm_server`'s own replies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import Counter

_INPUT = re.compile(r"\ninput: (\{.*\})\s*\nOutput: ?\Z", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _ragas_reply(ctl, prompt: str) -> str | None:
    """RAGAS's JSON answer to a faithfulness prompt, or None if it is not one."""
    found = _INPUT.search(prompt)
    if not found:
        return None
    try:
        data = json.loads(found.group(1))
    except ValueError:
        return None
    if "answer" in data and "question" in data:
        sentences = [x.strip() for x in _SENTENCE.split(data["answer"]) if x.strip()]
        return json.dumps({"statements": sentences})
    if "context" in data and "statements" in data:
        judged = []
        for statement in data["statements"]:
            verdict = ctl.decide(statement, data["context"])
            judged.append(
                {"statement": statement, "reason": verdict, "verdict": int(verdict == "SUPPORTED")}
            )
        return json.dumps({"statements": judged})
    return None


def server_start(latency_s: float, *, ragas: bool):
    """tests.llm_server's replies on its asyncio transport, optionally speaking RAGAS's JSON
    too; returns (url, ctl).

    asyncio, not a thread per connection: measured with `calibrate` on this 2-core machine
    under load, the threaded server reached about 56% of C/L at C = 32, L = 100 ms (each
    reply waited for its thread to get the GIL back), the event loop about 87% at the same
    CPU per request (≈0.4 ms).
    """
    from tests import llm_server

    ctl = llm_server.Controller(latency_s=latency_s)

    def respond(ctl, method, path, headers, raw):
        if ragas and method == "POST":
            body = json.loads(raw or b"{}")
            prompt = "\n".join(
                m.get("content", "") if isinstance(m.get("content"), str) else ""
                for m in body.get("messages", [])
                if isinstance(m, dict)
            )
            reply = _ragas_reply(ctl, prompt)
            if reply is not None:
                with ctl._lock:
                    ctl.log.append(llm_server.Call(None, time.monotonic(), 200, "ragas"))
                completion = llm_server._completion(
                    reply, model=body.get("model", "loopback"), logprobs=None, prompt=prompt
                )
                return llm_server.Reply(200, completion, delay=ctl.latency_s)
        return llm_server._respond(ctl, method, path, headers, raw)

    return llm_server.serve(ctl, transport="asyncio", respond=respond), ctl


def _calibration_request(host: str, port: int) -> bytes:
    """A verify call as the judge sends it: a five-passage pile, logprobs asked for."""
    pile = "\n\n".join(
        f"[{i}] Policy {i}\nRefunds for order class {i} are processed within 14 days. "
        "They are issued to the original card. Gift cards are not refundable." * 2
        for i in range(1, 6)
    )
    prompt = (
        f"Context:\n{pile}\n\nClaim: Refunds are issued to the original card.\n\n"
        "Is the claim supported by the context? Answer with exactly one word:\n"
        "SUPPORTED, CONTRADICTED, or NOT_MENTIONED.\n"
        "Judge only against the context. Do not use outside knowledge."
    )
    body = json.dumps(
        {
            "model": "loopback",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": 8,
            "logprobs": True,
            "top_logprobs": 5,
        }
    ).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _calibrate(base_url: str, concurrency: int, seconds: float) -> dict:
    """`concurrency` keep-alive connections, each sending the next verify call as soon as the
    last is answered, for `seconds`: the most a client can get out of the server. The client
    is as cheap as a client gets (one prepared request, replies read by Content-Length), so
    what it measures is the server and the machine."""
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    request = _calibration_request(url.hostname, url.port)
    latencies: list[float] = []
    deadline = time.monotonic() + seconds

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        try:
            while time.monotonic() < deadline:
                sent = time.monotonic()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)content-length:\s*(\d+)", head)
                await reader.readexactly(int(length.group(1)))
                if not head.startswith(b"HTTP/1.1 200"):
                    raise RuntimeError(f"the server answered {head.splitlines()[0]!r}")
                latencies.append(time.monotonic() - sent)
        finally:
            writer.close()

    started, cpu = time.monotonic(), time.process_time()
    await asyncio.gather(*(connection() for _ in range(concurrency)))
    elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "calls": len(latencies),
        "seconds": elapsed,
        "calls_per_s": len(latencies) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "client_cpu_s": time.process_time() - cpu,
    }


def calibrate(base_url: str, *, concurrency: int, seconds: float) -> dict:
    """Calls per second the server gives a trivial client (see `_calibrate`)."""
    return asyncio.run(_calibrate(base_url, concurrency, seconds))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--ragas", action="store_true", help="also answer RAGAS's JSON prompts")
    parser.add_argument("--calibrate", metavar="BASE_URL", help="be the trivial client instead")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    if args.calibrate:
        result = calibrate(args.calibrate, concurrency=args.concurrency, seconds=args.seconds)
        print("CALIBRATE " + json.dumps(result), flush=True)
        return 0
    base_url, ctl = server_start(args.latency, ragas=args.ragas)
    print(f"PORT {base_url.rsplit(':', 1)[1].split('/')[0]}", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "stats":
            with ctl._lock:
                log = list(ctl.log)
            kinds = Counter(call.kind for call in log)
            statuses = Counter(call.status for call in log)
            claims = {call.claim for call in log if call.kind == "verify"}
            print(
                "STATS "
                + json.dumps(
                    {
                        "calls": len(log),
                        "by_kind": dict(kinds),
                        "by_status": {str(k): v for k, v in statuses.items()},
                        "verify_claims": len(claims),
                        "first": min((c.received_at for c in log), default=None),
                        "last": max((c.received_at for c in log), default=None),
                    }
                ),
                flush=True,
            )
        elif command == "reset":
            with ctl._lock:
                ctl.log.clear()
            print("OK", flush=True)
        elif command == "quit":
            break
    ctl.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The loopback OpenAI-compatible server (`tests.llm_server`) in a process of its own.

    python -m bench.llmproc --latency 0.1 [--ragas]

prints `PORT <n>` once serving, then obeys lines on stdin: `stats` prints `STATS <json>`
(calls by kind and status, distinct claims, calls per verify claim), `reset` clears the log,
`quit` (or end of input) stops. A separate process keeps the server's threads from competing
for the measured process's GIL.

`--ragas` also answers RAGAS's faithfulness prompts (statement generation and NLI, recognised
by their `input: {json}` tail) in the JSON schema RAGAS parses, deciding each statement by the
same rule as the judge's verify calls (`Controller.decide`) after the same latency: the
loopback server alone answers verdict words, which RAGAS cannot parse. Everything else goes
to the unchanged `tests.llm_server` handler.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer

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
    """tests.llm_server's server, optionally speaking RAGAS's JSON too; returns (url, ctl)."""
    from tests import llm_server

    ctl = llm_server.Controller(latency_s=latency_s)
    base = llm_server._make_handler(ctl)

    class Handler(base):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if ragas:
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
                    time.sleep(ctl.latency_s)
                    completion = llm_server._completion(
                        reply, model=body.get("model", "loopback"), logprobs=None, prompt=prompt
                    )
                    self._send(200, completion)
                    return
            self.rfile = io.BytesIO(raw)
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctl.server = server
    ctl.thread = threading.Thread(target=server.serve_forever, daemon=True)
    ctl.thread.start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1", ctl


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--ragas", action="store_true", help="also answer RAGAS's JSON prompts")
    args = parser.parse_args()
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

"""The loopback OpenAI-compatible server (`tests.llm_server`) in a process of its own.

    python -m bench.llmproc --latency 0.1

prints `PORT <n>` once serving, then obeys lines on stdin: `stats` prints `STATS <json>`
(calls by kind and status, distinct claims, calls per verify claim), `reset` clears the log,
`quit` (or end of input) stops. A separate process keeps the server's threads from competing
for the measured process's GIL.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    from tests.llm_server import start_server

    base_url, ctl = start_server(latency_s=args.latency)
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

"""A small, real RAG server on loopback speaking the native contract (testsets/rag_endpoints.py)
and, at /chat/completions, the OpenAI-compatible one with its sources in
choices[0].message.context.passages.

    base_url, ctl = start_rag_server(timeout_s=0.3)

Deterministic faults: every fifth call (5th, 10th, ...) answers HTTP 500; a question containing
"stall" sleeps past the client's timeout on every call; a question containing "garbage"
answers {"answer": 3, ...}. Otherwise the answer is "Answer to: <question>" and the passages
are `ctl.passages_for(question)`. `ctl.log` records (question, status) per call,
`ctl.authorization` the last Authorization header seen and `ctl.max_in_flight` the most calls
it was answering at once (`ctl.delay_s` holds every answer that long).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Control:
    def __init__(self, stall_s: float):
        self.stall_s = stall_s
        self.calls = 0
        self.log: list[tuple[str, int]] = []
        self.authorization = ""
        self.lock = threading.Lock()
        self.server = None
        self.delay_s = 0.0  # every answer waits this long (to see calls overlap)
        self.in_flight = 0
        self.max_in_flight = 0

    @staticmethod
    def passages_for(question: str) -> list[dict]:
        return [
            {
                "id": f"p-{len(question)}-{rank}",
                "text": f"Passage {rank} about {question}",
                "title": f"Doc {rank}",
            }
            for rank in (1, 2, 3)
        ]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(ctl: Control):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            openai = self.path.endswith("/chat/completions")
            question = body["messages"][-1]["content"] if openai else body["question"]
            with ctl.lock:
                ctl.in_flight += 1
                ctl.max_in_flight = max(ctl.max_in_flight, ctl.in_flight)
            time.sleep(ctl.delay_s)
            status, reply = self._answer(question, openai)
            with ctl.lock:  # before the reply: the client may call again as soon as it has it
                ctl.in_flight -= 1
            self._send(status, reply)

        def _answer(self, question: str, openai: bool) -> tuple[int, object]:
            with ctl.lock:
                ctl.calls += 1
                fifth = ctl.calls % 5 == 0
                ctl.authorization = self.headers.get("Authorization", "")
            status = 500 if fifth else 200
            ctl.log.append((question, status))
            if fifth:
                return 500, {"error": "internal"}
            if "stall" in question:
                time.sleep(ctl.stall_s)
            answer, passages = f"Answer to: {question}", ctl.passages_for(question)
            if "garbage" in question:
                answer = 3
            if openai:
                message = {"content": answer, "context": {"passages": passages}}
                return 200, {"choices": [{"message": message}]}
            return 200, {"answer": answer, "passages": passages}

    return Handler


def start_rag_server(stall_s: float = 1.0) -> tuple[str, Control]:
    ctl = Control(stall_s)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(ctl))
    ctl.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", ctl

"""A loopback HTTP listener that records every request it receives, for security tests.

    listener = Listener.start()                  # answers 200 with a one-word verdict
    listener = Listener.start(status=302, location="http://127.0.0.1:9/")
    listener = Listener.start(status=500, body="...")
    listener.requests  # [{"method", "path", "headers": {name: value}, "body"}]
    listener.stop()

It stands in for an attacker's server (or an internal service) a judge must never reach, so
tests assert on what it received, not on what the code under test says it did.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPLETION = {
    "id": "x",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "SUPPORTED"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class Listener:
    def __init__(self, *, status: int, location: str | None, body: str | None):
        self.status = status
        self.location = location
        self.body = body
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                with listener._lock:
                    listener.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers.items()),
                            "body": raw.decode("utf-8", "replace"),
                        }
                    )
                data = (
                    listener.body if listener.body is not None else json.dumps(COMPLETION)
                ).encode()
                self.send_response(listener.status)
                if listener.location:
                    self.send_header("Location", listener.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, *, status: int = 200, location: str | None = None, body: str | None = None):
        return cls(status=status, location=location, body=body)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def headers_seen(self) -> list[str]:
        with self._lock:
            return [f"{k}: {v}" for r in self.requests for k, v in r["headers"].items()]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

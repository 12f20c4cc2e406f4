"""A small, real OpenAI-compatible chat-completions server on loopback for the LLM generator.

    base_url, ctl = start_generation_server(reply_for=lambda prompt: "[...]")
    ...  # declare base_url (ends in /v1) as an LLM endpoint
    ctl.prompts      # every prompt received, in order
    ctl.stop()

`reply_for(prompt)` decides the reply's message content (a str; a list or dict is sent as its
JSON); `ctl.authorization` is the last Authorization header seen. Every reply carries a
`usage` of 100 prompt and 50 completion tokens, so a test can check the job counts them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USAGE = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}


class Control:
    def __init__(self, reply_for: Callable[[str], object]):
        self.reply_for = reply_for
        self.prompts: list[str] = []
        self.authorization = ""
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def start_generation_server(reply_for: Callable[[str], object]) -> tuple[str, Control]:
    ctl = Control(reply_for)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            prompt = body["messages"][-1]["content"]
            with ctl.lock:
                ctl.prompts.append(prompt)
                ctl.authorization = self.headers.get("Authorization", "")
            content = ctl.reply_for(prompt)
            if not isinstance(content, str):
                content = json.dumps(content, ensure_ascii=False)
            reply = {
                "id": "gen-1",
                "object": "chat.completion",
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": USAGE,
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctl.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1", ctl

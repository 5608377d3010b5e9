"""A small OpenAI-compatible chat-completions server for tests and benchmarks, on 127.0.0.1 only.

The server answers ``POST /chat/completions`` (and ``/v1/chat/completions``) from a *script*: a callable
that receives the parsed request body and the 0-based index of the call and returns a :class:`Reply`
(status, content or raw body, added latency, finish reason, usage). It counts and keeps every request,
so tests can assert how many HTTP calls a run made (zero when replaying a cassette) and what the judge
was sent (delimiters, response_format, no API key).

It is used by ``tests/judges`` and ``bench/bench_judge.py``; it never binds anything but the loopback
interface.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["JudgeServer", "Reply", "Script", "verdict_reply"]


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: The assistant message content (ignored when ``raw`` is set).
        status: HTTP status; anything but 200 is sent as an OpenAI-style error body.
        delay: Seconds to sleep before answering (added latency).
        raw: Exact bytes to send as the body instead of a well-formed completion (malformed JSON).
        finish_reason: ``stop`` or ``length`` (a truncated reply).
        prompt_tokens: Reported prompt tokens.
        completion_tokens: Reported completion tokens.
        headers: Extra response headers (for example ``Retry-After``).
    """

    content: str = ""
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 100
    completion_tokens: int = 20
    headers: dict[str, str] = field(default_factory=dict)


Script = Callable[[dict[str, Any], int], Reply]


def verdict_reply(verdict: str, *, quotes: tuple[str, ...] = (), rationale: str = "scripted") -> str:
    """Return the JSON text a well-behaved judge would send for one criterion."""
    return json.dumps({"verdict": verdict, "evidence": list(quotes), "rationale": rationale})


class JudgeServer:
    """A threaded loopback server that answers chat completions from a script.

    Use as a context manager; ``api_base`` is the URL to give litellm. ``calls`` counts every request
    received (including those answered with an error status), ``requests`` keeps their bodies and
    ``auth_headers`` their ``Authorization`` headers.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        """The base URL (``http://127.0.0.1:PORT/v1``)."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _next(self, body: dict[str, Any], auth: str) -> Reply:
        with self._lock:
            index = self.calls
            self.calls += 1
            self.requests.append(body)
            self.auth_headers.append(auth)
        return self.script(body, index)

    def start(self) -> JudgeServer:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/stats"):
                    self._send(200, json.dumps({"calls": server.calls}).encode(), {})
                else:
                    self._send(404, b"{}", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparseable": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}).encode(), {})
                    return
                reply = server._next(body, self.headers.get("Authorization", ""))
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.raw is not None:
                    self._send(reply.status, reply.raw, reply.headers)
                    return
                if reply.status != 200:
                    err = {
                        "error": {"message": f"scripted {reply.status}", "type": "server_error", "code": None}
                    }
                    self._send(reply.status, json.dumps(err).encode(), reply.headers)
                    return
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": body.get("model", "test-judge"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.content},
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                    },
                }
                self._send(200, json.dumps(payload).encode(), reply.headers)

            def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve ``pass`` verdicts with a fixed latency until killed; print the API base on the first line.

    ``GET <api_base>/stats`` returns ``{"calls": n}``. Used by ``bench/bench_judge.py`` to keep the
    server's threads out of the measured process.
    """
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds added to every reply")
    args = parser.parse_args(argv)
    reply = verdict_reply("pass", rationale="benchmark")
    server = JudgeServer(lambda body, i: Reply(content=reply, delay=args.latency)).start()
    print(server.api_base, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()

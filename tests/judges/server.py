"""A small OpenAI-compatible and Anthropic Messages server for tests and benchmarks, on 127.0.0.1 only.

The server answers ``POST /chat/completions`` (and ``/v1/chat/completions``) in the OpenAI shape and
``POST /v1/messages`` in the Anthropic Messages shape from a *script*: a callable
that receives the parsed request body and the 0-based index of the call and returns a :class:`Reply`
(status, content or raw body, added latency, finish reason, usage). It counts and keeps every request,
so tests can assert how many HTTP calls a run made (zero when replaying a cassette) and what the judge
was sent (delimiters, response_format, no API key).

Every reply is written with one ``write`` on a socket with ``TCP_NODELAY``: writing the headers and the
body separately let Nagle's algorithm hold the body until the client's delayed ACK, adding about 40 ms to
every reply (144 ms per call at a configured 100 ms).

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
        finish_reason: ``stop`` or ``length`` (a truncated reply); on the Anthropic endpoint the
            ``stop_reason`` sent is ``end_turn`` for ``stop``, ``max_tokens`` for ``length``, and the value
            itself otherwise.
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


def _anthropic_body(body: dict[str, Any], reply: Reply) -> bytes:
    """The Anthropic Messages reply (or error body) for ``reply``."""
    if reply.status != 200:
        error = {"type": "api_error", "message": f"scripted {reply.status}"}
        return json.dumps({"type": "error", "error": error}).encode()
    stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, reply.finish_reason)
    payload = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "test-judge"),
        "content": [{"type": "text", "text": reply.content}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
    }
    return json.dumps(payload).encode()


class JudgeServer:
    """A threaded loopback server that answers chat completions from a script.

    Use as a context manager; ``api_base`` is the URL to give litellm. ``calls`` counts every request
    received (including those answered with an error status), ``requests`` keeps their bodies and
    ``auth_headers`` their ``Authorization`` headers (or ``x-api-key`` on the Anthropic endpoint),
    ``paths`` the URL path of each and ``peers`` the client's ``(host, port)`` (one per connection).
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self.paths: list[str] = []
        self.peers: list[tuple[str, int]] = []
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

    @property
    def root(self) -> str:
        """The server's root URL (``http://127.0.0.1:PORT``), the ``api_base`` of an Anthropic client."""
        return self.api_base.removesuffix("/v1")

    def _next(self, body: dict[str, Any], auth: str, path: str, peer: tuple[str, int]) -> Reply:
        with self._lock:
            index = self.calls
            self.calls += 1
            self.requests.append(body)
            self.auth_headers.append(auth)
            self.paths.append(path)
            self.peers.append(peer)
        return self.script(body, index)

    def start(self) -> JudgeServer:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # TCP_NODELAY on every accepted socket

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
                path = self.path.rstrip("/")
                anthropic = path.endswith("/messages")
                if not anthropic and not path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}).encode(), {})
                    return
                auth = self.headers.get("x-api-key" if anthropic else "Authorization", "")
                reply = server._next(body, auth, path, self.client_address[:2])
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.raw is not None:
                    self._send(reply.status, reply.raw, reply.headers)
                    return
                if anthropic:
                    self._send(reply.status, _anthropic_body(body, reply), reply.headers)
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
                # One write for status line, headers and body: written separately, the body waits for
                # the client's delayed ACK of the headers (Nagle), about 40 ms on every reply.
                phrase = self.responses.get(status, ("",))[0]
                lines = [
                    f"HTTP/1.1 {status} {phrase}",
                    "Content-Type: application/json",
                    f"Content-Length: {len(data)}",
                    *(f"{k}: {v}" for k, v in headers.items()),
                ]
                self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
                self.wfile.flush()

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

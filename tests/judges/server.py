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

It also implements the OpenAI files and batches API that ``judgekit grade --batch`` uses: ``POST
/v1/files`` (a multipart upload), ``GET /v1/files/{id}/content``, ``POST /v1/batches`` and ``GET
/v1/batches/{id}``. A batch answers each input line from the same script (a 200 reply goes to the output
file, any other status to the error file) and moves through ``validating``, ``in_progress``,
``finalizing`` and ``completed`` one step per look, or ends as :attr:`JudgeServer.batch_outcome` says
(``failed``, ``expired``, ``cancelled``); :attr:`JudgeServer.batch_hold` keeps it ``in_progress``. Counters
(``uploads``, ``batches_created``, ``batch_polls``) let tests prove nothing was submitted twice;
:attr:`JudgeServer.batch_faults` makes any of those calls fail with an error status.

It is used by ``tests/judges`` and ``bench/bench_judge.py``; it never binds anything but the loopback
interface.
"""

from __future__ import annotations

import json
import sys
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
        cached_tokens: Prompt tokens reported as read from the provider's prompt cache (OpenAI
            ``usage.prompt_tokens_details.cached_tokens``, Anthropic ``cache_read_input_tokens``, which
            the Anthropic endpoint then leaves out of ``input_tokens`` as Anthropic does); 0: not reported.
        cache_creation_tokens: Prompt tokens reported as written to Anthropic's prompt cache
            (``cache_creation_input_tokens``, also left out of ``input_tokens``; the Anthropic endpoint
            only); 0: not reported.
        headers: Extra response headers (for example ``Retry-After``).
    """

    content: str = ""
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    cache_creation_tokens: int = 0
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
        "usage": {
            "input_tokens": reply.prompt_tokens - reply.cached_tokens - reply.cache_creation_tokens,
            "output_tokens": reply.completion_tokens,
            **({"cache_read_input_tokens": reply.cached_tokens} if reply.cached_tokens else {}),
            **(
                {"cache_creation_input_tokens": reply.cache_creation_tokens}
                if reply.cache_creation_tokens
                else {}
            ),
        },
    }
    return json.dumps(payload).encode()


def _cache_details(reply: Reply) -> dict[str, Any]:
    """OpenAI's report of prompt tokens read from its cache (nothing when ``reply`` reports none)."""
    return {"prompt_tokens_details": {"cached_tokens": reply.cached_tokens}} if reply.cached_tokens else {}


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The OpenAI chat completion for ``reply`` (a direct call's body, and a batch output line's)."""
    return {
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
            **_cache_details(reply),
        },
    }


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
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.batches_created = 0
        self.batch_polls = 0
        self.batch_hold = False
        """While True, every batch stays ``in_progress`` (a test kills the client meanwhile)."""
        self.batch_outcome = "completed"
        """How every batch ends: ``completed``, ``failed``, ``expired`` or ``cancelled``."""
        self.batch_drop: set[int] = set()
        """0-based input lines a completed batch leaves out of both its output and its error file."""
        self.batch_partial = False
        """With an ``expired`` or ``cancelled`` outcome: the batch ends with an output and an error file
        for the lines not in :attr:`batch_drop` (those it finished), as a provider's does."""
        self.batch_create_reply_lost = False
        """While True, ``POST /v1/batches`` creates the batch and then answers 500, as when the reply is lost
        on the way back (the client cannot know the batch exists)."""
        self.batch_faults: dict[str, int] = {}
        """Files and batches calls answered with an error status instead, while set: ``{"upload": 500}``.
        The calls are ``upload`` (``POST /files``), ``create`` (``POST /batches``), ``list`` (``GET
        /batches``), ``retrieve`` (``GET /batches/{id}``) and ``content`` (``GET /files/{id}/content``);
        :attr:`fault_hits` counts the calls answered so."""
        self.fault_hits: dict[str, int] = {}
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

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        """Store the file part of a multipart upload; its file object."""
        boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
        data = b""
        name = "upload.jsonl"
        for part in raw.split(b"--" + boundary):
            head, _, body = part.partition(b"\r\n\r\n")
            if b'name="file"' in head:
                data = body.removesuffix(b"\r\n")
                if b'filename="' in head:
                    name = head.split(b'filename="', 1)[1].split(b'"', 1)[0].decode()
        with self._lock:
            self.uploads += 1
            file_id = f"file-{self.uploads}"
            self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": 1700000000,
            "filename": name,
            "purpose": "batch",
            "status": "processed",
        }

    def _create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        input_id = str(body.get("input_file_id"))
        if input_id not in self.files:
            return 404, {"error": {"message": f"no file {input_id}", "type": "invalid_request_error"}}
        lines = [json.loads(line) for line in self.files[input_id].splitlines() if line.strip()]
        with self._lock:
            self.batches_created += 1
            batch_id = f"batch_{self.batches_created}"
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "errors": None,
                "input_file_id": input_id,
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": 1700000000,
                "metadata": body.get("metadata"),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "_lines": lines,
            }
        return 200, self._public(self.batches[batch_id])

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _advance(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        """One look at a batch: it moves one status on (answering its lines when it completes)."""
        with self._lock:
            self.batch_polls += 1
            batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}}
        status = batch["status"]
        if status in ("completed", "failed", "expired", "cancelled"):
            return 200, self._public(batch)
        if self.batch_hold or status == "validating":
            batch["status"] = "in_progress"
        elif status == "in_progress":
            if self.batch_outcome in ("expired", "cancelled") and self.batch_partial:
                self._complete(batch)  # the lines not in batch_drop were finished before the batch ended
            batch["status"] = "finalizing" if self.batch_outcome == "completed" else self.batch_outcome
            if batch["status"] == "failed":
                batch["errors"] = {
                    "object": "list",
                    "data": [{"code": "invalid_request", "message": "scripted batch failure", "line": 1}],
                }
        else:
            self._complete(batch)
        return 200, self._public(batch)

    def _complete(self, batch: dict[str, Any]) -> None:
        output: list[str] = []
        errors: list[str] = []
        for index, line in enumerate(batch["_lines"]):
            if index in self.batch_drop:
                continue
            reply = self.script(line["body"], index)
            entry: dict[str, Any] = {
                "id": f"batch_req_{index}",
                "custom_id": line["custom_id"],
                "error": None,
            }
            if reply.status == 200:
                entry["response"] = {
                    "status_code": 200,
                    "request_id": f"req_{index}",
                    "body": _completion(line["body"], reply),
                }
                output.append(json.dumps(entry))
            else:
                error = {"message": f"scripted {reply.status}", "type": "invalid_request_error"}
                entry["response"] = {
                    "status_code": reply.status,
                    "request_id": f"req_{index}",
                    "body": {"error": error},
                }
                errors.append(json.dumps(entry))
        with self._lock:
            for kind, rows in (("output_file_id", output), ("error_file_id", errors)):
                if rows:
                    file_id = f"file-{kind.split('_')[0]}-{batch['id']}"
                    self.files[file_id] = ("\n".join(rows) + "\n").encode()
                    batch[kind] = file_id
            batch["request_counts"] = {
                "total": len(batch["_lines"]),
                "completed": len(output),
                "failed": len(errors),
            }
            batch["status"] = "completed"

    def _fault(self, call: str) -> tuple[int, dict[str, Any]] | None:
        """The scripted error answering ``call`` (see :attr:`batch_faults`), or ``None``."""
        status = self.batch_faults.get(call)
        if status is None:
            return None
        with self._lock:
            self.fault_hits[call] = self.fault_hits.get(call, 0) + 1
        return status, {"error": {"message": f"scripted {status} on {call}", "type": "server_error"}}

    @staticmethod
    def _batch_call(method: str, path: str) -> str | None:
        """Which files and batches call a request is (the names of :attr:`batch_faults`), or ``None``."""
        parts = path.split("?", 1)[0].strip("/").split("/")
        if method == "POST":
            return {"files": "upload", "batches": "create"}.get(parts[-1])
        if parts[-1] == "batches":
            return "list"
        if len(parts) >= 4 and parts[-3] == "files" and parts[-1] == "content":
            return "content"
        if len(parts) >= 3 and parts[-2] == "batches":
            return "retrieve"
        return None

    def _batch_get(self, path: str) -> tuple[int, Any]:
        """``GET`` on the files and batches API: ``(status, body)``; bytes for a file's content."""
        call = self._batch_call("GET", path)
        fault = self._fault(call) if call is not None else None
        if fault is not None:
            return fault
        parts = path.split("?", 1)[0].strip("/").split("/")
        if parts[-1] == "batches":  # the list, newest first, as OpenAI lists them
            with self._lock:
                listed = [self._public(b) for b in reversed(list(self.batches.values()))]
            return 200, {"object": "list", "data": listed, "has_more": False}
        if len(parts) >= 4 and parts[-3] == "files" and parts[-1] == "content":
            data = self.files.get(parts[-2])
            if data is None:
                return 404, {"error": {"message": f"no file {parts[-2]}", "type": "invalid_request_error"}}
            return 200, data
        if len(parts) >= 3 and parts[-2] == "batches":
            return self._advance(parts[-1])
        return 404, {}

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
                    return
                status, body = server._batch_get(self.path.rstrip("/"))
                self._send(status, body if isinstance(body, bytes) else json.dumps(body).encode(), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                route = self.path.rstrip("/")
                call = server._batch_call("POST", route)
                fault = server._fault(call) if call is not None else None
                if fault is not None:
                    self._send(fault[0], json.dumps(fault[1]).encode(), {})
                    return
                if route.endswith("/files"):
                    made = server._upload(self.headers.get("Content-Type", ""), raw)
                    self._send(200, json.dumps(made).encode(), {})
                    return
                if route.endswith("/batches"):
                    status, created = server._create_batch(json.loads(raw))
                    if status == 200 and server.batch_create_reply_lost:
                        status, created = 500, {"error": {"message": "reply lost", "type": "server_error"}}
                    self._send(status, json.dumps(created).encode(), {})
                    return
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
                self._send(200, json.dumps(_completion(body, reply)).encode(), reply.headers)

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

            def handle_error(self, request: Any, client_address: Any) -> None:
                # a client that drops its connection (litellm closing a pooled socket, a killed process)
                # is not the server's error: socketserver would print its traceback into the test's
                # captured stderr, where tests look for tracebacks of judgekit's own
                if isinstance(sys.exc_info()[1], ConnectionError):
                    return
                super().handle_error(request, client_address)

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

"""The loopback judge server the benchmarks grade against, in its own process.

``tests/judges/server.py`` run as a script: it answers every request with a passing verdict after
``latency`` seconds and counts the requests (``GET <api_base>/stats``). Its own process, so that its
memory and CPU are not the measured process's. Imported by the benchmarks as ``judge_server`` (a script's
folder is on ``sys.path``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

__all__ = ["server_calls", "start_server"]

ROOT = Path(__file__).resolve().parents[1]


def start_server(latency: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    """Start the server with ``latency`` seconds added to every reply.

    Returns:
        The server's process (kill it when done) and its API base URL (``http://127.0.0.1:PORT/v1``).

    Raises:
        SystemExit: The server did not print its API base.
    """
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "judges" / "server.py"), "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base = proc.stdout.readline().strip()
    if not base.startswith("http://127.0.0.1:"):
        proc.kill()
        raise SystemExit(f"server did not start: {base!r}")
    return proc, base


def server_calls(base: str) -> int:
    """How many requests the server at ``base`` has answered so far."""
    with urllib.request.urlopen(base + "/stats", timeout=5) as resp:
        return int(json.load(resp)["calls"])

"""Fixtures for judge tests: loopback OpenAI-compatible servers and clients pointed at them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from judges.server import JudgeServer, Script

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def serve() -> Iterator[Callable[[Script], JudgeServer]]:
    """Start loopback servers from scripts; every one is stopped after the test."""
    started: list[JudgeServer] = []

    def start(script: Script) -> JudgeServer:
        server = JudgeServer(script).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()

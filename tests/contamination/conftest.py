"""Shared fixtures: a key, a few golden cases with long and short texts, an index, export writers."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from judgekit.contamination.index import ContaminationIndex, IndexOptions, Key, build_index, key_from_bytes

KEY_BYTES = b"0123456789abcdef0123456789abcdef-test-key"
OTHER_KEY_BYTES = b"fedcba9876543210fedcba9876543210-other-key"

OPENING = (
    "I got charged twice for November on my auto and home bundle and I want the money back today, "
    "the second payment went through on the fourteenth."
)
ACCEPTANCE = (
    "Refunds exactly one of the two November payments to the original card, states the amount of "
    "412.18 and gives the posting window from billing policy BIL-7 without promising same-day funds."
)
HIDDEN_FACT = "The second payment was made by a spouse over the phone"
DENVER = (
    "My flight to Denver was cancelled last night and I need to be rebooked on the first flight "
    "tomorrow morning because I have a wedding to attend at noon."
)
CASES: list[tuple[str, list[tuple[str, str]]]] = [
    ("gs-031", [("user.opening", OPENING), ("acceptance", ACCEPTANCE), ("user.hidden_facts.0", HIDDEN_FACT)]),
    ("gs-044", [("input", DENVER)]),
]
CLEAN_TEXTS = [
    "Can you summarise the attached quarterly report in three bullet points for the board?",
    "Write a haiku about the sea at dawn, with a seagull and a fishing boat in it.",
    "The weather in Lisbon is mild in November; pack a light jacket and an umbrella just in case.",
    "Sure! Here is a Python function that reverses a linked list in place and returns the new head.",
]


@pytest.fixture
def key() -> Key:
    return key_from_bytes(KEY_BYTES)


@pytest.fixture
def index(key: Key) -> ContaminationIndex:
    return build_index(CASES, key, IndexOptions(canaries=("JUDGEKIT-CANARY-TESTSET",)))


def chat(*contents: str) -> dict[str, Any]:
    roles = ["system", "user", "assistant"]
    return {"messages": [{"role": roles[i % 3], "content": c} for i, c in enumerate(contents)]}


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    def write(records: Sequence[Any], name: str = "export.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return path

    return write

"""The JSONL cassette: keys, round trip, torn lines, concurrent writers, compaction, secret masking."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.judges.cache import Cassette, request_key

REQUEST = {
    "model": "openai/x",
    "messages": [{"role": "user", "content": "hi"}],
    "temperature": 0.0,
    "sample": 0,
}


def test_key_is_order_independent_and_covers_every_field() -> None:
    reordered = dict(reversed(list(REQUEST.items())))
    assert request_key(REQUEST) == request_key(reordered)
    for field, value in [("model", "openai/y"), ("temperature", 0.1), ("sample", 1), ("response_format", {})]:
        assert request_key({**REQUEST, field: value}) != request_key(REQUEST)


@given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=4))
def test_key_is_a_sha256_hex(extra: dict[str, str]) -> None:
    key = request_key({**REQUEST, "extra": extra})
    assert len(key) == 64
    assert int(key, 16) >= 0


def test_round_trip_and_reload(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "c.jsonl"
    cassette = Cassette(path)
    key = request_key(REQUEST)
    assert cassette.get(key) is None
    cassette.put(key, REQUEST, {"content": 'é {"verdict": "pass"}', "finish_reason": "stop"})
    assert cassette.get(key)["content"] == 'é {"verdict": "pass"}'
    again = Cassette(path)
    assert len(again) == 1
    assert again.get(key)["finish_reason"] == "stop"
    line = path.read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(line)["request"] == REQUEST
    assert "é" in line


def test_sees_records_appended_by_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    reader = Cassette(path)
    Cassette(path).put("k1", REQUEST, {"content": "a"})
    assert reader.get("k1") == {"content": "a"}


def test_torn_and_malformed_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    good = json.dumps({"key": "k", "request": {}, "reply": {"content": "ok"}})
    path.write_text(good + "\nnot json\n" + '{"key": "t", "reply": {"content": "to', encoding="utf-8")
    cassette = Cassette(path)
    assert cassette.get("k") == {"content": "ok"}
    assert cassette.get("t") is None
    assert cassette.skipped_lines == 1


def _writer(path: str, worker: int, n: int) -> None:
    cassette = Cassette(path)
    for i in range(n):
        cassette.put(f"{worker}-{i}", {"w": worker, "i": i, "pad": "x" * 5000}, {"content": f"{worker}:{i}"})


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 40)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 160
    records = [json.loads(line) for line in lines]  # every line is whole JSON
    assert {r["key"] for r in records} == {f"{w}-{i}" for w in range(4) for i in range(40)}
    assert Cassette(path).skipped_lines == 0


def test_compact_sorts_and_keeps_the_last_record(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    cassette = Cassette(path)
    cassette.put("b", REQUEST, {"content": "old"})
    cassette.put("a", REQUEST, {"content": "x"})
    cassette.put("b", REQUEST, {"content": "new"})
    assert cassette.compact() == 2
    keys = [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert keys == ["a", "b"]
    assert Cassette(path).get("b") == {"content": "new"}
    first = path.read_bytes()
    Cassette(path).compact()
    assert path.read_bytes() == first  # compaction is deterministic


def test_secrets_are_masked_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    secret = "sk-live-abcdefghijklmnop"
    Cassette(path).put(
        "k",
        {"messages": [{"content": f"key {secret}"}]},
        {"content": f"echo {secret} short"},
        secrets=(secret, "short"),
    )
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    assert text.count("[REDACTED]") == 2
    assert "echo [REDACTED] short" in text  # secrets under 8 characters are not masked (too common)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(st.text(max_size=200), st.text(max_size=50))
def test_any_text_round_trips(tmp_path_factory: pytest.TempPathFactory, content: str, finish: str) -> None:
    path = tmp_path_factory.mktemp("rt") / "c.jsonl"
    Cassette(path).put("k", REQUEST, {"content": content, "finish_reason": finish})
    assert Cassette(path).get("k") == {"content": content, "finish_reason": finish}
    assert len(path.read_bytes().splitlines()) == 1  # newlines inside content never split a record


def test_reader_survives_compaction_by_another_instance(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    reader = Cassette(path)
    writer = Cassette(path)
    for i in range(5):
        writer.put(f"k{i}", REQUEST, {"content": "x" * 100})
        writer.put(f"k{i}", REQUEST, {"content": str(i)})
    assert reader.get("k4") == {"content": "4"}
    writer.compact()
    for i in range(20):  # grow the compacted file past the reader's old offset
        writer.put(f"new{i}", REQUEST, {"content": "n" * 50})
    assert reader.get("new19") == {"content": "n" * 50}
    assert reader.skipped_lines == 0
    assert reader.get("k0") == {"content": "0"}


def test_secret_with_json_special_characters_is_masked(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    secret = 'pa"ss\\word-1234'
    Cassette(path).put("k", {"m": f"x{secret}y"}, {"content": secret}, secrets=(secret,))
    text = path.read_text(encoding="utf-8")
    assert "pa" not in text.replace("[REDACTED]", "")
    assert json.loads(text)["reply"]["content"] == "[REDACTED]"
    assert Cassette(path).get("k") == {"content": "[REDACTED]"}


def test_meta_line_is_metadata_not_a_record(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"meta": {"synthetic": True}}) + "\n", encoding="utf-8")
    cassette = Cassette(path)
    cassette.put("b", REQUEST, {"content": "x"})
    cassette.put("a", REQUEST, {"content": "y"})
    assert cassette.meta == {"synthetic": True}
    assert cassette.skipped_lines == 0
    assert len(cassette) == 2
    cassette.compact()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"meta": {"synthetic": True}}
    assert [json.loads(line)["key"] for line in lines[1:]] == ["a", "b"]


def test_key_shapes_in_a_prompt_are_redacted_and_replay_still_matches(tmp_path: Path) -> None:
    """F15 (issue 33): an AWS-style key in a transcript stayed in the cassette's stored prompt."""
    path = tmp_path / "c.jsonl"
    aws = "AKIA" + "QWERTYUIOPASDFGH"
    request = {"model": "m", "messages": [{"role": "user", "content": f"the agent printed {aws} here"}]}
    key = request_key(request)  # what a client computes from the unredacted request
    Cassette(path).put(key, request, {"content": f"saw {aws}"})
    text = path.read_text(encoding="utf-8")
    assert aws not in text
    assert json.loads(text)["request"]["messages"][0]["content"] == "the agent printed [REDACTED] here"
    assert Cassette(path).get(request_key(request)) == {"content": "saw [REDACTED]"}
    Cassette(path).compact()
    assert aws not in path.read_text(encoding="utf-8")
    assert Cassette(path).get(key) == {"content": "saw [REDACTED]"}

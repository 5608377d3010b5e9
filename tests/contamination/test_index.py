"""Keyed hashing and the index file: golden vectors, reference implementation, format, guards."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contamination import reference
from contamination.conftest import CASES, KEY_BYTES
from judgekit.contamination import index as ix
from judgekit.contamination.index import (
    IndexOptions,
    build_index,
    canary_for,
    fast_hashes,
    key_from_bytes,
    load_key,
    prefilter,
    read_index,
    shingle_digest,
    text_digest,
    token_spans,
    token_values,
    window_values,
    write_index,
)
from judgekit.contamination.normalise import UNICODE_VERSION, canonical, fold_many
from judgekit.errors import JudgekitError

VECTORS = json.loads((Path(__file__).parent / "vectors" / "jk-c1.json").read_text(encoding="utf-8"))


def _production_entries(text: str, raw_key: bytes, n: int) -> dict[str, object]:
    """Compute a vector entry with judgekit's own (vectorised) code."""
    key = key_from_bytes(raw_key)
    buf = np.frombuffer(fold_many([text]), dtype=np.uint8)
    fh = fast_hashes(buf, key)
    spans = fh.spans
    toks = [buf.tobytes()[s:e].decode("utf-8") for s, e in zip(spans.starts, spans.ends, strict=True)]
    vals = token_values(buf, spans, key)
    count = len(toks)
    first = np.arange(max(0, count - n + 1))
    sh_pf = prefilter(window_values(fh.prefix, first, first + n), key.win) if len(first) else []
    whole = prefilter(window_values(fh.prefix, np.array([0]), np.array([count])), key.txt)
    return {
        "text": text,
        "canonical": " ".join(toks),
        "tokens": toks,
        "token_values": [f"{int(v):016x}" for v in vals],
        "text_digest": f"{text_digest(key, ' '.join(toks).encode()):016x}",
        "text_prefilter": int(whole[0]),
        "shingles": [
            {
                "offset": i,
                "digest": f"{shingle_digest(key, ' '.join(toks[i : i + n]).encode()):016x}",
                "prefilter": int(sh_pf[i]),
            }
            for i in range(len(first))
        ],
    }


@pytest.mark.parametrize("i", range(len(VECTORS["texts"])))
def test_golden_vectors_match_judgekit(i: int) -> None:
    vec = VECTORS["texts"][i]
    got = _production_entries(vec["text"], VECTORS["key"].encode(), VECTORS["shingle_size"])
    assert got == vec


@pytest.mark.parametrize("i", range(len(VECTORS["texts"])))
def test_golden_vectors_match_reference_implementation(i: int) -> None:
    vec = VECTORS["texts"][i]
    assert reference.entries(vec["text"], VECTORS["key"].encode(), VECTORS["shingle_size"]) == vec


def test_golden_key_fingerprint_and_canary() -> None:
    key = key_from_bytes(VECTORS["key"].encode())
    assert key.fingerprint == VECTORS["key_fingerprint"]
    assert canary_for(key, VECTORS["canary"]["set_name"]) == VECTORS["canary"]["canary"]


def test_golden_vectors_record_their_versions() -> None:
    assert VECTORS["hash_scheme"] == ix.HASH_SCHEME
    assert VECTORS["format_version"] == ix.FORMAT_VERSION
    assert VECTORS["unicode_version"] == UNICODE_VERSION, "new Unicode data: check the vectors still hold"


def test_golden_index_file_bytes(tmp_path: Path) -> None:
    key = key_from_bytes(VECTORS["key"].encode())
    cases = [(cid, [tuple(p) for p in pairs]) for cid, pairs in VECTORS["index"]["cases"]]
    canaries = tuple(canary_for(key, name) for name in VECTORS["index"]["canaries"])
    built = build_index(cases, key, IndexOptions(shingle_size=VECTORS["shingle_size"], canaries=canaries))
    path = tmp_path / "v.jkc"
    write_index(built, path, key)
    data = path.read_bytes()
    assert len(data) == VECTORS["index"]["bytes"]
    assert hashlib.sha256(data).hexdigest() == VECTORS["index"]["sha256"]


def test_golden_index_mac_matches_the_reference(tmp_path: Path) -> None:
    key = key_from_bytes(VECTORS["key"].encode())
    assert ix.index_mac_key(key).hex() == VECTORS["index_mac_key"]
    master = reference.derive(VECTORS["key"].encode())["master"]
    assert reference.index_mac_key(master).hex() == VECTORS["index_mac_key"]  # type: ignore[arg-type]
    path = tmp_path / "v.jkc"
    write_index(build_index(CASES, key), path, key)
    data = path.read_bytes()
    assert data[-ix.MAC_BYTES :] == reference.index_tag(master, data)  # type: ignore[arg-type]
    assert data[-ix.MAC_BYTES :] == ix.index_mac(key, data[: -ix.MAC_BYTES])


def test_index_built_with_one_key_cannot_be_written_with_another(tmp_path: Path) -> None:
    built = build_index(CASES, key_from_bytes(KEY_BYTES))
    with pytest.raises(JudgekitError, match="not the key this index was built with") as err:
        write_index(built, tmp_path / "i.jkc", key_from_bytes(KEY_BYTES + b"x"))
    assert err.value.exit_code == 2
    assert not (tmp_path / "i.jkc").exists()


def test_version_1_index_is_refused_with_a_request_to_rebuild(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key), path, key)
    data = bytearray(path.read_bytes())
    data[8:12] = (1).to_bytes(4, "little")
    path.write_bytes(bytes(data[: -ix.MAC_BYTES]))
    with pytest.raises(JudgekitError, match="format version 1, which is not authenticated") as err:
        read_index(path, key)
    assert "rebuild it with `judgekit contamination index`" in err.value.message
    assert err.value.exit_code == 2


def test_wrong_key_is_refused_naming_the_claimed_fingerprint(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    other = key_from_bytes(KEY_BYTES + b"x")
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key), path, key)
    with pytest.raises(JudgekitError, match="does not verify with this key") as err:
        read_index(path, other)
    assert f"names fingerprint {key.fingerprint}" in err.value.message
    assert other.fingerprint in err.value.message
    assert err.value.exit_code == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=50), min_size=1, max_size=5), st.integers(4, 9))
def test_vectorised_windows_equal_reference(texts: list[str], n: int) -> None:
    key = key_from_bytes(KEY_BYTES)
    ref = reference.derive(KEY_BYTES)
    buf = np.frombuffer(fold_many(texts), dtype=np.uint8)
    fh = fast_hashes(buf, key)
    vals = token_values(buf, fh.spans, key)
    all_tokens = [t for text in texts for t in reference.tokens(text)]
    assert [int(v) for v in vals] == [reference.token_value(t, ref["tok"]) for t in all_tokens]  # type: ignore[arg-type]
    count = len(all_tokens)
    if count >= n:
        first = np.arange(count - n + 1)
        got = prefilter(window_values(fh.prefix, first, first + n), key.win)
        want = [
            reference.prefilter(reference.run_value([int(v) for v in vals[i : i + n]]), ref["win"])  # type: ignore[arg-type]
            for i in range(count - n + 1)
        ]
        assert [int(x) for x in got] == want


def test_token_spans_find_texts_and_lines() -> None:
    buf = np.frombuffer(fold_many(["a b\nc", "", "d"]), dtype=np.uint8)
    sp = token_spans(buf)
    assert len(sp.starts) == 4
    assert sp.text_first.tolist() == [0, 3, 3]
    assert sp.text_of(np.arange(4)).tolist() == [0, 0, 0, 2]
    assert sp.line_first.tolist() == [2, 3, 3]


def test_round_trip_preserves_everything(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    built = build_index(CASES, key, IndexOptions(canaries=("C1",)))
    path = tmp_path / "i.jkc"
    write_index(built, path, key)
    back = read_index(path, key)
    for name in ("key_fingerprint", "shingle_size", "case_ids", "texts", "canaries", "stats", "max_cases"):
        assert getattr(back, name) == getattr(built, name)
    for name in ("shingle_digest", "shingle_prefilter", "shingle_text", "shingle_offset", "text_digest"):
        assert np.array_equal(getattr(back, name), getattr(built, name))
    assert np.all(np.diff(back.shingle_digest.astype(np.float64)) >= 0), "entries sorted by digest"


def test_index_file_holds_no_case_text(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key), path, key)
    data = path.read_bytes().lower()
    for _, pairs in CASES:
        for _, text in pairs:
            for word in canonical(text).split():
                if len(word) >= 6:
                    assert word.encode() not in data, word
    assert KEY_BYTES not in path.read_bytes()


def test_truncated_index_is_refused(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key), path, key)
    path.write_bytes(path.read_bytes()[:-9])
    with pytest.raises(JudgekitError, match="does not verify with this key") as err:
        read_index(path, key)
    assert err.value.exit_code == 2


def test_not_an_index_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jkc"
    path.write_text("hello world, not an index", encoding="utf-8")
    with pytest.raises(JudgekitError, match="magic bytes"):
        read_index(path, key_from_bytes(KEY_BYTES))


def test_future_format_version_is_refused(tmp_path: Path) -> None:
    key = key_from_bytes(KEY_BYTES)
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key), path, key)
    data = bytearray(path.read_bytes())
    data[8:12] = (4).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(JudgekitError, match="format version 4; this judgekit reads version 3"):
        read_index(path, key)


def test_version_2_index_is_refused_with_a_request_to_rebuild(tmp_path: Path) -> None:
    # A genuine version 2 file: the same layout, the version in the preamble and the header, and a MAC
    # that verifies with the key. It is refused before use, not scanned with 13-token shingles.
    key = key_from_bytes(KEY_BYTES)
    path = tmp_path / "i.jkc"
    write_index(build_index(CASES, key, IndexOptions(shingle_size=13)), path, key)
    data = bytearray(path.read_bytes()[: -ix.MAC_BYTES])
    data[8:12] = (2).to_bytes(4, "little")
    data = bytearray(bytes(data).replace(b'"format_version":3', b'"format_version":2', 1))
    path.write_bytes(bytes(data) + ix.index_mac(key, bytes(data)))
    with pytest.raises(JudgekitError, match="format version 2, written by an earlier judgekit") as err:
        read_index(path, key)
    assert err.value.message.endswith("rebuild it with `judgekit contamination index`")
    assert err.value.exit_code == 2


def test_short_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_text("too short\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match="at least 16") as err:
        load_key(path)
    assert err.value.exit_code == 2


def test_key_file_whitespace_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_bytes(b"  " + KEY_BYTES + b"\r\n")
    assert load_key(path).fingerprint == key_from_bytes(KEY_BYTES).fingerprint


def test_different_keys_give_different_hashes() -> None:
    a = key_from_bytes(KEY_BYTES)
    b = key_from_bytes(KEY_BYTES + b"x")
    assert a.fingerprint != b.fingerprint
    assert shingle_digest(a, b"same text") != shingle_digest(b, b"same text")


def test_frequency_guard_drops_shingles_shared_by_many_cases() -> None:
    template = "You are a helpful airline assistant and you must always follow the baggage and refund policy."
    cases = [
        (
            f"c{i}",
            [("system", template), ("input", f"Unique question number {i} about flight {i * 7} to city {i}")],
        )
        for i in range(5)
    ]
    key = key_from_bytes(KEY_BYTES)
    built = build_index(cases, key, IndexOptions(max_cases=2, shingle_size=5))
    template_refs = {i for i, r in enumerate(built.texts) if r.field == "system"}
    assert not set(built.shingle_text.tolist()) & template_refs
    assert not set(built.text_text.tolist()) & template_refs
    assert built.stats["shingle_entries_dropped_shared"] > 0
    kept = build_index(cases, key, IndexOptions(max_cases=5, shingle_size=5))
    assert set(kept.shingle_text.tolist()) & {i for i, r in enumerate(kept.texts) if r.field == "system"}


def test_boilerplate_is_dropped() -> None:
    key = key_from_bytes(KEY_BYTES)
    boiler = CASES[1][1][0][1]
    built = build_index(CASES, key, IndexOptions(boilerplate=(boiler,)))
    denver = next(i for i, r in enumerate(built.texts) if r.field == "input")
    assert denver not in built.shingle_text.tolist()
    assert denver not in built.text_text.tolist()
    assert built.stats["shingle_entries_dropped_boilerplate"] > 0


def test_short_texts_get_no_whole_text_entry() -> None:
    key = key_from_bytes(KEY_BYTES)
    built = build_index([("c", [("a", "thank you"), ("b", "this one has enough tokens")])], key)
    fields = {built.texts[int(t)].field for t in built.text_text}
    assert fields == {"b"}
    assert built.stats["texts_below_min_tokens"] == 1


def test_duplicate_case_ids_are_refused() -> None:
    key = key_from_bytes(KEY_BYTES)
    with pytest.raises(JudgekitError, match="appears twice"):
        build_index([("a", [("x", "one two three four")]), ("a", [("x", "five six")])], key)


def test_shingle_size_out_of_range_is_refused() -> None:
    with pytest.raises(JudgekitError, match="shingle size 3"):
        build_index(CASES, key_from_bytes(KEY_BYTES), IndexOptions(shingle_size=3))


def test_canary_depends_on_key_and_set_name() -> None:
    a = key_from_bytes(KEY_BYTES)
    b = key_from_bytes(KEY_BYTES + b"!")
    assert canary_for(a, "set") == canary_for(a, "set")
    assert canary_for(a, "set") != canary_for(a, "other")
    assert canary_for(a, "set") != canary_for(b, "set")
    assert canary_for(a, "set").startswith("JUDGEKIT-CANARY-")


def test_key_and_index_files_are_named_as_text(tmp_path: Path) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_bytes(KEY_BYTES)
    key = load_key(str(key_file))
    assert key.fingerprint == key_from_bytes(KEY_BYTES).fingerprint
    built = build_index(CASES, key, IndexOptions())
    write_index(built, str(tmp_path / "i.jkc"), key)
    assert read_index(str(tmp_path / "i.jkc"), key).case_ids == built.case_ids

"""Hostile contamination indexes: every tampering of the file, and every wrong key, is refused.

An index file is authenticated with an HMAC-SHA256 keyed from the contamination key (format version 2,
``docs/contamination.md``). This suite generates tamperings of every part of the file: each header field
and parameter (``shingle_size``, the thresholds ``min_text_tokens`` and ``max_cases``), the canaries,
the case ids and text references, every array (digests edited with and without recomputing the old
unkeyed checksum, entries reordered or dropped), the layout (magic, version, header length, padding),
truncation and appended bytes, the tag itself, splices of two genuine indexes, the old unauthenticated
format version 1 and wrong keys. An attacker who edits the content also tries to repair the tag: keeping
the old one, replacing it with an unkeyed SHA-256, or recomputing it with a key of their own.

Every variant must be refused with exit code 2, a message that says what is wrong and to rebuild with
``judgekit contamination index``, inside a time and memory bound; the untampered index must still find
the planted leaks and the canary. Several variants are also shown to matter: accepted without the MAC,
they would hide or misattribute a real leak.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contamination.conftest import CASES, CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, OTHER_KEY_BYTES, chat
from hostile.sweep import Sweep, SweepStore
from judgekit.cli import main
from judgekit.contamination import index as ix
from judgekit.contamination.index import (
    ContaminationIndex,
    IndexOptions,
    Key,
    build_index,
    key_from_bytes,
    read_index,
    write_index,
)
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.scan import ScanOptions
from judgekit.errors import JudgekitError

KEY = key_from_bytes(KEY_BYTES)
OTHER = key_from_bytes(OTHER_KEY_BYTES)
CANARY = "JUDGEKIT-CANARY-TESTSET"

VERIFY = "does not verify with this key"
MAGIC = "magic bytes"
OLD = "format version 1, which is not authenticated"
UNKNOWN = "this judgekit reads version 3"
REBUILD = "judgekit contamination index"

Outcome = tuple[tuple[str, ...], tuple[str, ...]]
"""What a scan of the leak export found: the leaked case ids and the canaries, each sorted."""

BASELINE: Outcome = (("gs-031", "gs-044"), (CANARY,))


# ------------------------------------------------------------------------------------- the index


def _index_bytes(key: Key, cases: Any = CASES, canaries: tuple[str, ...] = (CANARY,), n: int = 13) -> bytes:
    built = build_index(cases, key, IndexOptions(shingle_size=n, canaries=canaries))
    return _to_bytes(built, key)


def _to_bytes(built: ContaminationIndex, key: Key) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "i.jkc"
        write_index(built, path, key)
        return path.read_bytes()


def _padded_good() -> bytes:
    """The genuine index, with a second canary whose length leaves padding after the header."""
    for k in range(1, 9):
        data = _index_bytes(KEY, canaries=(CANARY, "JUDGEKIT-CANARY-" + "P" * k))
        if (16 + int.from_bytes(data[12:16], "little")) % 8:
            return data
    raise AssertionError("no canary length leaves padding")  # pragma: no cover - one of 8 always does


GOOD = _padded_good()
"""The genuine index: the conftest cases, two canaries (one planted in the export), the test key."""
OTHER_CASES = [("gs-900", [("input", "A completely different golden case about returning a faulty kettle.")])]
GOOD_B = _index_bytes(KEY, OTHER_CASES, canaries=("JUDGEKIT-CANARY-OTHER",))
"""A second genuine index with the same key (for splices)."""
GOOD_OTHER_KEY = _index_bytes(OTHER)
"""The same cases indexed with another key."""


@dataclass
class Parts:
    """An index file cut into its parts (an independent reading of the layout in the docs).

    Attributes:
        version: The format version of the preamble.
        header: The parsed header.
        padding: The bytes between the header and the array region.
        region: The array region.
        tag: The last 32 bytes.
    """

    version: int
    header: dict[str, Any]
    padding: bytes
    region: bytes
    tag: bytes

    def array(self, name: str) -> tuple[int, int, np.dtype[Any]]:
        """Offset in the region, element count and dtype of one array."""
        spec = next(a for a in self.header["arrays"] if a["name"] == name)
        return int(spec["offset"]), int(spec["count"]), np.dtype(spec["dtype"])

    def get(self, name: str) -> np.ndarray[Any, Any]:
        off, count, dt = self.array(name)
        return np.frombuffer(self.region, dtype=dt, count=count, offset=off).copy()

    def put(self, name: str, values: np.ndarray[Any, Any]) -> None:
        """Replace one array (any length): the table and ``region_bytes`` are kept consistent."""
        arrays = {a["name"]: self.get(a["name"]) for a in self.header["arrays"]}
        arrays[name] = values
        blobs, pos = [], 0
        for spec in self.header["arrays"]:
            blob = np.ascontiguousarray(arrays[spec["name"]], dtype=spec["dtype"]).tobytes()
            spec["offset"], spec["count"] = pos, len(blob) // np.dtype(spec["dtype"]).itemsize
            blobs.append(blob)
            pos += len(blob)
        self.region = b"".join(blobs)
        self.header["region_bytes"] = pos


def split(data: bytes) -> Parts:
    hlen = int.from_bytes(data[12:16], "little")
    base = 16 + hlen + (-(16 + hlen) % 8)
    return Parts(
        version=int.from_bytes(data[8:12], "little"),
        header=json.loads(data[16 : 16 + hlen]),
        padding=data[16 + hlen : base],
        region=data[base:-32],
        tag=data[-32:],
    )


def canonical(header: dict[str, Any]) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def content(p: Parts, header_bytes: bytes | None = None) -> bytes:
    """The file without its tag, with the header re-serialised (and the length and padding recomputed)."""
    hb = canonical(p.header) if header_bytes is None else header_bytes
    pre = ix.MAGIC + p.version.to_bytes(4, "little") + len(hb).to_bytes(4, "little") + hb
    return pre + b"\x00" * (-len(pre) % 8) + p.region


TagRepair = Callable[[bytes, bytes], bytes]
"""How an attacker repairs the tag: (content, the genuine file's tag) -> the new tag."""

REPAIRS: dict[str, TagRepair] = {
    "old tag kept": lambda body, tag: tag,
    "unkeyed SHA-256 as tag": lambda body, tag: hashlib.sha256(body).digest(),
    "tag recomputed with the attacker's own key": lambda body, tag: ix.index_mac(OTHER, body),
    "tag keyed with the public fingerprint": lambda body, tag: hmac.new(
        KEY.fingerprint.encode(), body, hashlib.sha256
    ).digest(),
}


# ------------------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Tampering:
    """One hostile index file.

    Attributes:
        name: What was done to the file.
        data: The file's bytes.
        refusal: A phrase the refusal must contain.
        read_key: The key the scan uses (the right one unless the variant is a wrong key).
        matters: Accepted without the MAC, the scan of the leak export would differ from the baseline
            (a leak hidden or misattributed, a canary lost): checked for the header and array edits.
    """

    name: str
    data: bytes
    refusal: str = VERIFY
    read_key: Key = field(default=KEY)
    matters: bool = False


HeaderEdit = Callable[[dict[str, Any]], None]


def _header_edits() -> Iterator[tuple[str, HeaderEdit, bool]]:
    """Edits of every header field: (name, edit in place, whether it changes the scan's outcome)."""

    def setter(path: tuple[Any, ...], value: Any) -> HeaderEdit:
        def edit(h: dict[str, Any]) -> None:
            obj = h
            for step in path[:-1]:
                obj = obj[step]
            obj[path[-1]] = value

        return edit

    def first_case(h: dict[str, Any]) -> int:
        return int(h["cases"].index("gs-044"))

    def denver_text(h: dict[str, Any]) -> int:
        return next(i for i, t in enumerate(h["texts"]) if t[0] == first_case(h))

    yield "format name changed", setter(("format",), "judgekit-contamination-index-x"), False
    yield "format_version field set to 1", setter(("format_version",), 1), False
    yield "hash_scheme changed", setter(("hash_scheme",), "jk-c0"), False
    yield "mac field set to none", setter(("mac",), "none"), False
    yield "mac field removed", lambda h: h.pop("mac"), False
    yield "key_fingerprint replaced by another key's", setter(("key_fingerprint",), OTHER.fingerprint), False
    yield "normalisation version changed", setter(("normalisation", "version"), 2), False
    yield "unicode_version changed", setter(("normalisation", "unicode_version"), "1.1.0"), False
    yield "shingle_size raised to 64", setter(("shingle_size",), 64), True
    yield "shingle_size lowered to 4", setter(("shingle_size",), 4), True
    yield "shingle_size out of range (1000)", setter(("shingle_size",), 1000), False
    yield "min_text_tokens threshold raised to 10000", setter(("min_text_tokens",), 10000), True
    yield "max_cases threshold lowered to 0", setter(("max_cases",), 0), False
    yield "max_cases threshold changed", setter(("max_cases",), 10**6), False
    yield "stats edited", setter(("stats", "cases"), 0), False
    yield "canaries emptied", setter(("canaries",), []), True
    yield "canary edited", setter(("canaries",), [CANARY[:-1] + "X"]), True
    yield "canary added", lambda h: h["canaries"].append("the"), False
    yield "case id renamed", lambda h: h["cases"].__setitem__(first_case(h), "gs-999"), True
    yield "case ids swapped", lambda h: h["cases"].reverse(), True
    yield "case id list truncated", lambda h: h["cases"].pop(), False
    yield "text field path renamed", lambda h: h["texts"][0].__setitem__(1, "nothing"), False
    # refused like every edit, but no longer an attack: coverage is capped at two shingles, so inflating a
    # text's recorded token count cannot dilute a match below the threshold any more
    yield "text token count edited", lambda h: h["texts"][denver_text(h)].__setitem__(2, 10**6), False
    yield "text re-pointed to another case", lambda h: [t.__setitem__(0, 0) for t in h["texts"]], True
    yield "array count edited", lambda h: h["arrays"][0].__setitem__("count", 1), False
    yield "array offset edited", lambda h: h["arrays"][1].__setitem__("offset", 0), False
    yield "array table reordered", lambda h: h["arrays"].reverse(), False
    yield "region_bytes edited", setter(("region_bytes",), 0), False
    yield "unknown header field added", setter(("note",), "reviewed"), False
    yield "old checksum field added", setter(("arrays_blake2b",), "0" * 64), False


def header_tamperings() -> Iterator[Tampering]:
    """Every header edit, re-serialised canonically, with every attempt to repair the tag."""
    for name, edit, matters in _header_edits():
        for repair_name, repair in REPAIRS.items():
            p = split(GOOD)
            edit(p.header)
            body = content(p)
            yield Tampering(f"header: {name}; {repair_name}", body + repair(body, p.tag), matters=matters)
    p = split(GOOD)
    spaced = json.dumps(p.header, sort_keys=True).encode()
    body = content(p, spaced)
    yield Tampering("header: same content re-serialised with spaces; old tag kept", body + p.tag)


ArrayEdit = Callable[[Parts], None]


def _array_edits() -> Iterator[tuple[str, ArrayEdit, bool]]:
    def flip(name: str, i: int = 0) -> ArrayEdit:
        def edit(p: Parts) -> None:
            a = p.get(name)
            a[i] ^= 1
            p.put(name, a)

        return edit

    def zero(*names: str) -> ArrayEdit:
        def edit(p: Parts) -> None:
            for name in names:
                p.put(name, np.zeros_like(p.get(name)))

        return edit

    def permute(order: Callable[[int], np.ndarray[Any, Any]], names: tuple[str, ...]) -> ArrayEdit:
        def edit(p: Parts) -> None:
            perm = order(len(p.get(names[0])))
            for name in names:
                p.put(name, p.get(name)[perm])

        return edit

    shingles = ("shingle_digest", "shingle_prefilter", "shingle_text", "shingle_offset")
    texts = ("text_digest", "text_prefilter", "text_text")

    def swap01(n: int) -> np.ndarray[Any, Any]:
        perm = np.arange(n)
        perm[[0, 1]] = perm[[1, 0]]
        return perm

    def drop(names: tuple[str, ...], keep: Callable[[int], slice]) -> ArrayEdit:
        def edit(p: Parts) -> None:
            for name in names:
                a = p.get(name)
                p.put(name, a[keep(len(a))])

        return edit

    def repoint(p: Parts) -> None:
        a = p.get("shingle_text")
        p.put("shingle_text", np.zeros_like(a))

    yield "one shingle digest bit flipped", flip("shingle_digest"), False
    yield "every digest zeroed", zero("shingle_digest", "text_digest"), True
    yield "one shingle prefilter edited", flip("shingle_prefilter"), False
    yield "every shingle prefilter zeroed", zero("shingle_prefilter", "text_prefilter"), True
    yield "shingle entries re-pointed to text 0", repoint, True
    yield "one shingle offset edited", flip("shingle_offset"), False
    yield "one whole-text digest edited", flip("text_digest"), False
    yield "whole-text entry re-pointed", flip("text_text"), False
    yield "two shingle entries swapped", permute(swap01, shingles), False
    yield "shingle entries reversed", permute(lambda n: np.arange(n)[::-1].copy(), shingles), False
    yield "whole-text entries reversed", permute(lambda n: np.arange(n)[::-1].copy(), texts), False
    yield "whole-text entries dropped", drop(texts, lambda n: slice(0, 0)), True
    yield "half the shingle entries dropped", drop(shingles, lambda n: slice(0, n // 2)), False
    yield "every shingle entry dropped", drop(shingles, lambda n: slice(0, 0)), True
    yield "every entry dropped", drop(shingles + texts, lambda n: slice(0, 0)), True


def array_tamperings() -> Iterator[Tampering]:
    """Every array edit, with every tag repair, and with the old unkeyed checksum recomputed."""
    for name, edit, matters in _array_edits():
        for repair_name, repair in REPAIRS.items():
            p = split(GOOD)
            edit(p)
            body = content(p)
            yield Tampering(f"arrays: {name}; {repair_name}", body + repair(body, p.tag), matters=matters)
        p = split(GOOD)
        edit(p)
        p.header["arrays_blake2b"] = hashlib.blake2b(p.region, digest_size=32).hexdigest()
        body = content(p)
        yield Tampering(f"arrays: {name}; old BLAKE2b checksum recomputed; old tag kept", body + p.tag)


def old_format_tamperings() -> Iterator[Tampering]:
    """Version 1 files (no tag, unkeyed checksum) written faithfully, with and without leak-hiding edits."""

    def as_v1(p: Parts) -> bytes:
        header = {k: v for k, v in p.header.items() if k not in {"mac", "region_bytes"}}
        header["format_version"] = 1
        header["arrays_blake2b"] = hashlib.blake2b(p.region, digest_size=32).hexdigest()
        q = Parts(1, header, b"", p.region, b"")
        return content(q)

    yield Tampering("old format: genuine version 1 file of the same index", as_v1(split(GOOD)), OLD)
    edits: list[tuple[str, ArrayEdit]] = [
        (
            "every digest zeroed",
            lambda p: [p.put(n, np.zeros_like(p.get(n))) for n in ("shingle_digest", "text_digest")],
        ),
        ("shingle_size 64", lambda p: p.header.__setitem__("shingle_size", 64)),
        ("canaries emptied", lambda p: p.header.__setitem__("canaries", [])),
        ("case ids renamed", lambda p: p.header.__setitem__("cases", ["x", "y"])),
    ]
    for name, edit in edits:
        p = split(GOOD)
        edit(p)
        yield Tampering(f"old format: version 1 file, {name}, checksum recomputed", as_v1(p), OLD)
    data = bytearray(GOOD)
    data[8:12] = (1).to_bytes(4, "little")
    yield Tampering("old format: version field of a version 2 file set to 1", bytes(data), OLD)


def layout_tamperings() -> Iterator[Tampering]:
    """The preamble, the padding, truncation, appended bytes and the tag itself."""
    hlen = int.from_bytes(GOOD[12:16], "little")
    pad_at = 16 + hlen

    def patched(offset: int, new: bytes) -> bytes:
        return GOOD[:offset] + new + GOOD[offset + len(new) :]

    yield Tampering("layout: magic changed", patched(0, b"JKCONTAN"), MAGIC)
    yield Tampering("layout: empty file", b"", MAGIC)
    yield Tampering("layout: only the magic", ix.MAGIC, MAGIC)
    for v in (0, 4, 2**32 - 1):
        yield Tampering(f"layout: format version {v}", patched(8, v.to_bytes(4, "little")), UNKNOWN)
    for label, new_len in (("+1", hlen + 1), ("-1", hlen - 1), ("0", 0), ("2**32-1", 2**32 - 1)):
        yield Tampering(f"layout: header length {label}", patched(12, new_len.to_bytes(4, "little")))
    if pad_at % 8:
        yield Tampering("layout: a padding byte set", patched(pad_at, b"\x01"))
        yield Tampering("layout: padding removed", GOOD[:pad_at] + GOOD[pad_at + (-pad_at % 8) :])
    yield Tampering("layout: 8 more bytes of padding", GOOD[:pad_at] + b"\x00" * 8 + GOOD[pad_at:])
    cuts = {
        "after the preamble": 16,
        "in the header": 16 + hlen // 2,
        "after the header": 16 + hlen,
        "in the array region": (16 + hlen + len(GOOD) - 32) // 2,
        "one byte into the tag": len(GOOD) - 31,
        "tag removed": len(GOOD) - 32,
        "last byte removed": len(GOOD) - 1,
    }
    for label, at in cuts.items():
        yield Tampering(f"truncated: {label}", GOOD[:at])
    appends = {
        "one zero byte": b"\x00",
        "eight zero bytes": b"\x00" * 8,
        "junk": b"appended junk " * 8,
        "a second copy of the tag": GOOD[-32:],
        "a whole second index": GOOD_B,
    }
    for label, extra in appends.items():
        yield Tampering(f"appended: {label}", GOOD + extra)
    yield Tampering("tag: zeroed", GOOD[:-32] + b"\x00" * 32)
    yield Tampering("tag: first bit flipped", GOOD[:-32] + bytes([GOOD[-32] ^ 1]) + GOOD[-31:])
    yield Tampering("tag: last bit flipped", GOOD[:-1] + bytes([GOOD[-1] ^ 1]))
    yield Tampering("tag: another genuine index's tag", GOOD[:-32] + GOOD_B[-32:])
    yield Tampering("tag: the same index's tag under another key", GOOD[:-32] + GOOD_OTHER_KEY[-32:])
    a, b = split(GOOD), split(GOOD_B)
    yield Tampering(
        "splice: header of one index, arrays of another, first tag",
        content(Parts(a.version, a.header, b"", b.region, b"")) + a.tag,
    )
    yield Tampering(
        "splice: header of one index, arrays of another, second tag",
        content(Parts(a.version, a.header, b"", b.region, b"")) + b.tag,
    )
    yield Tampering(
        "splice: arrays of one index, header of another",
        content(Parts(a.version, b.header, b"", a.region, b"")) + b.tag,
    )


def key_tamperings() -> Iterator[Tampering]:
    """Wrong keys, and an attacker's own index passed off as the genuine one."""
    yield Tampering("wrong key: genuine index read with another key", GOOD, read_key=OTHER)
    yield Tampering("wrong key: another key's index read with this key", GOOD_OTHER_KEY)
    p = split(GOOD_OTHER_KEY)
    p.header["key_fingerprint"] = KEY.fingerprint
    body = content(p)
    yield Tampering(
        "wrong key: attacker's index claiming this key's fingerprint, MAC by attacker",
        body + ix.index_mac(OTHER, body),
    )
    hollow = build_index(
        [("gs-031", [("input", "nothing to see")]), ("gs-044", [("input", "nothing here")])], OTHER
    )
    yield Tampering("wrong key: attacker's hollow index with the same case ids", _to_bytes(hollow, OTHER))
    near = key_from_bytes(KEY_BYTES[:-1] + bytes([KEY_BYTES[-1] ^ 1]))
    yield Tampering("wrong key: a key one bit away", GOOD, read_key=near)


def all_tamperings() -> list[Tampering]:
    return [
        *header_tamperings(),
        *array_tamperings(),
        *old_format_tamperings(),
        *layout_tamperings(),
        *key_tamperings(),
    ]


TAMPERINGS = all_tamperings()
IDS = [t.name for t in TAMPERINGS]


# ------------------------------------------------------------------------------------- helpers


def _verdict(path: str, key_bytes: bytes) -> str:
    """``accepted`` or ``refused EXIT: MESSAGE`` (runs in the bounded child)."""
    try:
        read_index(path, key_from_bytes(key_bytes))
    except JudgekitError as exc:
        return f"refused {exc.exit_code}: {exc.message}"
    return "accepted"


KEY_BYTES_OF = {KEY.fingerprint: KEY_BYTES, OTHER.fingerprint: OTHER_KEY_BYTES}


def _key_bytes(t: Tampering) -> bytes:
    if t.read_key.fingerprint in KEY_BYTES_OF:
        return KEY_BYTES_OF[t.read_key.fingerprint]
    return KEY_BYTES[:-1] + bytes([KEY_BYTES[-1] ^ 1])


def _export(tmp: Path) -> Path:
    """A real leak: one case text embedded in a message, another verbatim, and the canary."""
    path = tmp / "export.jsonl"
    records = [
        chat(CLEAN_TEXTS[0], f"Before we start: {DENVER} Thanks in advance.", "Sure."),
        chat(CLEAN_TEXTS[1], OPENING, CLEAN_TEXTS[2]),
        chat(f"notes # {CANARY}", CLEAN_TEXTS[3]),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _outcome(index: ContaminationIndex, export: Path) -> Outcome:
    result = scan_files([export], index, KEY, ScanOptions())
    return tuple(sorted(result.leaks)), tuple(sorted(result.canaries))


def _findings(index: ContaminationIndex, export: Path) -> list[tuple[Any, ...]]:
    """Everything a scan reports per leaked case (records, kinds, case fields, locations) and canary."""
    result = scan_files([export], index, KEY, ScanOptions())
    found: list[tuple[Any, ...]] = []
    for name, group in (("case", result.leaks), ("canary", result.canaries)):
        for cid, cl in sorted(group.items()):
            where = sorted((loc.line, loc.field, loc.case_field, loc.kind) for loc in cl.locations)
            found.append(
                (name, cid, cl.records, sorted(cl.kinds.items()), sorted(cl.case_fields.items()), where)
            )
    return found


def _accept_unverified(data: bytes) -> ContaminationIndex:
    """What a reader without the MAC would have loaded (the verified decoder, skipping verification)."""
    hlen = int.from_bytes(data[12:16], "little")
    view = memoryview(data)
    return ix._decode(Path("unverified.jkc"), view[16 : 16 + hlen], view[:-32], hlen)


def _check(t: Tampering, tmp: Path) -> list[str]:
    """Why the tampering was not handled correctly (run in the sweep's bounded child); ``[]`` when refused."""
    path = tmp / "tampered.jkc"
    path.write_bytes(t.data)
    verdict = _verdict(str(path), _key_bytes(t))
    if not verdict.startswith("refused 2: "):
        return [f"not refused with exit 2: {verdict[:300]}"]
    if t.refusal not in verdict or REBUILD not in verdict or str(path) not in verdict:
        return [f"refusal lacks {t.refusal!r}, the file name or the advice to rebuild: {verdict[:400]}"]
    return []


SWEEP = Sweep(name=__name__, variants=TAMPERINGS, key=lambda t: t.name, check=_check, seconds=20, mb=1536)
"""Each tampering once in the session, in a bounded child process (batches of 16)."""


# ------------------------------------------------------------------------------------- tests


def test_the_genuine_index_finds_the_real_leak(tmp_path: Path) -> None:
    path = tmp_path / "golden.jkc"
    path.write_bytes(GOOD)
    assert _outcome(read_index(path, KEY), _export(tmp_path)) == BASELINE
    assert _verdict(str(path), KEY_BYTES) == "accepted"
    assert _verdict(str(path), b"  " + KEY_BYTES + b"\n") == "accepted", "the same key, whitespace stripped"


def test_the_genuine_index_finds_the_real_leak_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "golden.jkc").write_bytes(GOOD)
    (tmp_path / "key").write_bytes(KEY_BYTES)
    argv = ["contamination", "scan", str(_export(tmp_path)), "--index", str(tmp_path / "golden.jkc")]
    assert main([*argv, "--key-file", str(tmp_path / "key"), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "leaked"
    assert sorted(leak["case_id"] for leak in report["leaks"]) == list(BASELINE[0])


def test_the_suite_holds_every_kind_of_tampering_named_in_the_issue() -> None:
    names = " | ".join(IDS)
    for needed in (
        "format name",
        "format_version",
        "hash_scheme",
        "key_fingerprint",
        "normalisation",
        "unicode_version",
        "shingle_size",
        "min_text_tokens threshold",
        "max_cases threshold",
        "stats",
        "canaries emptied",
        "canary edited",
        "case id renamed",
        "case ids swapped",
        "digest bit flipped; old tag kept",
        "old BLAKE2b checksum recomputed",
        "truncated",
        "appended",
        "entries swapped",
        "reversed",
        "wrong key",
        "old format",
    ):
        assert needed in names, needed
    assert len(IDS) == len(set(IDS)), "every variant has its own name"
    assert len(TAMPERINGS) >= 30


@SWEEP.parametrize
def test_tampering_is_refused(variant: Tampering, sweep_store: SweepStore) -> None:
    assert variant.data != GOOD or variant.read_key is not KEY
    assert sweep_store.problems(SWEEP, variant) == []


MATTERS = [t for t in TAMPERINGS if t.matters and t.name.endswith("old tag kept")]


@pytest.mark.parametrize("t", MATTERS, ids=[t.name for t in MATTERS])
def test_without_the_mac_the_tampering_would_hide_or_misattribute_the_leak(
    t: Tampering, tmp_path: Path
) -> None:
    """The variants marked ``matters`` are real attacks: an unauthenticated reader would have used them."""
    baseline = _findings(_accept_unverified(GOOD), _export(tmp_path))
    assert _findings(_accept_unverified(t.data), _export(tmp_path)) != baseline


def test_the_issue_s_attacks_would_read_clean_without_the_mac(tmp_path: Path) -> None:
    """Digests zeroed with the old checksum recomputed: a real leak reads CLEAN unless the MAC refuses it."""
    (t,) = [
        x
        for x in TAMPERINGS
        if x.name == "arrays: every digest zeroed; old BLAKE2b checksum recomputed; old tag kept"
    ]
    canaries_gone = _accept_unverified(
        next(x for x in TAMPERINGS if x.name == "header: canaries emptied; old tag kept").data
    )
    assert _outcome(_accept_unverified(t.data), _export(tmp_path))[0] == ()
    assert _outcome(canaries_gone, _export(tmp_path))[1] == ()
    path = tmp_path / "t.jkc"
    path.write_bytes(t.data)
    with pytest.raises(JudgekitError, match=VERIFY):
        read_index(path, KEY)


CLI_VARIANTS = [
    "header: shingle_size raised to 64; old tag kept",
    "header: canaries emptied; tag recomputed with the attacker's own key",
    "header: case id renamed; unkeyed SHA-256 as tag",
    "arrays: every digest zeroed; old BLAKE2b checksum recomputed; old tag kept",
    "truncated: in the array region",
    "appended: junk",
    "old format: version 1 file, every digest zeroed, checksum recomputed",
    "wrong key: genuine index read with another key",
    "layout: magic changed",
]


@pytest.mark.parametrize("name", CLI_VARIANTS)
@pytest.mark.parametrize("fmt", ["md", "json"])
def test_scan_refuses_the_tampered_index_with_exit_2(
    name: str, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (t,) = [x for x in TAMPERINGS if x.name == name]
    index = tmp_path / "golden.jkc"
    index.write_bytes(t.data)
    key_file = tmp_path / "key"
    key_file.write_bytes(_key_bytes(t))
    argv = [
        "contamination",
        "scan",
        str(_export(tmp_path)),
        "--index",
        str(index),
        "--key-file",
        str(key_file),
    ]
    assert main([*argv, "--format", fmt]) == 2
    captured = capsys.readouterr()
    assert t.refusal in captured.err
    assert REBUILD in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert "CLEAN" not in captured.out


def test_arrow_scanner_refuses_a_tampered_index(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from judgekit.contamination.arrow import ArrowScanner

    (t,) = [x for x in TAMPERINGS if x.name == "header: canaries emptied; old tag kept"]
    index = tmp_path / "golden.jkc"
    index.write_bytes(t.data)
    with pytest.raises(JudgekitError, match=VERIFY) as err:
        ArrowScanner(str(index), key=KEY_BYTES)
    assert err.value.exit_code == 2
    index.write_bytes(GOOD)
    assert CANARY in ArrowScanner(str(index), key=KEY_BYTES).matcher.index.canaries


@SWEEP.counted
def test_count_of_tamperings_tried_and_detected(
    sweep_store: SweepStore, capsys: pytest.CaptureFixture[str]
) -> None:
    """The counts for the issue: every tampering tried, every one refused correctly."""
    tally = sweep_store.tally(SWEEP)
    with capsys.disabled():
        print(f"\nindex tamperings tried: {tally.tried}, detected (refused with exit 2): {tally.handled}")
    assert not tally.failures, tally.failures
    assert tally.tried == tally.handled == len(TAMPERINGS) >= 30

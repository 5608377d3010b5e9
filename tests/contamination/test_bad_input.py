"""Bad input is reported with its location, the scan goes on, and nothing crashes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import zstandard

from contamination.conftest import CLEAN_TEXTS, DENVER, OPENING, chat
from judgekit.contamination.index import ContaminationIndex, Key
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.report import build_report
from judgekit.contamination.scan import ScanOptions, ScanResult


def _lines(records: list[object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")


def _scan(paths: list[Path], index: ContaminationIndex, key: Key, **opts: object) -> ScanResult:
    return scan_files(paths, index, key, ScanOptions(**opts))  # type: ignore[arg-type]


def test_corrupt_gzip_member_is_reported_and_the_next_file_scanned(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    good = gzip.compress(_lines([chat(CLEAN_TEXTS[0]), chat(OPENING)]))
    bad = tmp_path / "a.jsonl.gz"
    bad.write_bytes(good + b"\x1f\x8bthis is not a gzip member at all")
    other = tmp_path / "b.jsonl"
    other.write_bytes(_lines([chat(DENVER)]))
    result = _scan([bad, other], index, key)
    assert result.leaks["gs-031"].locations[0].line == 2
    assert result.leaks["gs-044"].locations[0].file == str(other)
    (problem,) = result.problems
    assert (problem.file, problem.line, problem.kind) == (str(bad), 3, "decompression")
    assert "gzip stream is corrupt or truncated after line 2" in problem.message
    assert not result.files[str(bad)].complete
    assert result.files[str(other)].complete


def test_gzip_with_flipped_bytes_never_crashes(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    data = bytearray(gzip.compress(_lines([chat(t) for t in CLEAN_TEXTS * 50])))
    for i in range(len(data) // 2, len(data) // 2 + 40):
        data[i] ^= 0x5A
    path = tmp_path / "flip.jsonl.gz"
    path.write_bytes(bytes(data))
    result = _scan([path], index, key)
    assert result.problems[0].kind == "decompression"
    report = build_report(result, index, threshold=0.5)
    assert report.status == "incomplete"
    assert report.exit_code == 2


def test_truncated_zstd_is_reported_after_the_good_frames(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    cctx = zstandard.ZstdCompressor()
    first = cctx.compress(_lines([chat(OPENING), chat(CLEAN_TEXTS[1])]))
    second = cctx.compress(_lines([chat(t) for t in CLEAN_TEXTS * 200]))
    path = tmp_path / "t.jsonl.zst"
    path.write_bytes(first + second[: len(second) // 2])
    result = _scan([path], index, key)
    assert result.leaks["gs-031"].locations[0].line == 1
    (problem,) = result.problems
    assert problem.kind == "decompression"
    assert "truncated" in problem.message
    assert not result.files[str(path)].complete


def test_multi_frame_zstd_is_read_whole(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    cctx = zstandard.ZstdCompressor()
    path = tmp_path / "m.jsonl.zst"
    path.write_bytes(cctx.compress(_lines([chat(CLEAN_TEXTS[0])])) + cctx.compress(_lines([chat(DENVER)])))
    result = _scan([path], index, key)
    assert result.problems == []
    assert result.leaks["gs-044"].locations[0].line == 2


def test_invalid_json_lines_are_reported_and_scanned_as_text(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(
        _lines([chat(CLEAN_TEXTS[0])])
        + b'{"messages": [{"content": "'
        + DENVER.encode()
        + b'"}\n'  # missing closing brackets
        + b"\n"
        + _lines([chat(OPENING)])
    )
    result = _scan([path], index, key)
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (2, "invalid_json")
    assert "column" in problem.message
    assert result.leaks["gs-044"].locations[0].field == "<raw line>"
    assert result.leaks["gs-031"].locations[0].line == 4
    assert result.files[str(path)].complete


def test_bytes_that_are_not_utf8_are_reported_and_replaced(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    path = tmp_path / "u.jsonl"
    bad_line = (
        json.dumps(chat(OPENING + " \udcff")).replace("\\udcff", "\udcff").encode("utf-8", "surrogateescape")
    )
    path.write_bytes(_lines([chat(CLEAN_TEXTS[0])]) + bad_line + b"\n" + _lines([chat(DENVER)]))
    result = _scan([path], index, key)
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (2, "not_utf8")
    assert "U+FFFD" in problem.message
    assert result.leaks["gs-031"].locations[0].line == 2
    assert result.leaks["gs-044"].locations[0].line == 3


def test_a_100_mb_line_is_reported_and_skipped(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as f:
        f.write(_lines([chat(OPENING)]))
        f.write(b'{"text": "')
        chunk = b"abcdefghij" * (1 << 20)
        for _ in range(10):
            f.write(chunk)  # 100 MiB in ten writes, never held whole
        f.write(b'"}\n')
        f.write(_lines([chat(DENVER)]))
    result = _scan([path], index, key)
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (2, "line_too_long")
    assert "104857612 bytes" in problem.message
    assert result.leaks["gs-031"].locations[0].line == 1
    assert result.leaks["gs-044"].locations[0].line == 3
    assert not result.files[str(path)].complete


def test_a_long_line_under_the_limit_is_scanned(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "long.jsonl"
    filler = " ".join(["lorem"] * 400_000)
    path.write_bytes(_lines([chat(CLEAN_TEXTS[0]), {"text": f"{filler} {DENVER} {filler}"}]))
    result = _scan([path], index, key, max_line_bytes=8 << 20)
    assert result.problems == []
    assert result.leaks["gs-044"].locations[0].line == 2


def test_missing_file_is_reported(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    result = _scan([tmp_path / "nope.jsonl"], index, key)
    (problem,) = result.problems
    assert problem.kind == "unreadable"
    assert build_report(result, index, threshold=0.5).exit_code == 2


def test_last_line_without_newline_is_scanned(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "n.jsonl"
    path.write_bytes(_lines([chat(CLEAN_TEXTS[0])]) + json.dumps(chat(DENVER)).encode())
    assert _scan([path], index, key).leaks["gs-044"].locations[0].line == 2


def test_valid_json_that_is_not_an_object_and_trailing_garbage(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    path = tmp_path / "v.jsonl"
    body = 'null\n[1, 2]\n  {"text": "leading spaces are fine"}\n{"text": "x"} trailing\n'
    path.write_text(body + json.dumps(chat(DENVER)) + "\n", encoding="utf-8")
    result = _scan([path], index, key)
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (4, "invalid_json")
    assert result.files[str(path)].records == 5
    assert result.leaks["gs-044"].locations[0].line == 5


def test_byte_order_mark_at_the_start_is_not_an_error(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _lines([chat(DENVER)]))
    result = _scan([path], index, key)
    assert result.problems == []
    assert result.leaks["gs-044"].locations[0].line == 1


def test_a_100_mb_line_in_a_zstd_stream_is_skipped_in_bounded_pieces(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    from judgekit.contamination.scan import _ZstdPieces

    body = b'{"text": "' + b"a" * (100 << 20) + b'"}\n' + _lines([chat(DENVER)])
    path = tmp_path / "bomb.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(body))
    with open(path, "rb") as f:
        pieces = _ZstdPieces(f)
        largest = 0
        while piece := pieces.read():
            largest = max(largest, len(piece))
    assert largest <= 40 << 20
    result = _scan([path], index, key)
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (1, "line_too_long")
    assert result.leaks["gs-044"].locations[0].line == 2

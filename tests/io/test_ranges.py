"""Byte ranges of a line file: cut at line starts, covering the file, read back as the same lines."""

from __future__ import annotations

import io
import itertools

from hypothesis import given
from hypothesis import strategies as st

from judgekit.io import ranges as ranges_module
from judgekit.io.documents import iter_lines
from judgekit.io.ranges import RangeReader, count_newlines, line_ranges, next_line_start

_DATA = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"x" * 40, b"  "]), max_size=60).map(b"".join)


@given(_DATA, st.integers(1, 9), st.integers(1, 64))
def test_ranges_cover_the_file_and_start_at_line_starts(data, parts, chunk):
    ranges_module.LINE_START_CHUNK = chunk  # small chunks: a line start found across chunk edges
    try:
        got = line_ranges(io.BytesIO(data), len(data), parts)
    finally:
        ranges_module.LINE_START_CHUNK = 1 << 16
    assert got[0][0] == 0
    assert got[-1][1] == len(data)
    assert len(got) <= parts
    for (_, end), (start, _) in itertools.pairwise(got):
        assert end == start
        assert data[start - 1 : start] == b"\n"  # every later range begins a line
    assert all(end > start for start, end in got) or got == [(0, 0)]


@given(_DATA, st.integers(0, 80), st.integers(1, 64))
def test_the_next_line_start_is_the_first_offset_after_a_newline(data, offset, chunk):
    """With the size given or read up to the end alike, across chunk edges; the file's end when none."""
    starts = [0] + [n + 1 for n, byte in enumerate(data) if byte == ord("\n")]
    expected = next((s for s in starts if s >= offset), len(data))
    ranges_module.LINE_START_CHUNK = chunk
    try:
        assert next_line_start(io.BytesIO(data), offset, len(data)) == expected
        assert next_line_start(io.BytesIO(data), offset) == expected
    finally:
        ranges_module.LINE_START_CHUNK = 1 << 16


@given(_DATA, st.integers(1, 9))
def test_the_ranges_lines_numbered_from_their_newlines_are_the_files_lines(data, parts):
    whole = list(iter_lines(io.BytesIO(data)))
    handle = io.BytesIO(data)
    joined = []
    for start, end in line_ranges(handle, len(data), parts):
        before = count_newlines(handle, 0, start)
        assert before == data[:start].count(b"\n")
        joined += [(before + n, raw, done) for n, raw, done in iter_lines(RangeReader(handle, start, end))]
    assert joined == whole


def test_a_range_reader_stops_at_its_end_even_inside_a_line():
    reader = RangeReader(io.BytesIO(b"abc\ndef\n"), 2, 6)
    assert reader.readline() == b"c\n"
    assert reader.readline(1) == b"d"
    assert reader.readline() == b"e"
    assert reader.readline() == b""


def test_the_first_range_can_be_given_more():
    data = b"".join(b"%03d\n" % i for i in range(100))  # 400 bytes of 4-byte lines
    assert line_ranges(io.BytesIO(data), 400, 2) == [(0, 200), (200, 400)]
    assert line_ranges(io.BytesIO(data), 400, 2, first_extra=40) == [(0, 220), (220, 400)]
    assert line_ranges(io.BytesIO(data), 400, 2, first_extra=10**6)[0] == (0, 252)  # capped


def test_a_line_longer_than_every_share_leaves_fewer_ranges():
    data = b"x" * 100 + b"\n" + b"y\n"
    assert line_ranges(io.BytesIO(data), len(data), 4) == [(0, 101), (101, 103)]
    assert line_ranges(io.BytesIO(b""), 0, 3) == [(0, 0)]


@given(
    st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 40)), max_size=40),
    st.integers(64, 4096),
    st.data(),
)
def test_newlines_are_counted_exactly_sparse_or_dense(runs, chunk, data):
    """Runs of newlines far apart (found one by one) and close together (counted whole), chunk by chunk."""
    text = b"".join(b"x" * gap + b"\n" * n for gap, n in runs)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    ranges_module.CHUNK_BYTES = chunk  # many chunks, some dense and some sparse
    try:
        got = count_newlines(io.BytesIO(text), start, end)
    finally:
        ranges_module.CHUNK_BYTES = 4 << 20
    assert got == text[start:end].count(b"\n")

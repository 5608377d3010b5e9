"""Byte-range splitting: every line scanned exactly once, file line numbers, the same result in parallel."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contamination.conftest import CLEAN_TEXTS, DENVER, OPENING, chat
from judgekit.contamination.index import ContaminationIndex, Key
from judgekit.contamination.parallel import WorkUnit, plan_units, scan_files, scan_unit
from judgekit.contamination.scan import Matcher, ScanOptions


def _export(tmp_path: Path, n: int = 400) -> tuple[Path, list[int], list[int]]:
    """An export with OPENING on every 37th line and DENVER on every 101st; returns the leak lines."""
    lines = []
    opening, denver = [], []
    for i in range(1, n + 1):
        if i % 37 == 0:
            rec, _ = chat("noise " * (i % 7), OPENING), opening.append(i)
        elif i % 101 == 0:
            rec, _ = chat(DENVER), denver.append(i)
        else:
            rec = chat(CLEAN_TEXTS[i % 4] + " x" * (i % 50))
        lines.append(json.dumps(rec))
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, opening, denver


@pytest.mark.parametrize("split", [0, 997, 4096, 50_000])
def test_split_scan_equals_whole_scan(
    tmp_path: Path, index: ContaminationIndex, key: Key, split: int
) -> None:
    path, opening, denver = _export(tmp_path)
    opts = ScanOptions(max_locations=100)
    result = scan_files([path], index, key, opts, split_bytes=split)
    assert [loc.line for loc in result.leaks["gs-031"].locations] == opening
    assert [loc.line for loc in result.leaks["gs-044"].locations] == denver
    assert result.files[str(path)].records == 400
    assert result.files[str(path)].lines == 400
    if split:
        assert len(plan_units([path], split_bytes=split)) > 1


def test_two_processes_give_the_same_result(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path, opening, _ = _export(tmp_path, 600)
    opts = ScanOptions(max_locations=100)
    one = scan_files([path], index, key, opts, processes=1, split_bytes=20_000)
    two = scan_files([path], index, key, opts, processes=2, split_bytes=20_000)
    assert [loc.line for loc in two.leaks["gs-031"].locations] == opening
    for case_id in ("gs-031", "gs-044"):
        assert two.leaks[case_id].locations == one.leaks[case_id].locations
        assert two.leaks[case_id].records == one.leaks[case_id].records


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=40),
    st.integers(1, 2000),
    st.booleans(),
)
def test_every_line_belongs_to_exactly_one_range(lengths: list[int], split: int, final_newline: bool) -> None:
    import tempfile

    from contamination.conftest import CASES
    from judgekit.contamination.index import build_index, key_from_bytes

    key = key_from_bytes(b"k" * 32)
    matcher = Matcher(build_index(CASES, key), key)
    lines = [json.dumps({"text": f"line {i} " + "y" * n}) for i, n in enumerate(lengths)]
    body = "\n".join(lines) + ("\n" if final_newline else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.jsonl"
        path.write_text(body, encoding="utf-8")
        units = plan_units([path], split_bytes=split)
        total = 0
        for u in units:
            res, count = scan_unit(u, matcher, ScanOptions())
            total += count
            assert res.files[str(path)].records == count
        assert total == len(lines)
        assert units[0].start == 0
        assert units[-1].end is None
        for a, b in itertools.pairwise(units):
            assert a.end == b.start


def test_unit_of_a_range_inside_one_long_line_owns_nothing(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text(
        json.dumps({"text": "z" * 5000}) + "\n" + json.dumps(chat(DENVER)) + "\n", encoding="utf-8"
    )
    result, lines = scan_unit(WorkUnit(str(path), "jsonl", 1000, 2000), Matcher(index, key), ScanOptions())
    assert lines == 0
    assert result.files[str(path)].records == 0

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
from judgekit.contamination.parallel import (
    MAX_AUTO_SPLIT_BYTES,
    MIN_AUTO_SPLIT_BYTES,
    TWO_PROCESS_BYTES,
    WorkUnit,
    auto_processes,
    plan_scan,
    plan_units,
    scan_files,
    scan_unit,
    start_method,
)
from judgekit.contamination.report import build_report, render_json
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


def _report(paths: list[Path], index: ContaminationIndex, key: Key, **plan: object) -> str:
    result = scan_files(paths, index, key, ScanOptions(max_locations=100), **plan)  # type: ignore[arg-type]
    return render_json(build_report(result, index, threshold=0.5))


def test_the_report_is_the_same_bytes_for_any_split_processes_and_start(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    # A byte range reads whole blocks past its last line; it used to count them as read, so the report's
    # bytes read of a split file exceeded its size and differed with the split.
    path, _, _ = _export(tmp_path, 600)
    whole = _report([path], index, key, processes=1)
    assert json.loads(whole)["files"][0]["bytes_read"] == path.stat().st_size
    for plan in (
        {"processes": 1, "split_bytes": 997},
        {"processes": 1, "split_bytes": 20_000},
        {"processes": 2, "split_bytes": 20_000, "method": "fork"},
        {"processes": 2, "split_bytes": 7_001, "method": "spawn"},
        {"processes": 0},
    ):
        assert _report([path], index, key, **plan) == whole, plan


def test_a_second_process_is_used_from_the_measured_size_and_with_a_second_cpu() -> None:
    assert auto_processes(0, 2) == 1
    assert auto_processes(TWO_PROCESS_BYTES - 1, 2) == 1
    assert auto_processes(TWO_PROCESS_BYTES, 2) == 2
    assert auto_processes(100 * TWO_PROCESS_BYTES, 2) == 2
    assert auto_processes(100 * TWO_PROCESS_BYTES, 1) == 1
    # each further process needs more input: w processes from TWO_PROCESS_BYTES * w * (w - 1) / 2
    assert [auto_processes(TWO_PROCESS_BYTES * k, 8) for k in (1, 2, 3, 5, 6, 9, 10)] == [2, 2, 3, 3, 4, 4, 5]


def _sized(path: Path, size: int) -> Path:
    """A real JSONL file of ``size`` bytes on disk (sparse: the plan only reads its size)."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_the_plan_is_one_process_below_the_threshold_and_two_above(tmp_path: Path) -> None:
    small = _sized(tmp_path / "small.jsonl", TWO_PROCESS_BYTES - 1)
    big = _sized(tmp_path / "big.jsonl", 10 * TWO_PROCESS_BYTES)
    below = plan_scan([small], cpus=2)
    assert (below.processes, below.automatic, below.units) == (1, True, [WorkUnit(str(small), "jsonl")])
    above = plan_scan([big], cpus=2)
    assert above.processes == 2
    assert above.input_bytes == 10 * TWO_PROCESS_BYTES
    assert len(above.units) % 2 == 0
    assert all(
        MIN_AUTO_SPLIT_BYTES // 2 <= (u.end or big.stat().st_size) - u.start <= MAX_AUTO_SPLIT_BYTES
        for u in above.units
    )
    assert plan_scan([big], cpus=1).processes == 1
    # two files that are small alone but not together
    halves = [_sized(tmp_path / f"h{i}.jsonl", TWO_PROCESS_BYTES // 2) for i in range(2)]
    assert plan_scan(halves, cpus=2).processes == 2


def test_a_forced_process_count_and_split_are_kept(tmp_path: Path) -> None:
    small = _sized(tmp_path / "small.jsonl", 10 << 20)
    forced = plan_scan([small], processes=2, cpus=1)
    assert forced.processes == 2
    assert not forced.automatic
    assert len(forced.units) == 2  # one range per process at least, even for a file under the range size
    one = plan_scan([small], processes=1, split_bytes=1 << 20)
    assert (one.processes, len(one.units)) == (1, 10)
    assert plan_scan([small], processes=3, split_bytes=1 << 30).processes == 1  # one unit: one process
    gz = _sized(tmp_path / "big.jsonl.gz", 10 * TWO_PROCESS_BYTES)
    assert plan_scan([gz], cpus=2).units == [WorkUnit(str(gz), "gz")]  # a compressed file is one unit


def test_workers_fork_only_when_no_other_thread_runs() -> None:
    import sys
    import threading

    if sys.platform != "linux":
        pytest.skip("workers fork only on Linux")
    assert threading.active_count() == 1 or start_method() == "spawn"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert start_method() == "spawn"
    finally:
        stop.set()
        other.join()

"""A results file read in byte ranges by several processes: the same report, byte for byte, as one pass.

Wherever the file is cut (inside a run of duplicates, right after a malformed or truncated line, at the
first and the last line), the parts merged in file order give the report, the comparison and the problems
one pass gives: the JSON, Markdown and HTML renderings are equal as text. The many cuts are read in this
process (``read_ranges(..., workers=False)``: each part and its result go through pickle as a worker
process's do); a few tests run real worker processes through ``report_run``, ``digest_runs`` and the
command line.
"""

from __future__ import annotations

import itertools
import math
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.io.ranges import line_ranges
from judgekit.reports.retirement import RetirementTallies
from judgekit.reports.run_compare import RunDigest, compare_runs, digest_runs
from judgekit.reports.run_html import render_run_html
from judgekit.reports.run_json import render_comparison_json, render_run_json
from judgekit.reports.run_markdown import render_run_markdown
from judgekit.reports.run_model import (
    DEFAULT_REGRESSION_SLICES,
    CostTally,
    FailureTally,
    RunAccumulator,
    TrialReasons,
    report_run,
    trial_reasons,
)
from judgekit.reports.run_parts import (
    AUTO_PART_BYTES,
    _Worker,
    cpu_count,
    processes_for,
    read_ranges,
)
from judgekit.results import (
    SCHEMA_VERSION,
    CaseRef,
    LineLocation,
    ResultLine,
    ResultStream,
    dump_result_line,
    read_results,
)
from judgekit.verdict import Verdict
from support import load_file

REAL_LINES = Path(__file__).parents[1] / "fixtures" / "results" / "graded-demo-lines.jsonl"
SOURCES = load_file(Path(__file__).with_name("test_run_sources.py"), "run_sources_strategies")

_OPTIONS = {"undecided": "fail", "k": None, "retire_after": 3, "retire_min_trials": 1}


def _line(case_id: str, trial: int, verdict: str = "pass", **fields: object) -> str:
    line = ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id="run-a",
        case=CaseRef(id=case_id, version=1),
        trial=trial,
        verdict=Verdict(verdict),
        judgekit_version="1.0.0",
        **fields,  # type: ignore[arg-type]
    )
    return dump_result_line(line)


def _starts(data: bytes) -> list[int]:
    """Every line start of a file but the first (where a range may begin)."""
    return [i + 1 for i, byte in enumerate(data) if byte == 10 and i + 1 < len(data)]


def _ranges(data: bytes, cuts: tuple[int, ...]) -> list[tuple[int, int]]:
    bounds = [0, *sorted(set(cuts)), len(data)]
    return list(itertools.pairwise(bounds))


def _texts(report) -> tuple[str, str, str]:
    return render_run_json(report), render_run_markdown(report), render_run_html(report)


def _report_in_parts(path: Path, ranges, **opts):
    """``report_run``'s work with the file read in the given ranges (in this process), then merged."""
    acc = RunAccumulator(
        known_cases=opts.pop("known_cases", None),
        drop=opts.pop("drop", frozenset()),
        calibration_records=opts.pop("calibration_records", ()),
        retirement=opts.pop("retirement", None) or RetirementTallies(),
    )
    parts, problems, _ = read_ranges(path, ranges, acc, acc.part, workers=False)
    for part in parts:
        acc.merge(part)
    acc.seen.problems = problems
    report = acc.report(
        file=path.name,
        path=path,
        problems_in=problems,
        policy=opts["undecided"],
        k=opts["k"],
        retire_after=opts["retire_after"],
        retire_min_trials=opts["retire_min_trials"],
        regression_slices=opts.get("regression_slices", DEFAULT_REGRESSION_SLICES),
        splits=opts.get("splits") or {},
    )
    return report, acc.seen


# A file with every kind of cross-line rule: runs of duplicates, a duplicate far from its first, lines of
# other schema versions, a malformed line, a blank line, an invalid line, a truncated last line.
_ROWS = [
    _line("a", 1, cost_usd=0.1, quality=0.1),
    _line("a", 1, "fail"),  # duplicate of line 1
    _line("a", 1, "error"),  # and again
    _line("b", 1, "fail", cost_usd=0.2, quality=0.7),
    _line("b", 2).replace(f'"schema_version":{SCHEMA_VERSION}', '"schema_version":2', 1),
    '{"schema_version": 1, "run_id": ',  # malformed
    "   ",
    _line("c", 1, "insufficient_information", cost_usd=0.3),
    _line("a", 2, cost_unknown_reason="no price"),
    _line("b", 1),  # duplicate of line 4, far from it
    _line("d", 1).replace(f'"schema_version":{SCHEMA_VERSION}', '"schema_version":0', 1),
    _line("c", 2).replace('"trial":2', '"trial":-2', 1),  # invalid
    _line("c", 3, quality=0.3),
    _line("a", 1),  # duplicate of line 1 again
]
_FILE = ("\n".join(_ROWS) + "\n" + _line("e", 1)[:50]).encode()  # the last line cut off


def _one_pass(path: Path) -> tuple[tuple[str, str, str], list]:
    report, seen = report_run(path, **_OPTIONS)
    return _texts(report), [str(p) for p in seen.problems]


def test_the_sample_file_has_every_kind_of_problem(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(_FILE)
    messages = " | ".join(p.message for p in read_results(path).problems)
    for found in ("first at line 1", "first at line 4", "schema version 2", "schema version 0", "malformed"):
        assert found in messages
    assert "last line is truncated" in messages
    assert "trial" in messages  # the invalid line


@pytest.mark.parametrize("count", [1, 2, 3])
def test_every_cut_at_line_starts_gives_the_one_pass_report(tmp_path, count):
    path = tmp_path / "run.jsonl"
    path.write_bytes(_FILE)
    expected, problems = _one_pass(path)
    starts = _starts(_FILE)
    tried = 0
    for cuts in itertools.combinations(starts, count):
        if count == 3 and cuts[0] != starts[0] and cuts[-1] != starts[-1]:
            continue  # three cuts: those at the first or last line start (every one would be slow)
        report, seen = _report_in_parts(path, _ranges(_FILE, cuts), **_OPTIONS)
        assert _texts(report) == expected, cuts
        assert [str(p) for p in seen.problems] == problems, cuts
        tried += 1
    assert tried >= len(starts)


def test_a_cut_right_after_the_first_line_and_before_the_truncated_last_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(_FILE)
    expected, problems = _one_pass(path)
    starts = _starts(_FILE)
    report, seen = _report_in_parts(path, _ranges(_FILE, (starts[0], starts[-1])), **_OPTIONS)
    assert (_texts(report), [str(p) for p in seen.problems]) == (expected, problems)
    assert any(":15: last line is truncated" in p for p in problems)


def _places(report) -> list[tuple[str, int, int]]:
    """Each trial that did not pass, with the line its reason is read again from (its place's number)."""
    return sorted(
        (entry[1], entry[2], entry[4].number)
        for entry in report.trial_reasons._entries
        if isinstance(entry[4], LineLocation)
    )


@pytest.mark.parametrize("count", [1, 2])
def test_every_cut_keeps_the_files_line_numbers_in_the_places_of_reasons(tmp_path, count):
    """A part numbers its range's lines from its first; merged, each place names the file's line."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(_FILE)
    whole, _ = report_run(path, **_OPTIONS)
    expected = _places(whole)
    assert expected == [("b", 1, 4), ("c", 1, 8)]  # the sample's trials that did not pass
    for cuts in itertools.combinations(_starts(_FILE), count):
        report, _ = _report_in_parts(path, _ranges(_FILE, cuts), **_OPTIONS)
        assert _places(report) == expected, cuts


def test_a_range_is_read_without_counting_the_lines_before_it(tmp_path, monkeypatch):
    """Only a duplicate inside a later range (its message names the first line) counts them, once."""
    from judgekit import results

    counted: list[int] = []
    count_newlines = results.count_newlines

    def counting(handle, start, end):
        counted.append(end)
        return count_newlines(handle, start, end)

    monkeypatch.setattr(results, "count_newlines", counting)
    rows = [_line(f"c{n}", 1, "fail") for n in range(6)]
    data = ("\n".join(rows) + "\n").encode()
    path = tmp_path / "run.jsonl"
    path.write_bytes(data)
    cut = _starts(data)[2]
    report, seen = _report_in_parts(path, _ranges(data, (cut,)), **_OPTIONS)
    assert counted == []
    assert seen.problems == []
    assert [n for *_, n in _places(report)] == [1, 2, 3, 4, 5, 6]
    path.write_bytes(data + (rows[4] + "\n" + rows[5] + "\n").encode())  # c4 and c5 again, in range 2
    expected, problems = _one_pass(path)
    counted.clear()
    report, seen = _report_in_parts(path, _ranges(path.read_bytes(), (cut,)), **_OPTIONS)
    assert counted == [cut]  # once, for both duplicates' messages
    assert (_texts(report), [str(p) for p in seen.problems]) == (expected, problems)
    assert [(p.line, p.message.split("(")[1]) for p in seen.problems] == [
        (7, "first at line 5); the first is kept"),
        (8, "first at line 6); the first is kept"),
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    run=SOURCES.result_file(),
    history=st.lists(SOURCES.result_file(), max_size=1),
    opts=SOURCES.options(),
    drop=st.sets(st.sampled_from(sorted(SOURCES.CASES)), max_size=2),
    data=st.data(),
)
def test_random_files_cut_anywhere_give_the_one_pass_report(  # noqa: PLR0917 - hypothesis arguments
    tmp_path, run, history, opts, drop, data
):
    path, older = SOURCES.write_runs(tmp_path, run, history, opts)
    expected, seen_one = report_run(path, history=older, drop=frozenset(drop), **opts)
    starts = _starts(run)
    cuts = tuple(data.draw(st.lists(st.sampled_from(starts), max_size=5))) if starts else ()
    tallies = RetirementTallies()
    for old in older:
        for line in read_results(old).lines:
            tallies.add(line)
    got, seen = _report_in_parts(
        path, _ranges(run, cuts), drop=frozenset(drop), retirement=tallies, **dict(opts)
    )
    assert _texts(got) == _texts(expected)
    assert seen.problems == seen_one.problems
    assert (dict(seen.cases), dict(seen.dropped), seen.line_holdouts) == (
        dict(seen_one.cases),
        dict(seen_one.dropped),
        seen_one.line_holdouts,
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=SOURCES.result_file(), b=SOURCES.result_file(), data=st.data())
def test_random_files_cut_anywhere_give_the_one_pass_comparison(tmp_path, a, b, data):
    path_a, path_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    path_a.write_bytes(a)
    path_b.write_bytes(b)
    one_a, one_b = digest_runs(path_a, path_b)
    digests: list[RunDigest] = []
    for path, raw in ((path_a, a), (path_b, b)):
        digest = RunDigest(
            path.name,
            regression_slices=DEFAULT_REGRESSION_SLICES,
            splits={},
            keep_trials=not digests,
            baseline=digests[0] if digests else None,
        )
        starts = _starts(raw)
        cuts = tuple(data.draw(st.lists(st.sampled_from(starts), max_size=4))) if starts else ()
        parts, digest.problems, _ = read_ranges(path, _ranges(raw, cuts), digest, digest.part, workers=False)
        for part in parts:
            digest.merge(part)
        digest.path = path
        digests.append(digest)
    assert (digests[0].problems, digests[1].problems) == (one_a.problems, one_b.problems)
    assert _comparison(*digests) == _comparison(one_a, one_b)


def _comparison(a: RunDigest, b: RunDigest) -> str:
    try:
        return render_comparison_json(compare_runs(a, b))
    except JudgekitError as exc:  # no task in common, or other case versions: the same error
        return f"error: {exc}"


# --------------------------------------------------------------------------- exact sums


_TINY = [1.0, *([1e-16] * 40), 0.1, 0.2, 0.3, *([-1e-17] * 7)]


def test_the_sums_are_exact_whatever_the_split(tmp_path):
    """Costs and qualities whose sum in file order is not the exact sum: every split gives the exact one."""
    costs = [0.0001 * (i % 7) + v for i, v in enumerate(_TINY)]
    qualities = [min(1.0, abs(v)) for v in _TINY]
    rows = [
        _line("t", i + 1, cost_usd=cost, quality=quality)
        for i, (cost, quality) in enumerate(zip(costs, qualities, strict=True))
    ]
    data = "".join(row + "\n" for row in rows).encode()
    path = tmp_path / "run.jsonl"
    path.write_bytes(data)
    naive = 0.0
    for cost in costs:
        naive += cost
    assert naive != math.fsum(costs)  # the order of the additions matters for these values
    report, _ = report_run(path, **_OPTIONS)
    assert report.run.cost_usd == math.fsum(costs)
    assert report.suites[0].mean_quality == math.fsum(qualities) / len(qualities)
    expected = _texts(report)
    starts = _starts(data)
    for cut in starts:
        got, _ = _report_in_parts(path, _ranges(data, (cut,)), **_OPTIONS)
        assert _texts(got) == expected, cut
    got, _ = _report_in_parts(path, _ranges(data, tuple(starts[::3])), **_OPTIONS)
    assert _texts(got) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(SOURCES.result_line(), max_size=20), st.integers(0, 20))
def test_tallies_merged_from_parts_are_the_tallies_of_one_pass(lines, cut):
    whole_costs, whole_failures = CostTally(), FailureTally()
    costs, later_costs = CostTally(), CostTally()
    failures, later_failures = FailureTally(), FailureTally()
    for i, line in enumerate(lines):
        whole_costs.add(line)
        whole_failures.add(line)
        (costs if i < cut else later_costs).add(line)
        (failures if i < cut else later_failures).add(line)
    costs.merge(later_costs)
    failures.merge(later_failures)
    assert costs.summary() == whole_costs.summary()
    assert failures.rows() == whole_failures.rows()


def test_the_demos_real_lines_cut_anywhere_give_the_one_pass_report(tmp_path):
    data = REAL_LINES.read_bytes()
    path = tmp_path / "run.jsonl"
    path.write_bytes(data)
    expected, problems = _one_pass(path)
    for cut in _starts(data):
        report, seen = _report_in_parts(path, _ranges(data, (cut,)), **_OPTIONS)
        assert (_texts(report), [str(p) for p in seen.problems]) == (expected, problems)


# --------------------------------------------------------------------------- every attribute merged


def test_every_attribute_of_the_accumulators_is_merged():
    """A new attribute must be merged by the class's ``merge`` (then listed here), or parts would lose it."""
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    merged_by_run_accumulator = {
        "known", "drop", "records", "fingerprints",  # the same in every part (from the caller)
        "locate",  # set by each part's reader while it reads, never merged or pickled
        "retirement", "seen", "unknown", "stale", "index", "cases", "counts", "versions", "q_sum", "q_n",
        "trials", "check_counts", "distinct_fps", "last_fp", "run_ids", "jk_versions", "agent_models",
        "app_versions", "cost_total", "cost_seen", "cost_unpriced", "cost_reason", "untrusted_total",
        "untrusted_trials", "unlabelled_total", "unlabelled_trials", "policies", "failures", "costs",
        "criteria", "reasons",
    }  # fmt: skip
    assert set(vars(acc)) == merged_by_run_accumulator
    assert set(vars(acc.seen)) == {
        "path",
        "problems",
        "line_holdouts",
        "cases",
        "dropped",
        "history_problems",
    }
    assert set(vars(CostTally())) == {"cases", "criteria", "reason"}
    assert set(vars(FailureTally())) == {"checks", "trials", "tasks"}
    assert set(vars(RetirementTallies())) == {
        "seen", "repeated", "run_ids", "order", "tallies", "newest", "no_release"
    }  # fmt: skip
    digest = RunDigest("a", regression_slices=(), splits={})
    assert set(vars(digest)) == {
        "name", "path", "problems", "splits", "names", "keep_trials", "baseline",  # the caller's
        "info", "counts", "regression", "fingerprints", "models", "trials", "pairs", "trials_fixed",
        "trials_broken", "flipped",
    }  # fmt: skip


# --------------------------------------------------------------------------- real worker processes


def _file_with_duplicates_across_parts(tmp_path: Path) -> Path:
    rows = [
        _line(f"case-{i % 7}", i // 7 + 1, "pass" if i % 3 else "fail", cost_usd=0.1 * i) for i in range(60)
    ]
    rows += [_line("case-0", 1, "error"), _line("case-3", 2)]  # duplicates of lines in the first part
    rows.insert(30, rows[5])
    path = tmp_path / "run.jsonl"
    path.write_text("".join(row + "\n" for row in rows) + rows[0][:30])
    return path


def test_worker_processes_give_the_one_process_report(tmp_path):
    path = _file_with_duplicates_across_parts(tmp_path)
    one, seen_one = report_run(path, **_OPTIONS, processes=1)
    three, seen_three = report_run(path, **_OPTIONS, processes=3)
    assert _texts(three) == _texts(one)
    assert seen_three.problems == seen_one.problems
    assert sum("duplicate" in p.message for p in seen_one.problems) == 3


def test_worker_processes_give_the_one_process_comparison(tmp_path):
    a = _file_with_duplicates_across_parts(tmp_path)
    b = tmp_path / "b.jsonl"
    b.write_text(
        "".join(_line(f"case-{i % 7}", i // 7 + 1, "fail" if i % 4 else "pass") + "\n" for i in range(60))
    )
    one = digest_runs(a, b, processes=1)
    two = digest_runs(a, b, processes=2)
    assert [d.problems for d in two] == [d.problems for d in one]
    assert render_comparison_json(compare_runs(*two)) == render_comparison_json(compare_runs(*one))


def test_the_command_line_report_is_the_same_with_two_processes(tmp_path, capsys):
    path = _file_with_duplicates_across_parts(tmp_path)
    outputs = []
    out = tmp_path / "report.json"
    for count in ("1", "2"):
        assert main(["report", str(path), "--format", "json", "-o", str(out), "--processes", count]) == 2
        outputs.append(out.read_text())
        outputs.append(capsys.readouterr().err)  # the same problems, as warnings, in the same order
    assert outputs[0] == outputs[2]
    assert outputs[1] == outputs[3]
    assert "duplicate result" in outputs[1]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_and_spawned_workers_give_the_one_pass_report(tmp_path, method):
    path = _file_with_duplicates_across_parts(tmp_path)
    one, _ = report_run(path, **_OPTIONS, processes=1)
    data = path.read_bytes()
    starts = _starts(data)
    ranges = _ranges(data, (starts[len(starts) // 3], starts[2 * len(starts) // 3]))
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    parts, problems, _ = read_ranges(path, ranges, acc, acc.part, method=method)
    for part in parts:
        acc.merge(part)
    merged = acc.report(
        file=path.name, path=path, problems_in=problems, policy="fail", k=None, retire_after=3,
        retire_min_trials=1, regression_slices=DEFAULT_REGRESSION_SLICES, splits={},
    )  # fmt: skip
    assert _texts(merged) == _texts(one)


def test_workers_fork_only_when_this_process_has_one_thread():
    import threading

    from judgekit.io.ranges import start_method

    assert start_method() == ("fork" if threading.active_count() == 1 else "spawn")
    ready, stop = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (ready.set(), stop.wait()))
    other.start()
    try:
        ready.wait()
        assert start_method() == "spawn"
    finally:
        stop.set()
        other.join()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_worker_error_is_the_error_one_process_raises(tmp_path, method):
    missing = tmp_path / "missing.jsonl"
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    with pytest.raises(JudgekitError) as one:
        report_run(missing, **_OPTIONS)
    with pytest.raises(JudgekitError) as worker:
        _Worker((missing, (0, 10), acc.part(), None), method=method).result()
    assert str(worker.value) == str(one.value)
    assert worker.value.exit_code == one.value.exit_code == 2
    assert "cannot read results" in str(one.value)
    with pytest.raises(JudgekitError, match="cannot read results"):
        report_run(missing, **_OPTIONS, processes=2)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_worker_that_dies_is_a_located_error_not_a_traceback(tmp_path, method):
    import os
    import signal

    path = _file_with_duplicates_across_parts(tmp_path)
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    worker = _Worker((path, (0, path.stat().st_size), acc.part(), None), method=method)
    os.kill(worker.pid, signal.SIGKILL)  # as the system's out-of-memory killer ends it
    with pytest.raises(JudgekitError) as died:
        worker.result()
    message = str(died.value)
    assert message.startswith(f"{path}: the worker process reading bytes 0-{path.stat().st_size:,} ")
    assert "was killed (SIGKILL, often the system out of memory)" in message
    assert "nothing was written" in message
    assert "--processes 1" in message
    assert died.value.exit_code == 2


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_stopping_the_workers_leaves_none_running(tmp_path, method):
    import os

    path = _file_with_duplicates_across_parts(tmp_path)
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    workers = [_Worker((path, (0, path.stat().st_size), acc.part(), None), method=method) for _ in range(2)]
    workers[0].start()
    for worker in workers:  # one started, one not: what an error or Ctrl-C between the two leaves
        worker.stop()
    for worker in workers:
        assert worker.returncode is not None
        with pytest.raises(ChildProcessError):  # reaped: no such child is left
            os.waitpid(worker.pid, os.WNOHANG)


class _OnlyInTheTests:
    """A part the worker cannot unpickle (this test module is not on its path): it fails before its answer."""


def test_a_worker_that_exits_without_a_result_names_its_exit_code(tmp_path):
    path = _file_with_duplicates_across_parts(tmp_path)
    worker = _Worker((path, (0, 10), _OnlyInTheTests(), None))
    with pytest.raises(JudgekitError, match=r"bytes 0-10 ended with exit code 1 before it gave its part"):
        worker.result()


def test_a_part_and_its_result_survive_pickle(tmp_path):
    path = _file_with_duplicates_across_parts(tmp_path)
    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    stream = ResultStream(path)
    acc.locate = stream.location
    for line in stream.report_lines():
        acc.add(line)
    assert acc.reasons
    again = pickle.loads(pickle.dumps(acc))
    assert set(vars(again)) == set(vars(acc))
    assert again.locate is None  # the reader's locator stays here
    assert again.trials == acc.trials
    assert again.reasons == acc.reasons  # the trials that did not pass travel as their lines' places
    assert all(isinstance(entry[-1], LineLocation) for entry in again.reasons)
    made = TrialReasons(sorted(again.reasons, key=lambda entry: entry[:3]), path=path)
    assert made == trial_reasons(read_results(path).lines)  # read again from the file, made alike


# --------------------------------------------------------------------------- how many processes


def test_the_process_count_follows_the_option_then_the_file_size(tmp_path):
    small = tmp_path / "small.jsonl"
    small.write_text(_line("a", 1) + "\n")
    assert processes_for(small, None) == 1  # below one share: no worker pays for its start
    assert processes_for(small, 1) == 1
    assert processes_for(small, 3) == 3
    assert processes_for(small, 0) == cpu_count()
    assert processes_for(read_results(small), 4) == 1  # a run in memory is read here
    assert processes_for(tmp_path / "missing.jsonl", None) == 1  # its error comes from the one reader
    with pytest.raises(ValueError, match="at least 0"):
        processes_for(small, -1)
    big = tmp_path / "big.jsonl"
    with big.open("wb") as handle:  # a sparse file: its size, no bytes written
        handle.truncate(2 * AUTO_PART_BYTES)
    assert processes_for(big, None) == min(2, cpu_count())


def test_ranges_of_a_file_smaller_than_its_parts_are_fewer(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(_line("a", 1) + "\n")
    with path.open("rb") as handle:
        assert line_ranges(handle, path.stat().st_size, 4) == [(0, path.stat().st_size)]
    one, _ = report_run(path, **_OPTIONS)
    four, _ = report_run(path, **_OPTIONS, processes=4)  # one range: read here, no worker
    assert _texts(four) == _texts(one)


def test_the_process_count_can_come_from_the_project_configuration(tmp_path, monkeypatch):
    from judgekit.api.reports import report
    from judgekit.settings import setting

    path = _file_with_duplicates_across_parts(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judgekit.toml").write_text("processes = 2\n")
    assert setting("processes") == 2
    assert setting("processes", 1) == 1  # the option wins
    assert render_run_json(report(path, records=())) == render_run_json(report(path, records=(), processes=1))
    (tmp_path / "judgekit.toml").write_text("processes = -1\n")
    with pytest.raises(
        JudgekitError, match=r"judgekit.toml:1: processes: Input should be greater than or equal"
    ):
        report(path, records=())

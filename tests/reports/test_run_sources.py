"""The one report engine, ``report_run``, over its sources: a file streamed, or its lines in memory.

Both sources feed the same accumulation, so their reports are equal by construction; what differs is how
the lines are read (the streamed file through the exact fast path), which the property test below holds
equal, problems included. A scan of the sources checks that every path to a run report goes through it.
"""

from __future__ import annotations

import ast
import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.errors import JudgekitError
from judgekit.reports.run_compare import compare_runs, digest_runs
from judgekit.reports.run_html import render_run_html
from judgekit.reports.run_json import render_comparison_json, render_run_json
from judgekit.reports.run_markdown import render_run_markdown
from judgekit.reports.run_model import report_run
from judgekit.results import (
    SCHEMA_VERSION,
    CaseRef,
    ResultLine,
    dump_result_line,
    failure_categories,
    read_results,
)
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict
from support import called_name, load_file

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"

CASES = {
    "refund-1": {"slice": "policy_edge", "category": "edge", "severity": "critical"},
    "refund-2": {"slice": "policy_edge", "category": "edge", "severity": "high"},
    "incident-7": {"slice": "regression", "category": "regression", "severity": "critical"},
    "incident-9": {"slice": "regressions", "category": "adversarial"},
    "faq-1": {},
    "hold-1": {"slice": "real_failures", "severity": "low"},
}


@functools.cache
def _record(fingerprint: str):
    """A real calibration record of the small label table's judge (built once)."""
    from judgekit.calibration.agreement import compute_agreement
    from judgekit.calibration.gate import TrustPolicy, evaluate_gate
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.records import LabelTableInfo, build_record

    source = Path(__file__).parents[1] / "calibration" / "data" / "labels_small.csv"
    table = parse_labels(source.read_bytes(), source=source)
    report = compute_agreement(table, judge="judge-v2", experts=["alice", "bob", "carol"], resamples=50)
    return build_record(
        fingerprint=fingerprint,
        report=report,
        gate=evaluate_gate(report, TrustPolicy()),
        policy=TrustPolicy(),
        label_table=LabelTableInfo(sha256=table.sha256, name=source.name, rows=len(table.rows)),
    )


@st.composite
def checks(draw) -> tuple[CheckResult, ...]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        check_id = draw(st.sampled_from(["state", "rule:0", "criterion:goal", "criterion:tone"]))
        verdict = draw(st.sampled_from(list(Verdict)))
        evidence = []
        if check_id.startswith("criterion:"):
            priced = draw(st.booleans())
            cost = {
                "prompt_tokens": draw(st.integers(0, 2000)),
                "completion_tokens": draw(st.integers(0, 300)),
                "usd": draw(st.floats(0, 0.01)) if priced else None,
                "replayed": draw(st.integers(0, 1)),
            }
            if not priced:
                cost["unknown_reason"] = "litellm has no price for model m"
            fp = draw(st.sampled_from(["fp-judge", "fp-other", ""]))
            evidence.append(Evidence(kind="note", summary="judge", data={"fingerprint": fp, "cost": cost}))
        if draw(st.booleans()):
            evidence.append(Evidence(kind="call", summary="call 0", tool="refund", arguments={"amount": 5}))
        out.append(
            CheckResult(
                check_id=check_id,
                layer="rubric" if check_id.startswith("criterion:") else "state",
                verdict=verdict,
                reason=""
                if verdict is Verdict.PASS
                else draw(st.sampled_from(["diff", "refund over limit"])),
                category=draw(st.sampled_from([None, *FailureCategory])) if verdict is Verdict.FAIL else None,
                evidence=tuple(evidence),
            )
        )
    return tuple(out)


@st.composite
def result_line(draw) -> ResultLine:
    case_id = draw(st.sampled_from(sorted(CASES)))
    found = draw(checks())
    cost_kind = draw(st.sampled_from(["none", "known", "unknown"]))
    untrusted = draw(st.integers(0, 2))
    app = draw(st.sampled_from(["1.0.0", "2.0.0", "3.0.0", None]))
    return ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id=draw(st.sampled_from(["run-a", "run-b"])),
        case=CaseRef(id=case_id, version=draw(st.sampled_from([1, 1, 1, 2])), **CASES[case_id]),
        trial=draw(st.integers(1, 4)),
        verdict=draw(st.sampled_from(list(Verdict))),
        reason=draw(st.sampled_from(["", "expectation 'refund' decided by no check"])),
        quality=draw(st.one_of(st.none(), st.floats(0, 1))),
        checks=found,
        failure_categories=failure_categories(found),
        run=None
        if app is None and draw(st.booleans())
        else RunRecord(agent_model="agent-x", app_version=app),
        judge_fingerprint=draw(st.sampled_from([None, {"hex": "fp-judge"}, {"hex": "fp-x", "model": "m"}])),
        untrusted_verdicts=untrusted,
        untrusted_policy=draw(st.sampled_from([None, "withhold", "count"])),
        grading=draw(st.sampled_from([{}, {"holdouts": ["hold-1"]}, {"judge_model": "m"}])),
        judgekit_version=draw(st.sampled_from(["0.9.0", "1.0.0"])),
        cost_usd=draw(st.floats(0, 0.05)) if cost_kind == "known" else None,
        cost_unknown_reason="litellm has no price for model m" if cost_kind == "unknown" else None,
    )


def _bad_line(kind: str, good: str) -> str:
    """A line today's reader reports as a problem, built from a valid one."""
    if kind == "malformed":
        return good[: len(good) // 2]
    if kind == "other_version":
        return good.replace(f'"schema_version":{SCHEMA_VERSION}', '"schema_version":2', 1)
    if kind == "invalid":
        return good.replace('"trial":', '"trial":-', 1)
    if kind == "duplicate_key":
        return good[:-1] + ',"verdict":"pass"}'
    if kind == "too_deep":
        return good[:-1] + ',"grading_extra":' + "[" * 120 + "]" * 120 + "}"
    if kind == "long_number":
        return good[:-1] + ',"duration_s":' + "1" * 150 + "}"
    # the kinds below are read by the full path in both reports: the streamed report's fast path declines
    if kind == "nested_duplicate":  # a repeated key inside the case
        return good.replace('"case":{', '"case":{"id":"faq-1",', 1)
    if kind == "escaped_duplicate":  # a repeated key written with an escape
        return good[:-1] + ',"verd\\u0069ct":"pass"}'
    if kind == "missing_field":  # valid: pydantic fills the default, the fast path needs every field
        return good.replace(',"reason":""', "", 1)
    if kind == "wrong_type":  # valid in pydantic's lax mode (an integer written 1.0)
        return good.replace('"untrusted_verdicts":0', '"untrusted_verdicts":0.0', 1)
    return "[1, 2]"  # valid JSON, not an object


BAD = [
    "malformed",
    "other_version",
    "invalid",
    "duplicate_key",
    "too_deep",
    "long_number",
    "nested_duplicate",
    "escaped_duplicate",
    "missing_field",
    "wrong_type",
    "not_object",
]


@st.composite
def result_file(draw) -> bytes:
    rows: list[str] = []
    for _ in range(draw(st.integers(0, 24))):
        good = dump_result_line(draw(result_line()))
        if draw(st.integers(0, 9)) == 0:
            rows.append(_bad_line(draw(st.sampled_from(BAD)), good))
        else:
            rows.append(good)
        if draw(st.integers(0, 15)) == 0:
            rows.append("   ")  # a blank line
    text = "".join(row + "\n" for row in rows)
    if draw(st.integers(0, 5)) == 0:  # an interrupted run: the last line cut off
        text += dump_result_line(draw(result_line()))[:40]
    return text.encode()


@st.composite
def options(draw) -> dict:
    policy = draw(st.sampled_from(["fail", "exclude"]))
    known = None
    if draw(st.booleans()):
        ids = draw(st.sets(st.sampled_from(sorted(CASES))))
        known = {cid: (draw(st.sampled_from([1, 2])), ()) for cid in ids}
    splits = draw(
        st.dictionaries(
            st.sampled_from(sorted(CASES)),
            st.sampled_from(["capability", "regression", "holdout"]),
            max_size=3,
        )
    )
    return {
        "undecided": policy,
        "k": draw(st.sampled_from([None, None, 0, 1, 2, 3, 9])),
        "retire_after": draw(st.integers(0, 3)),
        "retire_min_trials": draw(st.integers(1, 2)),
        "regression_slices": draw(st.sampled_from([("regression", "regressions"), ("real_failures",)])),
        "known_cases": known,
        "splits": splits,
        "calibration_records": draw(st.booleans()),  # True: the fp-judge record (built outside hypothesis)
    }


def write_runs(tmp_path: Path, run: bytes, history: list[bytes], opts: dict) -> tuple[Path, list[Path]]:
    """Write a run and its history runs; the options' ``calibration_records`` flag becomes the record."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(run)
    older = []
    for i, data in enumerate(history):
        older.append(tmp_path / f"old{i}.jsonl")
        older[-1].write_bytes(data)
    opts["calibration_records"] = [_record("fp-judge")] if opts["calibration_records"] else []
    return path, older


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    run=result_file(),
    history=st.lists(result_file(), max_size=2),
    opts=options(),
    drop=st.sets(st.sampled_from(sorted(CASES)), max_size=2),
)
def test_a_streamed_file_and_its_lines_in_memory_give_one_report(tmp_path, run, history, opts, drop):
    path, older = write_runs(tmp_path, run, history, opts)
    results = read_results(path)
    kept = replace(results, lines=[line for line in results.lines if line.case.id not in drop])
    expected, in_memory = report_run(kept, history=[read_results(p) for p in older], **opts)
    got, seen = report_run(path, history=older, drop=frozenset(drop), **opts)
    assert render_run_json(got) == render_run_json(expected)
    assert render_run_markdown(got) == render_run_markdown(expected)
    assert got == expected
    assert seen.problems == results.problems
    assert seen.history_problems == in_memory.history_problems == [read_results(p).problems for p in older]
    # dropping in the engine is leaving the lines out first
    assert report_run(results, history=older, drop=frozenset(drop), **opts)[0] == expected
    assert dict(seen.cases) == {
        cid: sum(line.case.id == cid for line in results.lines)
        for cid in {ln.case.id for ln in results.lines}
    }
    assert dict(seen.dropped) == {cid: n for cid, n in seen.cases.items() if cid in drop}


def test_the_streamed_report_renders_the_golden_files(tmp_path):
    # test_run_report.py renders them from the lines in memory
    # the golden report's three runs: the lines test_run_report.py writes for it
    module = load_file(Path(__file__).with_name("test_run_report.py"), "golden_lines")
    older = []
    for i, version in enumerate(("1.9.0", "2.0.0")):
        older.append(tmp_path / f"old{i}.jsonl")
        older[-1].write_text(
            "".join(dump_result_line(x) + "\n" for x in module._sample_lines(f"run-{i}", app_version=version))
        )
    run = tmp_path / "run.jsonl"
    run.write_text("".join(dump_result_line(x) + "\n" for x in module._sample_lines()))
    report, _ = report_run(run, history=older, undecided="fail", retire_min_trials=4)
    assert render_run_markdown(report) == (GOLDEN / "run_report.md").read_text()
    assert render_run_json(report) == (GOLDEN / "run_report.json").read_text()
    assert render_run_html(report) == (GOLDEN / "run_report.html").read_text()


def test_a_missing_results_file_is_one_error(tmp_path):
    with pytest.raises(JudgekitError, match=r"missing\.jsonl: cannot read results"):
        report_run(tmp_path / "missing.jsonl", undecided="fail")


def test_the_lines_holdouts_are_reported(tmp_path):
    path = tmp_path / "run.jsonl"
    line = ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id="run-a",
        case=CaseRef(id="hold-1", version=1),
        trial=1,
        verdict=Verdict.PASS,
        grading={"holdouts": ["hold-1"]},
        judgekit_version="1.0.0",
    )
    path.write_text(dump_result_line(line) + "\n")
    report, seen = report_run(path, undecided="fail", drop=frozenset({"hold-1"}))
    assert seen.line_holdouts == {"hold-1"}
    assert dict(seen.dropped) == {"hold-1": 1}
    assert report.run.trials == 0
    assert json.loads(render_run_json(report))["run"]["tasks"] == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=result_file(), b=result_file(), splits=options().map(lambda o: o["splits"]))
def test_two_streamed_files_and_their_lines_in_memory_give_one_comparison(tmp_path, a, b, splits):
    path_a, path_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    path_a.write_bytes(a)
    path_b.write_bytes(b)
    ra, rb = read_results(path_a), read_results(path_b)
    da, db = digest_runs(path_a, path_b, splits=splits)
    assert (da.problems, db.problems) == (ra.problems, rb.problems)
    expected: str
    try:
        expected = render_comparison_json(compare_runs(*digest_runs(ra, rb, splits=splits)))
    except JudgekitError as exc:  # no task in common, or other case versions: the same error
        expected = f"error: {exc}"
    try:
        got = render_comparison_json(compare_runs(da, db))
    except JudgekitError as exc:
        got = f"error: {exc}"
    assert got == expected


def _names(path: Path) -> tuple[set[str], set[str]]:
    """The names a module calls, and the names it mentions at all."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    called = {called_name(node) for node in ast.walk(tree)} - {None}
    mentioned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    mentioned |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    mentioned |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return called, mentioned


def test_every_path_to_a_run_report_goes_through_the_one_engine():
    engine = REPO / "src" / "judgekit" / "reports" / "run_model.py"
    callers = []
    for path in sorted([*(REPO / "src").rglob("*.py"), *(REPO / "bench").glob("*.py")]):
        if path == engine:
            continue
        called, mentioned = _names(path)
        rel = path.relative_to(REPO).as_posix()
        # a run report is built by the engine only: no other module builds one or drives its accumulation
        assert "RunReport" not in called, f"{rel} builds a RunReport itself: call report_run"
        if rel != "bench/bench_report.py":  # its decode+count floor drives the accumulation on purpose
            assert "RunAccumulator" not in mentioned, f"{rel} drives RunAccumulator: call report_run"
        assert not {"build_run_report", "stream_run_report", "stream_history"} & called, rel
        # a comparison is made by the one compare only, and its task labels by task_changes
        if rel != "src/judgekit/reports/run_compare.py":
            from_compare = {
                a.name
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.ImportFrom) and n.module == "judgekit.reports.run_compare"
                for a in n.names
            }
            assert not {"Comparison", "TaskChange"} & from_compare & called, rel
            assert not {"compare_digests", "stream_compare"} & called, rel
            assert "RunDigest" not in mentioned or "compare_runs" in called, rel
        if "report_run" in called:
            callers.append(rel)
    # the report and grade commands (or the service they call) and the demo reach it
    assert any(c.startswith(("src/judgekit/commands/", "src/judgekit/api/")) for c in callers), callers
    assert "src/judgekit/demo.py" in callers or any(c.startswith("src/judgekit/api/") for c in callers)
    # the engine feeds every source to one accumulation, in one place
    called, _ = _names(engine)
    assert "RunAccumulator" in called
    assert engine.read_text(encoding="utf-8").count("RunAccumulator(") == 1

"""The static trial viewer's data (``judgekit.reports.viewer``) and the ``judgekit view`` command.

The demo's two runs are the realistic input (real results and transcripts written by ``judgekit grade``);
small hand-made runs cover what the demo does not have: hostile transcript text, missing or changed
transcripts, unpriced judges, problems in a results file. The page itself is driven in a browser by
``test_viewer_browser.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from judgekit.api.viewer import read_transcripts_for, write_viewer
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.reports.run_compare import compare_runs, digest_runs
from judgekit.reports.viewer import (
    MARKER,
    diff_rows,
    js_assign,
    locate_quote,
    trial_detail,
    trial_row,
)
from judgekit.results import CaseRef, TrialSource, dump_result_line, make_result_line, read_results
from judgekit.verdict import CheckResult, Evidence, Grade, Trust, Verdict
from reports.test_run_compare import write_runs as write_flipped_runs
from support import INTERRUPTIBLE_CLI_CHILD, child_env
from support import load_viewer_data as _load

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"

HOSTILE = "</script><script>alert(1)</script> <img src=x onerror=alert(2)> <!-- \u2028 line \u2029 para"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("viewer-demo")
    assert main(["-q", "demo", "--out", str(out)]) in (0, None)
    return out / "results"


def _line(
    tmp: Path,
    case: str,
    trial: int,
    messages: list[dict[str, Any]],
    checks: tuple[CheckResult, ...] = (),
    *,
    verdict: Verdict = Verdict.FAIL,
    **extra: Any,
) -> Any:
    """A result line graded from a transcript written to ``tmp/transcripts.jsonl`` (appended)."""
    transcripts = tmp / "transcripts.jsonl"
    raw = json.dumps({"case_id": case, "trial": trial, "messages": messages})
    with transcripts.open("a", encoding="utf-8") as handle:
        handle.write(raw + "\n")
    number = len(transcripts.read_text(encoding="utf-8").splitlines())
    source = TrialSource(file=str(transcripts), line=number, sha256=hashlib.sha256(raw.encode()).hexdigest())
    grade = Grade(case_id=case, trial=trial, verdict=verdict, checks=checks)
    return make_result_line(
        run_id="r1", case=CaseRef(id=case, version=1), grade=grade, source=source, **extra
    )


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    return path


MESSAGES = [
    {"role": "user", "content": "refund my duplicate charge"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "a", "content": "ok"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "b",
                "type": "function",
                "function": {"name": "issue_refund", "arguments": '{"amount": 5}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "b", "content": "done"},
    {"role": "assistant", "content": "I refunded both charges."},
]

RULE = CheckResult(
    check_id="rule:1",
    layer="rules",
    verdict=Verdict.FAIL,
    reason="forbidden: issue_refund twice",
    evidence=(Evidence(kind="call", summary="call 1: issue_refund", call_index=1, tool="issue_refund"),),
)


# --------------------------------------------------------------------------- data from the demo runs


def test_the_run_rows_carry_what_the_run_page_lists(demo: Path, tmp_path: Path) -> None:
    build = write_viewer([read_results(demo / "agent-v1.jsonl")], tmp_path / "v")
    data = _load(tmp_path / "v" / "data" / "index.js")
    (run,) = data["runs"]
    assert len(run["rows"]) == 104 == build.runs[0]["trials"]
    cases = [c["id"] for c in data["cases"]]
    row = next(r for r in run["rows"] if cases[r[0]] == "gs-double-charge" and r[1] == 2)
    case_index, trial, verdict, categories, layers, trust, cost, unknown, reason = row
    assert (trial, verdict, trust, cost, unknown) == (2, "fail", "trusted", 0.0, None)
    assert categories == "policy_violation,incorrect_reporting"
    assert layers.split(",") == ["state", "rules", "rubric"]
    assert reason.startswith("state:collateral: 1 row(s) changed that the expected state does not cover")
    assert data["cases"][case_index]["suite"] == "capability"
    assert data["compare"] is None
    # the index holds no transcript: those are in the chunks
    assert "I've refunded both charges" not in (tmp_path / "v" / "data" / "index.js").read_text(
        encoding="utf-8"
    )


def test_the_trial_detail_points_at_the_offending_call(demo: Path) -> None:
    run = read_results(demo / "agent-v1.jsonl")
    n = next(i for i, line in enumerate(run.lines) if line.key == ("gs-double-charge", 2))
    lookups = read_transcripts_for(run.lines, demo)
    detail = trial_detail(run.lines[n], lookups[n])
    rule = next(c for c in detail["checks"] if c["id"] == "rule:1")
    (evidence,) = rule["evidence"]
    assert (evidence["call_index"], evidence["tool"], evidence["message_index"]) == (2, "issue_refund", 6)
    assert 2 in detail["highlight"]["calls"]
    assert 6 in detail["highlight"]["messages"]
    calls = [c for m in detail["messages"] for c in m["calls"]]
    assert calls[2]["name"] == "issue_refund"
    assert detail["messages"][6]["calls"][0]["index"] == 2  # the call the evidence names is in message 6
    assert '"amount": 412.18' in calls[2]["arguments"]  # pretty-printed arguments


def test_a_judge_quote_is_located_in_the_message_it_quotes(demo: Path) -> None:
    run = read_results(demo / "agent-v1.jsonl")
    n = next(i for i, line in enumerate(run.lines) if line.key == ("gs-double-charge", 2))
    detail = trial_detail(run.lines[n], read_transcripts_for(run.lines, demo)[n])
    judged = next(c for c in detail["checks"] if c["id"] == "criterion:case.response_rubric.0")
    quote = next(e for e in judged["evidence"] if e["kind"] == "judge")
    where = quote["quote_location"]
    assert where["message_index"] == 8
    text = detail["messages"][8]["content"]
    assert (
        text[where["start"] : where["end"]] == "I've refunded both charges of 412.18 to the card ending 4417"
    )
    judge = judged["judge"]
    assert judge["criterion"] == "case.response_rubric.0"
    assert judge["model"] == "openai/airdesk-synthetic-judge"
    assert judge["fingerprint"].startswith("39b3e198f6d5")
    assert judge["samples"] == ["fail"]
    assert (judge["cost_usd"], judge["cost_unknown_reason"]) == (0.0, None)
    assert (judge["replayed"], judge["cached_tokens"]) == (1, 0)  # replayed; no prompt-cache read recorded
    assert judged["trust"] == "trusted"
    assert judged["trust_reason"].startswith("calibration record")


def test_a_quote_in_no_message_is_not_located() -> None:
    assert locate_quote(["hello", None, "refund issued"], "refund was issued", 2) is None
    assert locate_quote(["refund issued", "x"], "...refund issued...", 1) == {
        "message_index": 0,
        "start": 0,
        "end": 13,
    }


def test_collateral_changes_become_marked_diff_rows() -> None:
    evidence = Evidence(
        kind="diff",
        summary="collateral changes (initial -> final)",
        data={
            "diff": {
                "refunds": {"added": {"RF-2": {"amount": 5}}},
                "contacts": {"modified": {"C-1": [{"path": "email", "old": "a@x", "new": "b@x"}]}},
            },
            "lines": ["refunds/RF-2: row added"],
        },
    )
    rows = diff_rows(evidence, "state:collateral")
    assert rows == [
        {
            "table": "refunds",
            "key": "RF-2",
            "field": "",
            "expected": "(no row)",
            "found": 'row added: {"amount": 5}',
            "kind": "collateral",
        },
        {
            "table": "contacts",
            "key": "C-1",
            "field": "email",
            "expected": "a@x",
            "found": "b@x",
            "kind": "collateral",
        },
    ]


def test_an_expected_change_not_made_is_a_missing_row() -> None:
    evidence = Evidence(
        kind="diff",
        summary="tasks: expected an added row {queue: 'refunds_manual'}; no row was added",
        data={"table": "tasks", "expected_row": {"queue": "'refunds_manual'"}},
    )
    assert diff_rows(evidence, "state") == [
        {
            "table": "tasks",
            "key": "(new row)",
            "field": "queue",
            "expected": "'refunds_manual'",
            "found": "(no row added)",
            "kind": "missing",
        }
    ]
    wrong = Evidence(
        kind="diff",
        summary="bookings/B1: status is 'open'",
        data={
            "table": "bookings",
            "key": "B1",
            "failures": [{"field": "status", "predicate": "==", "expected": "cancelled", "found": "open"}],
        },
    )
    assert diff_rows(wrong, "state") == [
        {
            "table": "bookings",
            "key": "B1",
            "field": "status",
            "expected": "== cancelled",
            "found": "open",
            "kind": "wrong",
        }
    ]


def test_details_are_written_in_chunks_of_trials(demo: Path, tmp_path: Path) -> None:
    build = write_viewer([read_results(demo / "agent-v1.jsonl")], tmp_path / "v", chunk_size=10)
    assert build.runs[0]["chunks"] == 11
    chunk_files = sorted((tmp_path / "v" / "data" / "run0").glob("chunk-*.js"))
    assert len(chunk_files) == 11
    last = _load(tmp_path / "v" / "data" / "run0" / "chunk-10.js")
    assert len(last) == 4  # trials 100..103
    rows = _load(tmp_path / "v" / "data" / "index.js")["runs"][0]["rows"]
    cases = [c["id"] for c in _load(tmp_path / "v" / "data" / "index.js")["cases"]]
    third = _load(tmp_path / "v" / "data" / "run0" / "chunk-3.js")
    assert [(d["case"], d["trial"]) for d in third] == [(cases[r[0]], r[1]) for r in rows[30:40]]
    assert _load(tmp_path / "v" / "data" / "index.js")["chunk_size"] == 10


def test_the_comparison_classifies_cases_as_judgekit_compare_does(demo: Path, tmp_path: Path) -> None:
    a, b = read_results(demo / "agent-v1.jsonl"), read_results(demo / "agent-v2.jsonl")
    write_viewer([a, b], tmp_path / "v")
    data = _load(tmp_path / "v" / "data" / "index.js")
    expected = compare_runs(*digest_runs(a, b))
    rows = {row["case"]: row for row in data["compare"]["rows"]}
    assert {c: r["change"] for c, r in rows.items() if r["change"] in ("fixed", "broken", "undecided")} == {
        c.case_id: c.change for c in expected.changes
    }
    counts = data["compare"]["counts"]
    assert (counts["fixed"], counts["broken"], counts["still_pass"], counts["still_fail"]) == (
        expected.fixed,
        expected.broken,
        expected.unchanged_pass,
        expected.unchanged_fail,
    )
    assert data["compare"]["verdict"] == expected.verdict
    fixed = next(r for r in rows.values() if r["change"] == "fixed")
    trials_b = [data["runs"][1]["rows"][n] for n in fixed["trials_b"]]
    assert {data["cases"][r[0]]["id"] for r in trials_b} == {fixed["case"]}
    assert len(fixed["trials_a"]) == fixed["a"]["trials"]


def test_a_trial_that_broke_in_a_still_failing_task_is_filed_under_broken(tmp_path: Path) -> None:
    # issue 35: the change tab filed the broken trial under "still fail" only
    a, b = write_flipped_runs(tmp_path)
    write_viewer([read_results(a), read_results(b)], tmp_path / "v")
    compare = _load(tmp_path / "v" / "data" / "index.js")["compare"]
    rows = {row["case"]: row for row in compare["rows"]}
    broke = rows["refill-broke"]
    assert (broke["change"], broke["trials_broken"], broke["trials_fixed"]) == ("still_fail", [2], [])
    assert broke["filed_under"] == ["still_fail", "changed", "broken", "all"]
    assert rows["renew-mixed"]["filed_under"] == ["still_fail", "changed", "fixed", "all"]
    assert rows["refill-fixed"]["filed_under"] == ["fixed", "changed", "all"]
    assert rows["stock-pass"]["filed_under"] == ["still_pass", "all"]
    assert compare["trials"] == {"pairs": 9, "fixed": 4, "broken": 1}
    filed = {(c, t) for c, _, _, broken in compare_runs(*digest_runs(a, b)).trials_by_task() for t in broken}
    assert {(r["case"], t) for r in compare["rows"] for t in r["trials_broken"]} == filed


def test_cases_add_their_split_and_expectations(demo: Path, tmp_path: Path) -> None:
    write_viewer([read_results(demo / "agent-v1.jsonl")], tmp_path / "v", cases=AIRDESK)
    data = _load(tmp_path / "v" / "data" / "index.js")
    assert data["with_cases"] is True
    double = next(c for c in data["cases"] if c["id"] == "gs-double-charge")
    labels = [label for label, _ in double["info"]]
    assert {"expected", "expected state", "case file"} <= set(labels)
    assert any(label in labels for label in ("input", "turns", "user simulation"))
    regression = [c for c in data["cases"] if c["category"] == "regression"]
    assert regression
    assert all(c["suite"] == "regression" for c in regression)


# --------------------------------------------------------------------------- untrusted text


def test_hostile_transcript_text_is_data_never_markup(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": f"Sure. {HOSTILE}"},
    ]
    judged = CheckResult(
        check_id="criterion:x",
        layer="rubric",
        verdict=Verdict.FAIL,
        reason=HOSTILE,
        evidence=(Evidence(kind="judge", summary=HOSTILE, quote=HOSTILE, message_index=1),),
    )
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, messages, (judged,))])
    write_viewer([read_results(results)], tmp_path / "v")
    for path in (tmp_path / "v").rglob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert "<" not in text or path.name == "viewer.js", path
        assert "\u2028" not in text
        assert "\u2029" not in text
    assert "innerHTML" not in (tmp_path / "v" / "viewer.js").read_text(encoding="utf-8")
    (detail,) = _load(tmp_path / "v" / "data" / "run0" / "chunk-0.js")
    assert detail["messages"][0]["content"] == HOSTILE  # the text survives, as text
    assert detail["checks"][0]["evidence"][0]["quote_location"] == {
        "message_index": 1,
        "start": 6,
        "end": 6 + len(HOSTILE.strip()),
    }
    html = (tmp_path / "v" / "index.html").read_text(encoding="utf-8")
    assert "default-src 'none'; script-src 'self'; style-src 'self'" in html
    assert "alert" not in html


def test_js_assign_escapes_script_ends_and_line_separators() -> None:
    text = js_assign("window.X = ", {"t": "</script>\u2028"})
    assert text == 'window.X = {"t":"\\u003c/script>\\u2028"};\n'
    assert json.loads(text.removeprefix("window.X = ").removesuffix(";\n")) == {"t": "</script>\u2028"}


# --------------------------------------------------------------------------- transcripts, cost


def test_a_missing_transcript_file_makes_the_trial_say_why(tmp_path: Path) -> None:
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, MESSAGES, (RULE,))])
    (tmp_path / "transcripts.jsonl").unlink()
    build = write_viewer([read_results(results)], tmp_path / "v")
    (detail,) = _load(tmp_path / "v" / "data" / "run0" / "chunk-0.js")
    assert detail["messages"] is None
    assert detail["transcript_unavailable"] == (
        "transcript file transcripts.jsonl not found (moved or deleted since grading)"
    )
    assert build.runs[0]["transcripts_unavailable"] == 1
    assert detail["checks"][0]["evidence"][0]["call_index"] == 1  # the evidence is still shown


def test_a_transcript_changed_since_grading_is_shown_with_a_warning(tmp_path: Path) -> None:
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, MESSAGES, (RULE,))])
    path = tmp_path / "transcripts.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("both charges", "one charge"), encoding="utf-8")
    run = read_results(results)
    (lookup,) = read_transcripts_for(run.lines, tmp_path).values()
    assert lookup.messages is not None
    assert lookup.warning is not None
    assert "changed since it was graded (sha256 differs)" in lookup.warning
    detail = trial_detail(run.lines[0], lookup)
    assert detail["highlight"] == {"messages": [3], "calls": [1]}  # call 1 mapped to the message holding it


def test_an_unpriced_trial_shows_unknown_with_the_reason_never_zero(tmp_path: Path) -> None:
    unpriced = _line(tmp_path, "c-1", 1, MESSAGES, (RULE,), cost_unknown_reason="model x has no price")
    unrecorded = _line(tmp_path, "c-2", 1, MESSAGES, (RULE,))
    priced = _line(tmp_path, "c-3", 1, MESSAGES, (RULE,), cost_usd=0.0125)
    assert trial_row(unpriced, 0)[6:8] == [None, "model x has no price"]
    assert trial_row(unrecorded, 0)[6:8] == [None, "no cost recorded in the result line"]
    assert trial_row(priced, 0)[6:8] == [0.0125, None]


def test_trial_trust_is_untrusted_when_any_judged_check_is(tmp_path: Path) -> None:
    untrusted = CheckResult(
        check_id="criterion:y",
        layer="rubric",
        verdict=Verdict.PASS,
        trust=Trust.UNTRUSTED,
        trust_reason="no record",
    )
    line = _line(tmp_path, "c-1", 1, MESSAGES, (RULE, untrusted))
    assert trial_row(line, 0)[5] == "untrusted"


# --------------------------------------------------------------------------- the command


def test_view_writes_the_folder_and_prints_a_json_document(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "v"
    args = ["view", str(demo / "agent-v1.jsonl"), str(demo / "agent-v2.jsonl"), "--out", str(out)]
    assert main([*args, "--cases", str(AIRDESK), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["schema_version"], document["kind"]) == (1, "viewer")
    assert document["index"] == str(out / "index.html")
    assert document["comparison"] is True
    assert [r["trials"] for r in document["runs"]] == [104, 104]
    assert document["files"] == len([p for p in out.rglob("*") if p.is_file()])
    assert (out / MARKER).is_file()
    # an earlier viewer is replaced, stale chunks included
    (out / "data" / "run1" / "chunk-99.js").write_text("stale", encoding="utf-8")
    assert main(["view", str(demo / "agent-v1.jsonl"), "--out", str(out)]) == 0
    assert "wrote a viewer of 104 trial(s) in 1 run(s) -> " in capsys.readouterr().out
    assert not (out / "data" / "run1").exists()


def _error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_error_missing_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(capsys, ["view", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "v")])
    assert "nope.jsonl' does not exist" in err
    assert not (tmp_path / "v").exists()


def test_error_unreadable_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "a-folder.jsonl"
    folder.mkdir()
    err = _error(capsys, ["view", str(folder), "--out", str(tmp_path / "v")])
    # refused as unreadable, or (issue 33 F13, inputs checked before reading) as not a regular file
    assert f"error: {folder}: cannot read results: Is a directory" in err or (
        f"error: {folder}: is a folder, not a regular file" in err
    )


def test_error_results_without_a_trial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    err = _error(capsys, ["view", str(empty), "--out", str(tmp_path / "v")])
    assert f"error: {empty}: no trial to show (no valid result line)" in err


def test_error_more_than_two_results(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = str(demo / "agent-v1.jsonl")
    err = _error(capsys, ["view", v1, v1, v1, "--out", str(tmp_path / "v")])
    assert "error: judgekit view takes one results file, or two to compare side by side (got 3)" in err


def test_error_neither_out_nor_serve(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(capsys, ["view", str(demo / "agent-v1.jsonl")])
    assert "error: give --out FOLDER to write the viewer, or --serve to serve it" in err


def test_error_out_is_a_folder_of_other_files(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    err = _error(capsys, ["view", str(demo / "agent-v1.jsonl"), "--out", str(out)])
    assert "is not a viewer judgekit view wrote; nothing was written, so nothing already there is lost" in err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_error_out_is_a_file(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "file"
    out.write_text("x", encoding="utf-8")
    err = _error(capsys, ["view", str(demo / "agent-v1.jsonl"), "--out", str(out)])
    assert f"error: --out {out}: is a file, not a folder" in err


def test_error_port_out_of_range(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(capsys, ["view", str(demo / "agent-v1.jsonl"), "--serve", "--port", "70000"])
    assert "error: --port must be between 0 and 65535 (got 70000)" in err


def test_error_runs_on_different_case_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.jsonl", [_line(tmp_path, "c-1", 1, MESSAGES, (RULE,))])
    line = _line(tmp_path, "c-1", 1, MESSAGES, (RULE,))
    b = _write(tmp_path / "b.jsonl", [line.model_copy(update={"case": CaseRef(id="c-1", version=2)})])
    err = _error(capsys, ["view", str(a), str(b), "--out", str(tmp_path / "v")])
    assert "cannot compare a.jsonl with b.jsonl: they were graded on different case versions" in err
    assert "case 'c-1': version 1 in a.jsonl, version 2 in b.jsonl" in err


def test_problems_in_a_results_file_are_warned_and_exit_2_with_the_viewer_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, MESSAGES, (RULE,))])
    with results.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    err = _error(capsys, ["view", str(results), "--out", str(tmp_path / "v")])
    assert f"warning: {results}:2" in err
    data = _load(tmp_path / "v" / "data" / "index.js")
    assert data["runs"][0]["problems"]
    assert len(data["runs"][0]["rows"]) == 1


def test_a_missing_transcript_is_a_warning_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, MESSAGES, (RULE,))])
    (tmp_path / "transcripts.jsonl").unlink()
    assert main(["view", str(results), "--out", str(tmp_path / "v")]) == 0
    assert "warning: 1 trial(s) without a transcript: transcript file" in capsys.readouterr().err


def test_serve_listens_on_loopback_only(demo: Path, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            *INTERRUPTIBLE_CLI_CHILD,
            "view",
            str(demo / "agent-v1.jsonl"),
            "--serve",
            "--out",
            str(tmp_path / "v"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()  # wrote a viewer ...
        served = process.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:(\d+)/index\.html)", served)
        assert match, served
        with urllib.request.urlopen(match.group(1), timeout=10) as response:
            assert b"Content-Security-Policy" in response.read()
        with urllib.request.urlopen(
            match.group(1).replace("index.html", "data/index.js"), timeout=10
        ) as response:
            assert response.read().startswith(b"window.JK_DATA = ")
        process.send_signal(signal.SIGINT)  # Ctrl-C stops the server: exit 0
        assert process.wait(timeout=10) == 0
        assert process.stderr is not None
        assert "stopped" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def test_the_viewer_refuses_more_than_two_runs(demo: Path, tmp_path: Path) -> None:
    run = read_results(demo / "agent-v1.jsonl")
    with pytest.raises(JudgekitError, match=r"shows one run, or two side by side; got 3 results files"):
        write_viewer([run, run, run], tmp_path / "v")


def test_error_serve_port_in_use(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        args = [
            "view",
            str(demo / "agent-v1.jsonl"),
            "--serve",
            "--port",
            str(port),
            "--out",
            str(tmp_path / "v"),
        ]
        err = _error(capsys, args)
    assert f"error: --port {port}: cannot listen on 127.0.0.1:{port}:" in err
    assert "pick another port or 0" in err


def test_a_shortened_transcript_file_names_the_missing_line(tmp_path: Path) -> None:
    first = _line(tmp_path, "c-1", 1, MESSAGES, (RULE,))
    second = _line(tmp_path, "c-2", 1, MESSAGES, (RULE,))
    path = tmp_path / "transcripts.jsonl"
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    lookups = read_transcripts_for([first, second], tmp_path)
    assert lookups[0].messages is not None
    assert lookups[1].unavailable == "transcripts.jsonl has no line 2 (the file was shortened)"


def test_transcript_lines_read_again_are_the_lines_and_skip_the_read_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a line seen before is read again where it is (pread), not through a refilled 256 KiB buffer
    from judgekit.api import viewer
    from judgekit.io import documents, filekind

    monkeypatch.setattr(documents, "MAX_LINE_BYTES", 10)
    monkeypatch.setattr(filekind, "READ_BUFFER_BYTES", 8)  # the file is longer than the buffer
    lines = [b"one\n", b"x" * 11 + b"\n", b"0123456789\n", b"two\n", b"x" * 11]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    wanted: list[tuple[bool, bytes | None]] = [
        (True, b"one\n"),
        (True, None),  # 12 bytes: too long
        (True, b"0123456789\n"),  # the longest line kept: 10 bytes and its line break
        (True, b"two\n"),
        (True, None),  # 11 bytes without a line break at the end: too long
    ]
    transcripts = viewer._TranscriptFile(str(path), tmp_path)
    try:
        assert [transcripts.line(n) for n in range(1, 6)] == wanted
        assert transcripts.line(6) == (False, None)
        assert transcripts.handle is not None
        position = transcripts.handle.raw.tell()  # type: ignore[attr-defined]
        assert [transcripts.line(n) for n in range(5, 0, -1)] == wanted[::-1]
        assert transcripts.handle.raw.tell() == position  # type: ignore[attr-defined]
    finally:
        transcripts.close()


def test_a_result_line_without_a_source_has_no_transcript(tmp_path: Path) -> None:
    line = _line(tmp_path, "c-1", 1, MESSAGES, (RULE,)).model_copy(update={"source": None})
    (lookup,) = read_transcripts_for([line], tmp_path).values()
    assert lookup.unavailable == "the result line names no transcript source"


def test_a_line_that_is_no_transcript_says_why(tmp_path: Path) -> None:
    line = _line(tmp_path, "c-1", 1, MESSAGES, (RULE,))
    (tmp_path / "transcripts.jsonl").write_text('{"trial": 1}\n', encoding="utf-8")
    (lookup,) = read_transcripts_for([line], tmp_path).values()
    assert lookup.unavailable is not None
    assert lookup.unavailable.startswith("transcripts.jsonl:1: not a transcript: ")


def test_a_cascade_route_is_shown_as_the_route_taken(tmp_path: Path) -> None:
    route = {"decided_by": 2, "tried": [{"stage": 1, "confidence": 0.4}, {"stage": 2, "confidence": 0.9}]}
    check = CheckResult(
        check_id="criterion:x",
        layer="rubric",
        verdict=Verdict.FAIL,
        reason="judged",
        evidence=(Evidence(kind="note", summary="cascade: decided by stage 2", data={"cascade": route}),),
    )
    line = _line(tmp_path, "c-1", 1, MESSAGES, (check,))
    (lookup,) = read_transcripts_for([line], tmp_path).values()
    (evidence,) = trial_detail(line, lookup)["checks"][0]["evidence"]
    assert json.loads(evidence["route"]) == route
    assert evidence["line"] == "cascade: decided by stage 2"


def test_a_text_checks_highlighted_quote_starts_and_ends_between_words(tmp_path: Path) -> None:
    # issue 35: a highlighted quote in the viewer was cut mid-word (the text check's excerpt was)
    from graders._build import make_case, make_transcript
    from judgekit.graders.text import check_text

    reply = (
        "Thank you for waiting so patiently. For a lost card please call our fraud line straight away, "
        "and we will block the card and send a replacement to your registered address."
    )
    messages = [{"role": "user", "content": "I lost my card"}, {"role": "assistant", "content": reply}]
    case = make_case(id="c-1", expected={"must_not_mention": ["fraud"]})
    checks = tuple(check_text(case, make_transcript(case_id="c-1", messages=messages)))
    results = _write(tmp_path / "r.jsonl", [_line(tmp_path, "c-1", 1, messages, checks)])
    write_viewer([read_results(results)], tmp_path / "v")
    (detail,) = _load(tmp_path / "v" / "data" / "run0" / "chunk-0.js")
    (evidence,) = detail["checks"][0]["evidence"]
    where = evidence["quote_location"]
    assert where["message_index"] == 1
    marked = reply[where["start"] : where["end"]]
    assert marked == "For a lost card please call our fraud line straight away, and we will block"
    assert reply[where["start"] - 1] == " "
    assert reply[where["end"]] == " "


# --------------------------------------------------------------------------- never-labelled criteria


def test_the_run_summary_says_the_verdicts_on_never_labelled_criteria_as_the_reports_do(
    tmp_path: Path,
) -> None:
    from judgekit.reports.run_markdown import unlabelled_text

    def judged(case: str, labelled: bool | None) -> Any:
        note = {"fingerprint": "fp-judge", "criterion_labelled": labelled}
        check = CheckResult(
            check_id="criterion:goal",
            layer="rubric",
            verdict=Verdict.PASS,
            reason="",
            evidence=(Evidence(kind="note", summary="judge", data=note),),
        )
        fingerprint = {"hex": "fp-judge"}
        return _line(
            tmp_path, case, 1, MESSAGES, (check,), verdict=Verdict.PASS, judge_fingerprint=fingerprint
        )

    results = _write(
        tmp_path / "judged.jsonl", [judged("c1", False), judged("c2", False), judged("c3", True)]
    )
    write_viewer([read_results(results)], tmp_path / "v")
    (run,) = _load(tmp_path / "v" / "data" / "index.js")["runs"]
    assert run["unlabelled"] == unlabelled_text(2, 2, judged=True)
    assert (
        run["unlabelled"]
        == "Judge verdicts on criterion texts never labelled in calibration: 2 in 2 trial(s)"
    )

    plain = _write(tmp_path / "plain.jsonl", [_line(tmp_path, "c1", 1, MESSAGES, (RULE,))])
    write_viewer([read_results(plain)], tmp_path / "w")
    (run,) = _load(tmp_path / "w" / "data" / "index.js")["runs"]
    assert run["unlabelled"] is None  # no judge layer: nothing to say

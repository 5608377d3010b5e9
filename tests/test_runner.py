"""The runner: planning, output preparation and resume, concurrent grading with one line per trial."""

import asyncio
import json
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.errors import JudgekitError
from judgekit.graders.contract import GraderSpec
from judgekit.results import read_results
from judgekit.runner import plan_trials, prepare_output, run_trials
from judgekit.verdict import CheckResult, Grade, Verdict


def _case_set(tmp_path: Path, ids=("c1", "c2", "c3"), version=1):
    root = tmp_path / "set"
    (root / "candidates").mkdir(parents=True, exist_ok=True)
    for cid in ids:
        (root / f"{cid}.yaml").write_text(f"id: {cid}\nversion: {version}\nslice: s\ninput: hello {cid}\n")
    (root / "candidates" / "cand.yaml").write_text("id: cand\ninput: hi\nacceptance: 'REVIEW: later'\n")
    case_set = load_case_set(root)
    assert case_set.valid, case_set.problems
    return case_set


def _transcripts(tmp_path: Path, rows, name="t.jsonl"):
    path = tmp_path / name
    path.write_text(
        "".join(
            (
                row
                if isinstance(row, str)
                else json.dumps({"case_id": row[0], "trial": row[1], "messages": []})
            )
            + "\n"
            for row in rows
        )
    )
    return path


class ScriptedGrader:
    """Passes odd trials, fails even ones; can raise, and records the most trials in flight."""

    def __init__(self, *, delay=0.0, raise_for=(), fingerprint=None):
        self.delay = delay
        self.raise_for = set(raise_for)
        self.in_flight = 0
        self.max_in_flight = 0
        self.graded: list[tuple[str, int]] = []
        self._fp = fingerprint

    @property
    def spec(self):
        parts = () if self._fp is None else (GraderSpec(name="rubric", args=dict(self._fp)),)
        return GraderSpec(name="scripted", parts=parts)

    async def grade(self, case, transcript):
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            key = (transcript.case_id, transcript.trial)
            if key in self.raise_for:
                raise RuntimeError("judge exploded")
            self.graded.append(key)
            verdict = Verdict.PASS if transcript.trial % 2 else Verdict.FAIL
            check = CheckResult(
                check_id="state",
                layer="state",
                verdict=verdict,
                reason="" if verdict is Verdict.PASS else "x",
            )
            return Grade(
                case_id=case.id,
                trial=transcript.trial,
                verdict=verdict,
                checks=(check,),
                metadata={"cost_usd": 0.01},
            )
        finally:
            self.in_flight -= 1


class Recorder:
    def __init__(self):
        self.events = []

    def start(self, total, already_done):
        self.events.append(("start", total, already_done))

    def advance(self, line, cost):
        self.events.append(("advance", line.case.id, line.trial))

    def finish(self):
        self.events.append(("finish",))


def test_plan_locates_every_bad_line_and_keeps_the_rest(tmp_path):
    case_set = _case_set(tmp_path)
    path = _transcripts(
        tmp_path,
        [
            ("c1", 1),
            "{oops",
            ("zz", 1),
            ("cand", 1),
            ("c1", 1),
            json.dumps({"case_id": "c2", "trial": 0}),
            ("c2", 2),
        ],
    )
    plan = plan_trials(case_set, [path])
    assert [t.key for t in plan.trials] == [("c1", 1), ("c2", 2)]
    problems = {p.line: p.message for p in plan.problems}
    assert "malformed JSON" in problems[2]
    assert "case 'zz' is not in the case set" in problems[3]
    assert "case 'cand' is a candidate" in problems[4]
    assert "already read at" in problems[5]
    assert "greater than or equal to 1" in problems[6]
    assert plan.trials[0].source.line == 1
    assert len(plan.trials[0].source.sha256) == 64


def test_run_writes_one_line_per_trial_concurrently(tmp_path):
    case_set = _case_set(tmp_path)
    rows = [(c, t) for c in ("c1", "c2", "c3") for t in range(1, 5)]
    plan = plan_trials(case_set, [_transcripts(tmp_path, rows)])
    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    grader = ScriptedGrader(delay=0.02)
    rec = Recorder()
    summary = asyncio.run(run_trials(plan, grader, out=out, state=state, concurrency=4, progress=rec))
    assert summary.graded == 12
    assert summary.verdicts[Verdict.PASS] == 6
    assert grader.max_in_flight == 4
    results = read_results(out)
    assert results.problems == []
    assert sorted(line.key for line in results.lines) == sorted(rows)
    assert {line.run_id for line in results.lines} == {state.run_id}
    assert rec.events[0] == ("start", 12, 0)
    assert rec.events[-1] == ("finish",)
    assert sum(e[0] == "advance" for e in rec.events) == 12
    assert all(line.cost_usd == 0.01 for line in results.lines)


def test_grader_exception_becomes_error_verdict_and_run_goes_on(tmp_path):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1), ("c1", 2), ("c2", 1)])])
    out = tmp_path / "r.jsonl"
    grader = ScriptedGrader(raise_for={("c1", 2)})
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    summary = asyncio.run(run_trials(plan, grader, out=out, state=state))
    assert summary.grader_errors == 1
    lines = {line.key: line for line in read_results(out).lines}
    assert lines[("c1", 2)].verdict is Verdict.ERROR
    assert "RuntimeError: judge exploded" in lines[("c1", 2)].checks[0].reason
    assert lines[("c2", 1)].verdict is Verdict.PASS


def test_existing_results_need_resume(tmp_path):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1)])])
    out = tmp_path / "r.jsonl"
    asyncio.run(
        run_trials(
            plan,
            ScriptedGrader(),
            out=out,
            state=prepare_output(out, plan, resume=False, judge_fingerprint=None),
        )
    )
    with pytest.raises(JudgekitError, match="already holds results; pass --resume"):
        prepare_output(out, plan, resume=False, judge_fingerprint=None)
    with pytest.raises(JudgekitError, match="does not exist"):
        prepare_output(tmp_path / "no" / "r.jsonl", plan, resume=False, judge_fingerprint=None)


def test_resume_after_cancellation_grades_only_missing_trials(tmp_path):
    case_set = _case_set(tmp_path)
    rows = [(c, t) for c in ("c1", "c2", "c3") for t in range(1, 9)]
    plan = plan_trials(case_set, [_transcripts(tmp_path, rows)])
    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    grader = ScriptedGrader(delay=0.01)

    async def interrupted():
        task = asyncio.create_task(run_trials(plan, grader, out=out, state=state, concurrency=3))
        while len(grader.graded) < 7:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    first = read_results(out)
    done_before = {line.key for line in first.lines}
    assert 7 <= len(done_before) < len(rows)
    # simulate a kill in the middle of writing a line
    with out.open("ab") as handle:
        handle.write(b'{"schema_version": 1, "run_id": "x", "case": {"id": "c3"')
    state2 = prepare_output(out, plan, resume=True, judge_fingerprint=None)
    assert state2.dropped_line == len(done_before) + 1
    assert state2.run_id == state.run_id
    grader2 = ScriptedGrader()
    summary = asyncio.run(run_trials(plan, grader2, out=out, state=state2, concurrency=3))
    assert set(grader2.graded).isdisjoint(done_before)
    assert summary.skipped_done == len(done_before)
    final = read_results(out)
    assert final.problems == []
    assert sorted(line.key for line in final.lines) == sorted(rows)
    assert len(final.lines) == len(rows)


def test_resume_refuses_a_differently_graded_file(tmp_path):
    case_set = _case_set(tmp_path)
    path = _transcripts(tmp_path, [("c1", 1), ("c2", 1)])
    plan = plan_trials(case_set, [path])
    out = tmp_path / "r.jsonl"
    asyncio.run(
        run_trials(
            plan,
            ScriptedGrader(fingerprint={"hex": "aaa"}),
            out=out,
            state=prepare_output(out, plan, resume=False, judge_fingerprint={"hex": "aaa"}),
        )
    )
    with pytest.raises(JudgekitError, match="graded by another judge fingerprint"):
        prepare_output(out, plan, resume=True, judge_fingerprint={"hex": "bbb"})
    # a case whose version changed
    plan_v2 = plan_trials(_case_set(tmp_path / "v2", version=2), [path])
    with pytest.raises(JudgekitError, match="graded at version 1, the set now has version 2"):
        prepare_output(out, plan_v2, resume=True, judge_fingerprint={"hex": "aaa"})
    # a transcript that changed
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        json.dumps({"case_id": "c1", "trial": 1, "messages": [{"role": "user", "content": "new"}]}) + "\n"
    )
    plan_changed = plan_trials(case_set, [changed])
    with pytest.raises(JudgekitError, match="the transcript changed since it was graded"):
        prepare_output(out, plan_changed, resume=True, judge_fingerprint={"hex": "aaa"})


def test_resume_refuses_unreadable_lines(tmp_path):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1)])])
    out = tmp_path / "r.jsonl"
    out.write_text(json.dumps({"schema_version": 7, "x": 1}) + "\n")
    with pytest.raises(JudgekitError, match=r"(?s)cannot resume .*have schema version 7"):
        prepare_output(out, plan, resume=True, judge_fingerprint=None)


def test_concurrency_must_be_positive(tmp_path):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1)])])
    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    with pytest.raises(JudgekitError, match="--concurrency must be at least 1"):
        asyncio.run(run_trials(plan, ScriptedGrader(), out=out, state=state, concurrency=0))


def test_an_output_file_and_root_named_as_text(tmp_path):
    from judgekit.runner import LayeredTrialGrader

    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1), ("c2", 1)])])
    out = tmp_path / "r.jsonl"
    state = prepare_output(str(out), plan, resume=False, judge_fingerprint=None)
    grader = LayeredTrialGrader(str(case_set.root), None)
    summary = asyncio.run(run_trials(plan, grader, out=str(out), state=state))
    assert summary.graded == 2
    assert len(read_results(out).lines) == 2

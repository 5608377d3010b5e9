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


def _cancel_after(plan, grader, out: Path, state, *, concurrency: int, graded: int, poll: float) -> None:
    """Run the trials into ``out`` and cancel the run (as Ctrl-C does) once ``grader`` has graded ``graded``.

    Asserts that the run ends in ``CancelledError``; ``poll`` is how often (seconds) the count is looked at.
    """

    async def interrupted():
        task = asyncio.create_task(run_trials(plan, grader, out=out, state=state, concurrency=concurrency))
        while len(grader.graded) < graded:
            await asyncio.sleep(poll)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())


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
    # issue 35: a results file in a folder not made yet is fine; the folder is made before grading
    prepare_output(tmp_path / "no" / "r.jsonl", plan, resume=False, judge_fingerprint=None)
    assert (tmp_path / "no").is_dir()


def test_resume_after_cancellation_grades_only_missing_trials(tmp_path):
    case_set = _case_set(tmp_path)
    rows = [(c, t) for c in ("c1", "c2", "c3") for t in range(1, 9)]
    plan = plan_trials(case_set, [_transcripts(tmp_path, rows)])
    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    grader = ScriptedGrader(delay=0.01)

    _cancel_after(plan, grader, out, state, concurrency=3, graded=7, poll=0.005)
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
    # named by the short fingerprint judgekit prints everywhere, not by a digest of the record
    with pytest.raises(
        JudgekitError, match=r"graded by another judge fingerprint \(judge aaa vs judge bbb now\)"
    ):
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


# --------------------------------------------------------------------------- --resume --retry-errors


class OutageGrader:
    """Grades each trial as scripted: ``outcomes[key]`` is ``(case verdict, verdicts of its checks)``.

    A ``"raise"`` outcome makes the grader raise (the runner's own ``error`` line); a trial not scripted
    passes with one passing state check.
    """

    def __init__(self, outcomes=None, *, delay=0.0):
        self.outcomes = dict(outcomes or {})
        self.delay = delay
        self.graded: list[tuple[str, int]] = []

    @property
    def spec(self):
        return GraderSpec(name="scripted")

    async def grade(self, case, transcript):
        await asyncio.sleep(self.delay)
        key = (transcript.case_id, transcript.trial)
        self.graded.append(key)
        outcome = self.outcomes.get(key, (Verdict.PASS, (Verdict.PASS,)))
        if outcome == "raise":
            raise RuntimeError("provider down")
        verdict, check_verdicts = outcome
        checks = tuple(
            CheckResult(
                check_id=f"k{i}",
                layer="state" if i == 0 else "rubric",
                verdict=v,
                reason="" if v is Verdict.PASS else "scripted",
            )
            for i, v in enumerate(check_verdicts)
        )
        return Grade(case_id=case.id, trial=transcript.trial, verdict=verdict, checks=checks)


E, P, F, II = Verdict.ERROR, Verdict.PASS, Verdict.FAIL, Verdict.INSUFFICIENT_INFORMATION
OUTAGE = {
    ("c1", 1): "raise",  # the grader raised: the case verdict is error
    ("c1", 2): (II, (P, E)),  # a judge criterion could not run: undecided, not error
    ("c2", 1): (F, (F, E)),  # a gate failed, and the judge criterion could not run
    ("c2", 2): (II, (P, II)),  # the judge said the evidence does not decide: an answer, not an error
    ("c3", 1): (Verdict.NOT_EVALUATED, (Verdict.NOT_EVALUATED,)),
}
ERRORED = {("c1", 1), ("c1", 2), ("c2", 1)}


def _outage_run(tmp_path, rows=(("c1", 1), ("c1", 2), ("c2", 1), ("c2", 2), ("c3", 1), ("c3", 2))):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, list(rows))])
    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    asyncio.run(run_trials(plan, OutageGrader(OUTAGE), out=out, state=state))
    return plan, out, state


def test_retry_errors_picks_every_line_with_an_error_verdict_or_check(tmp_path):
    plan, out, _ = _outage_run(tmp_path)
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    assert state.retry == ERRORED
    assert state.done == {t.key for t in plan.trials} - ERRORED
    # without --retry-errors nothing is left to grade, as before
    plain = prepare_output(out, plan, resume=True, judge_fingerprint=None)
    assert plain.retry == set()
    assert plain.done == {t.key for t in plan.trials}


def test_retry_errors_regrades_them_and_leaves_one_line_per_trial(tmp_path):
    plan, out, first = _outage_run(tmp_path)
    kept = [raw for raw in out.read_bytes().splitlines(keepends=True) if not _has_error(raw)]
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    grader = OutageGrader()  # the provider is back: every trial passes
    summary = asyncio.run(run_trials(plan, grader, out=out, state=state))
    assert sorted(grader.graded) == sorted(ERRORED)
    assert summary.retried == len(ERRORED)
    assert summary.skipped_done == len(plan.trials) - len(ERRORED)
    results = read_results(out)
    assert results.problems == []  # no duplicate: the error lines were replaced, not shadowed
    assert sorted(line.key for line in results.lines) == sorted(t.key for t in plan.trials)
    assert {line.run_id for line in results.lines} == {first.run_id}
    assert all(results.lines[i].verdict is P for i in range(len(kept), len(results.lines)))
    # the other lines are kept byte for byte, in their order, and the retried lines follow them
    assert out.read_bytes().splitlines(keepends=True)[: len(kept)] == kept
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.jsonl")]  # no temporary left
    # nothing left to retry
    again = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    assert again.retry == set()


def _has_error(raw: bytes) -> bool:
    data = json.loads(raw)
    return data["verdict"] == "error" or any(c["verdict"] == "error" for c in data["checks"])


def test_a_retry_that_errors_again_still_leaves_one_line(tmp_path):
    plan, out, _ = _outage_run(tmp_path)
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    asyncio.run(run_trials(plan, OutageGrader(OUTAGE), out=out, state=state))  # still down
    results = read_results(out)
    assert results.problems == []
    assert len(results.lines) == len(plan.trials)
    assert {line.key for line in results.lines if _has_error(line.model_dump_json().encode())} == ERRORED


def test_retry_errors_keeps_error_lines_of_trials_not_in_this_run(tmp_path):
    _, out, _ = _outage_run(tmp_path)
    case_set = _case_set(tmp_path)
    # this run's transcripts hold only c1's trials: c2 trial 1's error line cannot be re-graded
    partial = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1), ("c1", 2)], name="c1.jsonl")])
    # (the transcripts are the same lines, so their hashes match the recorded ones)
    state = prepare_output(out, partial, resume=True, judge_fingerprint=None, retry_errors=True)
    assert state.retry == {("c1", 1), ("c1", 2)}
    assert state.errors_not_planned == 1
    asyncio.run(run_trials(partial, OutageGrader(), out=out, state=state))
    lines = {line.key: line for line in read_results(out).lines}
    assert lines[("c2", 1)].verdict is F  # kept as it was
    assert lines[("c1", 1)].verdict is P
    assert len(lines) == 6


def test_retry_errors_with_the_file_locked_by_another_writer_changes_nothing(tmp_path):
    from judgekit.io.atomic import LineAppender

    plan, out, _ = _outage_run(tmp_path)
    before = out.read_bytes()
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    grader = OutageGrader()
    with LineAppender(out), pytest.raises(JudgekitError, match="another process is writing this file"):
        asyncio.run(run_trials(plan, grader, out=out, state=state))
    assert out.read_bytes() == before
    assert grader.graded == []
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.jsonl")]


def test_retry_errors_writes_through_a_symlink(tmp_path):
    plan, out, _ = _outage_run(tmp_path)
    real = tmp_path / "real.jsonl"
    out.rename(real)
    out.symlink_to(real)
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    asyncio.run(run_trials(plan, OutageGrader(), out=out, state=state))
    assert out.is_symlink()
    assert read_results(real).problems == []
    assert {line.verdict for line in read_results(real).lines} <= {P, II, Verdict.NOT_EVALUATED}


def test_killed_after_the_error_lines_were_dropped_the_next_resume_grades_them(tmp_path):
    """A kill after the rewrite and before the retried lines are appended leaves those trials without a
    line: an ordinary interrupted run, which the next --resume (with or without --retry-errors) completes."""
    plan, out, _ = _outage_run(tmp_path)
    state = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    grader = OutageGrader(delay=0.01)

    _cancel_after(plan, grader, out, state, concurrency=1, graded=2, poll=0.002)
    middle = read_results(out)
    assert middle.problems == []
    assert len(middle.lines) < len(plan.trials)  # the dropped error lines are not all back yet
    state2 = prepare_output(out, plan, resume=True, judge_fingerprint=None, retry_errors=True)
    assert state2.retry == set()
    asyncio.run(run_trials(plan, OutageGrader(), out=out, state=state2))
    final = read_results(out)
    assert final.problems == []
    assert sorted(line.key for line in final.lines) == sorted(t.key for t in plan.trials)
    assert not any(_has_error(line.model_dump_json().encode()) for line in final.lines)


def test_an_existing_folder_as_output_is_named_as_a_folder(tmp_path):
    case_set = _case_set(tmp_path)
    plan = plan_trials(case_set, [_transcripts(tmp_path, [("c1", 1)])])
    folder = tmp_path / "results"
    folder.mkdir()
    for resume in (False, True):
        with pytest.raises(JudgekitError) as caught:
            prepare_output(folder, plan, resume=resume, judge_fingerprint=None)
        assert caught.value.exit_code == 2
        assert str(caught.value) == (
            f"--out {folder} is a folder; --out takes the results file to write (JSONL), for example "
            f"--out {folder / 'results.jsonl'}"
        )


def test_retry_errors_without_resume_is_refused_by_the_library_too(tmp_path):
    """The command line and the Python API share one check: no silent ignore of retry_errors."""
    plan, out, _ = _outage_run(tmp_path)
    with pytest.raises(JudgekitError, match="--retry-errors re-grades the trials") as info:
        prepare_output(out, plan, resume=False, judge_fingerprint=None, retry_errors=True)
    assert info.value.exit_code == 2

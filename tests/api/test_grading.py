"""Grading one trial through the front door: the same grade as ``judgekit grade``, sync and async."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import judgekit
from judgekit.advice import advice_for
from judgekit.cli import main
from judgekit.errors import JudgekitError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "airdesk"
RUN = EXAMPLE / "runs" / "agent-v1.jsonl"


def test_each_trial_gets_the_verdict_and_reason_judgekit_grade_writes(tmp_path: Path) -> None:
    out = tmp_path / "v1.jsonl"
    assert main(["-q", "grade", "--cases", str(EXAMPLE), "--transcripts", str(RUN), "--out", str(out)]) == 0
    written = {line.key: line for line in judgekit.read_results(out)}
    cases = judgekit.load_cases(EXAMPLE)
    grader = judgekit.make_grader(root=cases.root, transcript_dir=RUN.parent)
    transcripts = judgekit.read_transcripts(RUN)
    assert len(transcripts) == len(written) == 104
    for transcript in transcripts:
        with advice_for("cli"):  # the written reasons advise judgekit grade's flags; the rule is the same
            grade = judgekit.grade(cases[transcript.case_id].case, transcript, grader=grader)
        line = written[(transcript.case_id, transcript.trial)]
        assert (grade.verdict, grade.why()) == (line.verdict, line.as_grade().why())
        assert grade.explain() == line.explain()


def test_without_a_grader_the_deterministic_layers_grade_over_root_and_transcript_dir() -> None:
    cases = judgekit.load_cases(EXAMPLE)
    transcript = judgekit.read_transcripts(RUN)[0]
    case = cases[transcript.case_id].case
    built = judgekit.grade(case, transcript, root=cases.root, transcript_dir=RUN.parent)
    assert built == judgekit.grade(
        case, transcript, grader=judgekit.make_grader(root=cases.root, transcript_dir=RUN.parent)
    )
    missing = judgekit.grade(case, transcript, root=cases.root)  # relative state paths have no folder
    assert any(c.verdict is judgekit.Verdict.ERROR for c in missing.checks)
    assert judgekit.make_grader().judge_fingerprint is None


def test_grade_async_is_grade_for_code_inside_an_event_loop() -> None:
    cases = judgekit.load_cases(EXAMPLE)
    transcript = judgekit.read_transcripts(RUN)[0]
    case = cases[transcript.case_id].case
    kwargs = {"root": cases.root, "transcript_dir": RUN.parent}

    async def inside() -> judgekit.Grade:
        with pytest.raises(
            JudgekitError, match=r"inside a running event loop; use 'await judgekit.grade_async"
        ):
            judgekit.grade(case, transcript, **kwargs)
        return await judgekit.grade_async(case, transcript, **kwargs)

    assert asyncio.run(inside()) == judgekit.grade(case, transcript, **kwargs)


def test_a_judge_config_builds_the_judge_whose_fingerprint_calibration_names() -> None:
    judge = judgekit.JudgeConfig.from_file(
        EXAMPLE / "judge.yaml", cassette=EXAMPLE / "cassettes" / "judge-honest-reporting.jsonl"
    )
    grader = judgekit.make_grader(root=EXAMPLE, judge=judge)
    from judgekit.demo import demo_rubric_grader
    from judgekit.judges.cache import CacheMode

    demo = demo_rubric_grader(EXAMPLE / "cassettes" / "judge-honest-reporting.jsonl", CacheMode.REPLAY)
    assert grader.judge_fingerprint == demo.fingerprint  # the demo's calibration record names this judge
    assert len(grader.judge_fingerprint or "") == 64


def test_a_judge_file_without_a_model_is_refused_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("judge:\n  rubric: honest-reporting\n", encoding="utf-8")
    with pytest.raises(
        JudgekitError, match=r"judge.yaml: no judge model: add 'judge: \{model: \.\.\.\}'"
    ) as info:
        judgekit.JudgeConfig.from_file(config)
    assert info.value.exit_code == 2

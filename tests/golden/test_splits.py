"""Holdouts: left out of routine runs, reports and exports unless named; reports say when one was used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set, select_cases
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.golden.splits import holdout_ids, split_report_lines
from judgekit.results import read_results

from .conftest import write


@pytest.fixture
def split_set(small_set: Path) -> Path:
    write(
        small_set / "cases" / "h.yaml",
        """
        id: GS-H
        split: holdout
        input: "What is my balance today?"
        expected:
          route: [{tool: LookupBalance}]
        acceptance: States the balance.
        """,
    )
    write(
        small_set / "cases" / "r.yaml",
        'id: GS-R\nsplit: regression\ninput: "Balance?"\nexpected:\n  route: [{tool: LookupBalance}]\n',
    )
    return small_set


def transcripts(tmp_path: Path) -> Path:
    lines = []
    for case_id in ("GS-1", "GS-H", "GS-R"):
        for trial in (1, 2):
            lines.append(
                json.dumps(
                    {
                        "case_id": case_id,
                        "trial": trial,
                        "messages": [
                            {"role": "user", "content": "What is my balance?"},
                            {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "id": "c1",
                                        "type": "function",
                                        "function": {"name": "LookupBalance", "arguments": "{}"},
                                    }
                                ],
                            },
                            {"role": "tool", "tool_call_id": "c1", "content": '{"balance": 12}'},
                            {"role": "assistant", "content": "Your balance is 12."},
                        ],
                    }
                )
            )
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_split_field_and_selection(split_set: Path) -> None:
    case_set = load_case_set(split_set)
    assert case_set.valid
    assert holdout_ids(case_set) == {"GS-H"}
    assert select_cases(case_set, []).left_out == ("GS-H",)
    chosen = select_cases(case_set, ["GS-H"])
    assert (chosen.named, chosen.left_out) == (("GS-H",), ())
    with pytest.raises(JudgekitError, match=r"not holdout cases \(they are graded anyway\): GS-1"):
        select_cases(case_set, ["GS-1"])
    with pytest.raises(JudgekitError, match=r"not cases of the set: nope\. The set's holdout cases: GS-H"):
        select_cases(case_set, ["nope"])
    # issue 35: a holdout name one edit away is guessed, as every unknown name is
    with pytest.raises(JudgekitError, match=r"not cases of the set: GS-X \(did you mean 'GS-H'\?\)\. The"):
        select_cases(case_set, ["GS-X"])


def test_bad_split_value_is_located(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "id: A\ninput: hi\nsplit: holdover\n")
    case_set = load_case_set(tmp_path)
    [problem] = case_set.problems
    assert problem.line == 3
    assert problem.field == "split"
    assert "'capability', 'regression' or 'holdout'" in problem.message


def test_routine_grade_and_report_leave_holdouts_out(
    split_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "routine.jsonl"
    code = main(
        [
            "grade",
            "--cases",
            str(split_set),
            "--transcripts",
            str(transcripts(tmp_path)),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    _o, err = capsys.readouterr()
    assert code == 0, err
    assert "note: left out 2 trial(s) of holdout case(s) GS-H; name one with --holdout ID to grade it" in err
    run = read_results(out)
    assert sorted({line.case.id for line in run.lines}) == ["GS-1", "GS-R"]
    assert all("holdouts" not in line.grading for line in run.lines)
    code = main(["report", str(out), "--cases", str(split_set)])
    report, _e = capsys.readouterr()
    assert code == 0
    assert "holdout" not in report.lower()


def test_named_holdout_is_graded_and_the_report_says_so(
    split_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "with-holdout.jsonl"
    args = [
        "grade",
        "--cases",
        str(split_set),
        "--transcripts",
        str(transcripts(tmp_path)),
        "--out",
        str(out),
    ]
    code = main([*args, "--no-progress", "--holdout", "GS-H"])
    assert code == 0, capsys.readouterr().err
    run = read_results(out)
    assert sorted({line.case.id for line in run.lines}) == ["GS-1", "GS-H", "GS-R"]
    assert all(line.grading["holdouts"] == ["GS-H"] for line in run.lines)
    capsys.readouterr()
    # A routine report of that run leaves the holdout out, and says so.
    assert main(["report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "holdout trials left out of this report: GS-H (2 trials); name them with --holdout" in report
    # Asked for by name, it is reported, and the report says a holdout was used.
    assert main(["report", str(out), "--holdout", "GS-H", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    notes = " ".join(data["notes"])
    assert "holdout case(s) used: GS-H" in notes
    assert main(["report", str(out), "--holdout", "GS-1"]) == 2
    assert "--holdout: GS-1: not holdout cases of this run or set" in capsys.readouterr().err


def test_split_report_lines_uses_the_set_when_lines_do_not_record_holdouts(
    split_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "all.jsonl"
    main(
        [
            "grade",
            "--cases",
            str(split_set),
            "--transcripts",
            str(transcripts(tmp_path)),
            "--out",
            str(out),
            "--no-progress",
            "--holdout",
            "GS-H",
        ]
    )
    capsys.readouterr()
    run = read_results(out)
    stripped = [line.model_copy(update={"grading": {}}) for line in run.lines]
    bare = type(run)(path=run.path, lines=stripped)
    assert split_report_lines(bare, []).left_out == {}  # nothing says GS-H is a holdout ...
    split = split_report_lines(bare, [], set_holdouts={"GS-H"})  # ... the set does
    assert split.left_out == {"GS-H": 2}
    assert {line.case.id for line in split.results.lines} == {"GS-1", "GS-R"}


def test_export_never_includes_holdouts(
    split_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["export", "cases", str(split_set), "--format", "copilot-studio", "--out", str(tmp_path / "exp")]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "left out 1 holdout case(s): GS-H" in out
    exported = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "exp").glob("*.csv"))
    assert "What is my balance today?" not in exported
    assert "What is my balance?," in exported  # the routine case is exported


def test_capability_and_regression_splits_decide_the_report_suites(
    split_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    args = [
        "grade",
        "--cases",
        str(split_set),
        "--transcripts",
        str(transcripts(tmp_path)),
        "--out",
        str(out),
    ]
    assert main([*args, "--no-progress"]) == 0
    capsys.readouterr()

    def suites(*extra: str) -> dict[str, int]:
        assert main(["report", str(out), "--format", "json", *extra]) == 0
        data = json.loads(capsys.readouterr().out)
        return {s["name"]: s["pass_at"][0]["tasks_used"] for s in data["suites"]}

    # Without the set, GS-R (slice none, no category) counts as capability; with it, its split decides.
    assert suites() == {"capability": 2}
    assert suites("--cases", str(split_set)) == {"capability": 1, "regression": 1}

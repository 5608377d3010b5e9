"""Inputs a user has in hand: several transcript files and globs, raw chat lines, str paths, the case set."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.io.paths import expand_input_paths, is_pattern
from judgekit.runner import plan_trials


def _set(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    root.mkdir()
    for cid in ("c1", "c2", "c3"):
        (root / f"{cid}.yaml").write_text(f"id: {cid}\nversion: 1\nslice: s\ninput: hello {cid}\n")
    return root


def _transcript(path: Path, *rows: tuple[str, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"case_id": c, "trial": t, "messages": []}) + "\n" for c, t in rows))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    return lines[0]


# --------------------------------------------------------------------------- the case set


def test_a_case_set_is_a_collection_of_cases_with_ids(tmp_path: Path) -> None:
    case_set = load_case_set(str(_set(tmp_path)))
    assert len(case_set) == 3
    assert [loaded.id for loaded in case_set] == ["c1", "c2", "c3"]
    assert "c2" in case_set
    assert "zz" not in case_set
    assert case_set["c2"].id == "c2"
    assert case_set["c2"].case.input == "hello c2"


def test_looking_up_an_unknown_id_names_the_known_ids(tmp_path: Path) -> None:
    case_set = load_case_set(_set(tmp_path))
    with pytest.raises(KeyError, match=r"no case 'GS-1' in the set at .*; known ids: c1, c2, c3"):
        case_set["GS-1"]
    with pytest.raises(KeyError, match=r"no case 'c11' in the set at .*; did you mean 'c1'\?; known ids: c1"):
        case_set["c11"]


# --------------------------------------------------------------------------- paths and patterns


def test_patterns_expand_in_order_and_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("runs/b.jsonl", "runs/a.jsonl", "runs/deep/c.jsonl"):
        _transcript(tmp_path / name, ("c1", 1))
    got = expand_input_paths(
        ["runs/b.jsonl", "runs/*.jsonl", Path("runs/**/*.jsonl")], what="transcript file"
    )
    assert [str(p) for p in got] == ["runs/b.jsonl", "runs/a.jsonl", "runs/deep/c.jsonl"]
    assert is_pattern("runs/*.jsonl")
    assert not is_pattern("runs/a.jsonl")


def test_an_existing_file_whose_name_looks_like_a_pattern_is_read_as_it_is(tmp_path: Path) -> None:
    odd = _transcript(tmp_path / "run[1].jsonl", ("c1", 1))
    assert expand_input_paths([odd], what="transcript file") == [odd]


def test_a_pattern_matching_nothing_is_an_input_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(
        JudgekitError, match=r"--transcripts '.*nope/\*\.jsonl': the pattern matches no transcript"
    ) as exc:
        expand_input_paths([tmp_path / "nope" / "*.jsonl"], what="transcript file", option="--transcripts")
    assert exc.value.exit_code == 2


def test_a_missing_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"missing\.jsonl: no such transcript file") as exc:
        expand_input_paths([tmp_path / "missing.jsonl"], what="transcript file")
    assert exc.value.exit_code == 2


def test_nothing_given_is_an_input_error() -> None:
    with pytest.raises(JudgekitError, match="no transcript file given") as exc:
        expand_input_paths([], what="transcript file")
    assert exc.value.exit_code == 2


def test_plan_trials_takes_a_str_a_pattern_or_several(tmp_path: Path) -> None:
    case_set = load_case_set(_set(tmp_path))
    _transcript(tmp_path / "runs" / "a.jsonl", ("c1", 1))
    _transcript(tmp_path / "runs" / "b.jsonl", ("c2", 1))
    assert len(plan_trials(case_set, str(tmp_path / "runs" / "a.jsonl")).trials) == 1
    assert len(plan_trials(case_set, str(tmp_path / "runs" / "*.jsonl")).trials) == 2
    assert (
        len(plan_trials(case_set, [tmp_path / "runs" / "a.jsonl", str(tmp_path / "runs" / "b.jsonl")]).trials)
        == 2
    )


# --------------------------------------------------------------------------- grade --transcripts


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(["--transcripts", "runs/*.jsonl"], id="quoted_glob"),
        pytest.param(["--transcripts", "runs/a.jsonl", "--transcripts", "runs/b.jsonl"], id="repeated"),
        pytest.param(["--transcripts", "runs/a.jsonl", "runs/b.jsonl"], id="shell_expanded_glob"),
    ],
)
def test_grade_reads_every_form_of_several_transcript_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _set(tmp_path)
    _transcript(tmp_path / "runs" / "a.jsonl", ("c1", 1))
    _transcript(tmp_path / "runs" / "b.jsonl", ("c2", 1), ("c3", 1))
    code, out, err = _run(capsys, "grade", "--cases", "set", *form, "--out", "r.jsonl", "--no-progress")
    assert code == 0, err
    assert "graded 3 trial(s)" in out
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 3


def test_grade_refuses_a_glob_matching_nothing_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _set(tmp_path)
    code, out, err = _run(
        capsys, "grade", "--cases", "set", "--transcripts", "runs/*.jsonl", "--out", "r.jsonl"
    )
    assert code == 2
    assert out == ""
    assert "--transcripts 'runs/*.jsonl': the pattern matches no transcript file" in _error_line(err)
    assert not (tmp_path / "r.jsonl").exists()


# --------------------------------------------------------------------------- raw chat lines


def _openai_chat(path: Path, **extra: Any) -> Path:
    line = {
        "messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
        "model": "gpt-4o",
        **extra,
    }
    path.write_text(json.dumps(line) + "\n")
    return path


def test_a_raw_openai_chat_line_is_refused_with_the_import_command_that_works(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _set(tmp_path)
    _openai_chat(tmp_path / "chat.jsonl", metadata={"case_id": "c1"})
    code, out, err = _run(
        capsys, "grade", "--cases", "set", "--transcripts", "chat.jsonl", "--out", "r.jsonl"
    )
    assert code == 2
    assert out == ""
    line = _error_line(err)
    assert "chat.jsonl:1: this line is an OpenAI chat conversation, not a judgekit transcript" in line
    command = "judgekit import openai chat.jsonl --out chat.transcripts.jsonl"
    assert command in line
    assert not (tmp_path / "r.jsonl").exists(), "no empty results file is left behind"
    # the command it gives works, and its output grades
    assert main(command.split()[1:]) == 0
    code, out, err = _run(
        capsys, "grade", "--cases", "set", "--transcripts", "chat.transcripts.jsonl", "--out", "r.jsonl"
    )
    assert code == 0, err
    assert "graded 1 trial(s)" in out


def test_a_chat_line_without_a_case_id_is_told_to_name_the_field(tmp_path: Path) -> None:
    case_set = load_case_set(_set(tmp_path))
    path = _openai_chat(tmp_path / "chat.jsonl", tools=[])
    with pytest.raises(JudgekitError, match=r"no case_id on the line.*--case-id-field FIELD") as exc:
        plan_trials(case_set, path)
    assert exc.value.exit_code == 2


def _anthropic_chat(path: Path, **extra: Any) -> Path:
    line = {
        "system": "be kind",
        "messages": [
            {"role": "user", "content": "hello"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "{}"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        ],
        **extra,
    }
    path.write_text(json.dumps(line) + "\n")
    return path


def test_a_raw_anthropic_line_without_a_case_id_is_refused_with_the_import_command(tmp_path: Path) -> None:
    case_set = load_case_set(_set(tmp_path))
    path = _anthropic_chat(tmp_path / "claude.jsonl")
    with pytest.raises(
        JudgekitError, match=r"claude\.jsonl:1: this line is an Anthropic messages conversation"
    ) as exc:
        plan_trials(case_set, path)
    target = tmp_path / "claude.transcripts.jsonl"
    command = f"judgekit import anthropic {path} --out {target} --case-id-field FIELD"
    assert command in exc.value.message
    assert "no case_id on the line: name the field that holds it" in exc.value.message
    assert "no command imports" not in exc.value.message
    assert exc.value.exit_code == 2


def test_a_raw_anthropic_line_is_refused_with_the_import_command_that_works(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _set(tmp_path)
    _anthropic_chat(tmp_path / "claude.jsonl", metadata={"case_id": "c1"})
    code, out, err = _run(
        capsys, "grade", "--cases", "set", "--transcripts", "claude.jsonl", "--out", "r.jsonl"
    )
    assert code == 2
    assert out == ""
    line = _error_line(err)
    command = "judgekit import anthropic claude.jsonl --out claude.transcripts.jsonl"
    assert f"{command}, then grade --transcripts claude.transcripts.jsonl" in line
    assert not (tmp_path / "r.jsonl").exists()
    # the command it gives works, and its output grades
    assert main(command.split()[1:]) == 0
    code, out, err = _run(
        capsys, "grade", "--cases", "set", "--transcripts", "claude.transcripts.jsonl", "--out", "r.jsonl"
    )
    assert code == 0, err
    assert "graded 1 trial(s)" in out


def test_a_bad_transcript_line_is_still_a_located_problem_not_a_refusal(tmp_path: Path) -> None:
    case_set = load_case_set(_set(tmp_path))
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"case_id": "c1", "trial": 0, "messages": []}) + "\n")
    plan = plan_trials(case_set, path)
    assert plan.trials == []
    assert [p.field for p in plan.problems] == ["trial"]


# --------------------------------------------------------------------------- str | os.PathLike everywhere

from judgekit.calibration.records import load_records  # noqa: E402
from judgekit.calibration.trust import TrustBook  # noqa: E402
from judgekit.formats.adapters import read_anthropic  # noqa: E402
from judgekit.formats.importers import read_openai_chat, read_tau_bench  # noqa: E402
from judgekit.formats.otel import read_otlp_file  # noqa: E402
from judgekit.results import iter_result_lines, read_results  # noqa: E402
from judgekit.state.snapshot import load_state, snapshot_from_sqlite  # noqa: E402
from judgekit.transcript import iter_transcripts, read_transcripts  # noqa: E402

ENTRY_POINTS = [
    (load_case_set, "paths"),
    (plan_trials, "transcript_files"),
    (read_transcripts, "path"),
    (iter_transcripts, "path"),
    (read_results, "path"),
    (iter_result_lines, "path"),
    (load_state, "path"),
    (snapshot_from_sqlite, "path"),
    (read_openai_chat, "path"),
    (read_anthropic, "path"),
    (read_tau_bench, "path"),
    (read_otlp_file, "path"),
    (load_records, "records_dir"),
    (TrustBook.__init__, "records_dir"),
]


@pytest.mark.parametrize(("func", "param"), ENTRY_POINTS, ids=[f.__name__ for f, _ in ENTRY_POINTS])
def test_every_reading_entry_point_accepts_str_and_path_like(func: Any, param: str) -> None:
    annotation = str(inspect.signature(func).parameters[param].annotation)
    text = annotation.replace("PathArg", "str | PathLike[str]")  # judgekit.caseset.PathArg
    assert "str" in text, f"{func.__name__}({param}: {annotation})"
    assert "PathLike" in text, f"{func.__name__}({param}: {annotation})"


def test_the_readers_read_a_str_path(tmp_path: Path) -> None:
    transcripts = _transcript(tmp_path / "t.jsonl", ("c1", 1), ("c1", 2))
    assert [t.trial for t in read_transcripts(str(transcripts))] == [1, 2]
    assert len(list(iter_transcripts(str(transcripts)))) == 2
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"orders": [{"id": 1}]}))
    assert load_state(str(state)) is not None
    chat = _openai_chat(tmp_path / "chat.jsonl", case_id="c1")
    assert len(read_openai_chat(str(chat)).trials) == 1
    results = tmp_path / "r.jsonl"
    results.write_text("")
    assert read_results(str(results)).lines == []
    assert load_records(str(tmp_path / "no-records")) == []
    assert TrustBook(str(tmp_path / "no-records")).records_dir == tmp_path / "no-records"


def test_marking_a_parameter_that_is_not_a_typer_path_is_a_programming_error() -> None:
    from judgekit.commands.inputs import existing_inputs

    def command(path: str = "x") -> None:
        """A command whose parameter is not declared with typer."""

    with pytest.raises(TypeError, match="command: 'path' is not a typer path parameter of the command"):
        existing_inputs("path")(command)
    with pytest.raises(TypeError, match="command: 'nope' is not a typer path parameter"):
        existing_inputs("nope")(command)

"""Every command, every kind of usage mistake: one ``error:`` line, exit code 2, never a traceback.

The commands are walked from the application itself, so a new command cannot skip the rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from judgekit.cli import app, main
from judgekit.commands.tree import RENAMED


def _leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    children = getattr(command, "commands", None)
    if children:
        for name, child in sorted(children.items()):
            if not child.hidden:  # an old name pointing to its new place (tests/commands/test_tree.py)
                yield from _leaves(child, (*path, name))
    else:
        yield path, command


def _groups(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    children = getattr(command, "commands", None)
    if children:
        yield path
        for name, child in sorted(children.items()):
            yield from _groups(child, (*path, name))


def _root() -> Any:
    import typer.main

    return typer.main.get_command(app)


LEAVES = list(_leaves(_root()))
GROUPS = list(_groups(_root()))
IDS = [" ".join(path) for path, _ in LEAVES]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_the_walk_finds_every_command() -> None:
    assert len(LEAVES) >= 30
    assert ("grade",) in [p for p, _ in LEAVES]
    assert ("import", "tau-bench") in [p for p, _ in LEAVES]


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_an_unknown_option_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], command: Any
) -> None:
    code, out, err = _run(capsys, *path, "--no-such-option-xyz")
    assert code == 2
    assert out == ""
    line = _one_error_line(err)
    assert "No such option: --no-such-option-xyz" in line
    assert f"see 'judgekit {' '.join(path)} --help'" in line


REQUIRING = [(path, command) for path, command in LEAVES if any(p.required for p in command.params)]


def test_most_commands_require_something() -> None:
    assert len(REQUIRING) >= 20


@pytest.mark.parametrize(("path", "command"), REQUIRING, ids=[" ".join(p) for p, _ in REQUIRING])
def test_a_missing_required_argument_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], command: Any
) -> None:
    code, out, err = _run(capsys, *path)
    assert code == 2
    assert out == ""
    if "Usage:" in err:  # a command that shows its help when called bare (no_args_is_help)
        assert "Traceback" not in err
        return
    line = _one_error_line(err)
    assert "Missing" in line


def _number_options(command: Any) -> list[str]:
    out = []
    for param in command.params:
        bare = getattr(param, "bare_type", None)
        kind = bare() if callable(bare) else getattr(getattr(param, "type", None), "name", "")
        if (
            getattr(param, "opts", None)
            and param.opts[0].startswith("--")
            and kind in {"int", "float", "integer"}
        ):
            out.append(param.opts[0])
    return out


NUMBER_OPTIONS = [(path, opt) for path, command in LEAVES for opt in _number_options(command)]


@pytest.mark.parametrize(
    ("path", "option"), NUMBER_OPTIONS, ids=[f"{' '.join(p)} {o}" for p, o in NUMBER_OPTIONS]
)
def test_a_bad_number_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], option: str
) -> None:
    code, out, err = _run(capsys, *path, option, "abc")
    assert code == 2
    assert out == ""
    line = _one_error_line(err)
    assert "Invalid value" in line or "Missing" in line


def test_there_are_number_options_to_check() -> None:
    assert (("grade",), "--concurrency") in NUMBER_OPTIONS


@pytest.mark.parametrize("group", GROUPS, ids=[" ".join(g) or "judgekit" for g in GROUPS])
def test_an_unknown_command_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], group: tuple[str, ...]
) -> None:
    code, out, err = _run(capsys, *group, "no-such-command-xyz")
    assert code == 2
    assert out == ""
    old = " ".join(group)
    if old in RENAMED:  # a group whose name was a command (export): the argument was that command's
        assert _one_error_line(err) == f"error: '{old}' is now 'judgekit {RENAMED[old]}'"
    else:
        assert "No such command 'no-such-command-xyz'" in _one_error_line(err)


def test_a_misspelt_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "valdate")
    assert code == 2
    assert "did you mean 'cases check'" in _one_error_line(err).lower()  # never the hidden old name


def test_a_misspelt_old_name_suggests_its_new_place(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "probe-bais")
    assert code == 2
    assert _one_error_line(err) == (
        "error: No such command 'probe-bais'; did you mean 'judge probe-bias'? (see 'judgekit --help')"
    )


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_flags_work(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    code, out, _ = _run(capsys, flag)
    assert code == 0
    assert "Usage: judgekit" in out
    code, out, _ = _run(capsys, "grade", flag)
    assert code == 0
    assert "--transcripts" in out


def test_an_unexpected_error_is_one_line_pointing_at_the_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.commands import golden

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("scripted failure")

    monkeypatch.setattr("judgekit.caseset.load_case_set", broken)
    monkeypatch.delenv("JUDGEKIT_DEBUG", raising=False)
    code, _, err = _run(capsys, "cases", "check", "examples/airdesk")
    assert golden is not None
    assert code == 1
    line = _one_error_line(err)
    assert "RuntimeError: scripted failure" in line
    assert "this is a bug, not your mistake" in line
    traceback_file = line.split("the traceback is in ")[1].split(" (set")[0]
    with open(traceback_file, encoding="utf-8") as handle:
        assert "Traceback (most recent call last)" in handle.read()
    monkeypatch.setenv("JUDGEKIT_DEBUG", "1")
    code, _, err = _run(capsys, "cases", "check", "examples/airdesk")
    assert code == 1
    assert "Traceback (most recent call last)" in err


# --------------------------------------------------------------------------- file not found

#: Path parameters a command writes, not reads: a missing one is created.
OUTPUT_PATHS = frozenset({"out", "output", "rewards", "fidelity", "resolution_sheet"})

#: Path options that may name something absent, and why; every other path parameter is an input.
MAY_BE_ABSENT = {
    "--records": "a calibration records folder: none yet means no judge is trusted (or calibrate creates it)",
    "--cassette": "a judge cassette: recording creates it; replay mode refuses a missing one itself",
}

#: Inputs checked by the command itself rather than by click, and where that is tested.
CHECKED_BY_THE_COMMAND = {
    ("grade", "transcripts"): "glob patterns, expanded by judgekit (tests/test_inputs.py)",
    ("grade", "more_transcripts"): "further transcripts, expanded like --transcripts (tests/test_inputs.py)",
}


def _is_path(param: Any) -> bool:
    return "Path" in str(param.bare_type())


def _input_paths(path: tuple[str, ...], command: Any) -> list[Any]:
    out = []
    for param in command.params:
        if not _is_path(param) or param.name in OUTPUT_PATHS or param.opts[0] in MAY_BE_ABSENT:
            continue
        if (" ".join(path), param.name) in CHECKED_BY_THE_COMMAND:
            continue
        out.append(param)
    return out


INPUT_PATHS = [(path, param.name) for path, command in LEAVES for param in _input_paths(path, command)]


def test_the_walk_finds_the_input_paths() -> None:
    assert len(INPUT_PATHS) >= 40
    assert (("grade",), "cases") in INPUT_PATHS
    assert (("report",), "results") in INPUT_PATHS
    assert (
        ("judge", "probe-bias"),
        "transcripts",
    ) in INPUT_PATHS
    assert (
        ("candidates", "intake"),
        "records",
    ) in INPUT_PATHS


@pytest.mark.parametrize(("path", "name"), INPUT_PATHS, ids=[f"{' '.join(p)} {n}" for p, n in INPUT_PATHS])
def test_a_missing_input_file_is_one_line_naming_it_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Any, path: tuple[str, ...], name: str
) -> None:
    command = dict(LEAVES)[path]
    existing = tmp_path / "exists.txt"
    existing.write_text("")
    missing = str(tmp_path / "no-such-dir" / f"missing-{name}")
    args = list(path)
    for param in command.params:
        if param.name == name:
            value = missing
        elif not param.required:
            continue
        elif _is_path(param):
            value = str(tmp_path / f"out-{param.name}") if param.name in OUTPUT_PATHS else str(existing)
        elif str(param.bare_type()) in {"int", "float"}:
            value = "1"
        else:
            value = "x"
        args += [param.opts[0], value] if param.opts[0].startswith("-") else [value]
    code, out, err = _run(capsys, *args)
    assert code == 2, err
    assert out == ""
    line = _one_error_line(err)
    assert missing in line
    assert "does not exist" in line
    assert not list(tmp_path.glob("out-*")), "nothing is written before the inputs are checked"

"""Promote and retire under kill -9: a rerun finishes the interrupted edit, and validate notices it.

The real command line runs in a child process that is killed with SIGKILL just before its second move
(:mod:`golden.killed`): one of three candidates is in the set, or one of three case files is edited.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from golden.killed import run_killed
from judgekit.cli import main
from judgekit.verdict import Verdict
from support import results_file, write

P = Verdict.PASS
IDS = ["GS-CAND-R1", "GS-CAND-R2", "GS-CAND-R3"]
JOURNAL = ".judgekit-journal"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _three_reviewed(root: Path) -> list[Path]:
    return [
        write(
            root / "candidates" / f"r{i}.yaml",
            f"id: GS-CAND-R{i}\n"
            + textwrap.dedent(f'input: "Question {i}"\nacceptance: Answers {i}.\n').lstrip(),
        )
        for i in (1, 2, 3)
    ]


def _retire_set(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "set"
    write(root / "judgekit-set.yaml", "name: s\ncases_dir: cases\n")
    for name in ("a", "b", "c"):
        text = f"id: {name}\nversion: 1\ninput: Ask {name}\nacceptance: Ok.\n"
        write(root / "cases" / f"{name}.yaml", text)
    files = [
        str(results_file(tmp_path / f"r{v}.jsonl", v, {k: [P] * 8 for k in ("a", "b", "c")}))
        for v in ("1.4", "1.5", "1.6")
    ]
    return root, files


def test_promote_killed_after_the_first_of_three_moves_is_noticed_and_finished_by_a_rerun(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old behaviour: validate said the set was valid (exit 0) and the rerun failed with
    # "GS-CAND-R1: not a candidate (it is already in the set)", leaving r2 and r3 candidates.
    sources = _three_reviewed(small_set)
    root = small_set.resolve()
    killed = run_killed(root, ["candidates", "promote", *IDS, "--set", str(small_set)], kill_at=2)
    assert killed.killed, killed.stderr
    assert [p.exists() for p in sources] == [False, True, True]
    code, out, err = run(capsys, "validate", str(small_set))
    assert code == 1
    assert f"{root / JOURNAL}: an interrupted 'judgekit candidates promote' left the set half done" in err
    assert f"judgekit candidates promote --set {root} {' '.join(IDS)}" in err
    code, out, err = run(capsys, "candidates", "promote", *IDS, "--set", str(small_set))
    assert (code, err) == (0, "")
    assert [line.split(":")[0] for line in out.splitlines()] == [f"promoted {i}" for i in IDS]
    assert not any(p.exists() for p in sources)
    assert all((root / p.name).is_file() for p in sources)
    assert not (root / JOURNAL).exists()
    code, out, err = run(capsys, "validate", str(small_set))
    assert (code, err) == (0, "")


def test_retire_killed_after_the_first_of_three_files_is_noticed_and_finished_by_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old behaviour: validate said the set was valid (exit 0) with a retired and b, c not.
    root, files = _retire_set(tmp_path)
    argv = ["retire", *files, "--set", str(root), "--case", "a", "--case", "b", "--case", "c"]
    killed = run_killed(root, argv, kill_at=2)
    assert killed.killed, killed.stderr
    texts = [(root / "cases" / f"{n}.yaml").read_text(encoding="utf-8") for n in ("a", "b", "c")]
    assert ["split: regression" in t for t in texts] == [True, False, False]
    code, out, err = run(capsys, "validate", str(root))
    assert code == 1
    assert f"{root / JOURNAL}: an interrupted 'judgekit retire' left the set half done" in err
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert [line.split(" (")[0] for line in out.splitlines()[:3]] == ["retired a", "retired b", "retired c"]
    for name in ("a", "b", "c"):
        text = (root / "cases" / f"{name}.yaml").read_text(encoding="utf-8")
        assert text.count("split: regression") == 1
        assert text.count("retired:") == 1
    code, out, err = run(capsys, "validate", str(root))
    assert (code, err) == (0, "")

"""Promote and retire under kill -9: a rerun finishes the interrupted edit, and validate notices it.

The real command line runs in a child process that is killed with SIGKILL just before its second move
(:mod:`golden.killed`): one of three candidates is in the set, or one of three case files is edited.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest

from golden.killed import run_killed
from judgekit.cli import main
from judgekit.golden.journal import JOURNAL_MAX_BYTES
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
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert code == 1
    assert f"{root / JOURNAL}: an interrupted 'judgekit candidates promote' left the set half done" in err
    assert f"judgekit candidates promote --set {root} {' '.join(IDS)}" in err
    code, out, err = run(capsys, "candidates", "promote", *IDS, "--set", str(small_set))
    assert (code, err) == (0, "")
    assert [line.split(":")[0] for line in out.splitlines()] == [f"promoted {i}" for i in IDS]
    assert not any(p.exists() for p in sources)
    assert all((root / p.name).is_file() for p in sources)
    assert not (root / JOURNAL).exists()
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert (code, err) == (0, "")


def test_retire_killed_after_the_first_of_three_files_is_noticed_and_finished_by_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old behaviour: validate said the set was valid (exit 0) with a retired and b, c not.
    root, files = _retire_set(tmp_path)
    argv = ["cases", "retire", *files, "--set", str(root), "--case", "a", "--case", "b", "--case", "c"]
    killed = run_killed(root, argv, kill_at=2)
    assert killed.killed, killed.stderr
    texts = [(root / "cases" / f"{n}.yaml").read_text(encoding="utf-8") for n in ("a", "b", "c")]
    assert ["split: regression" in t for t in texts] == [True, False, False]
    code, out, err = run(capsys, "cases", "check", str(root))
    assert code == 1
    assert f"{root / JOURNAL}: an interrupted 'judgekit cases retire' left the set half done" in err
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert [line.split(" (")[0] for line in out.splitlines()[:3]] == ["retired a", "retired b", "retired c"]
    for name in ("a", "b", "c"):
        text = (root / "cases" / f"{name}.yaml").read_text(encoding="utf-8")
        assert text.count("split: regression") == 1
        assert text.count("retired:") == 1
    code, out, err = run(capsys, "cases", "check", str(root))
    assert (code, err) == (0, "")


# ------------------------------------------------------------- the state a kill leaves, built by hand


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _promote_journal(root: Path, sources: list[Path], *, moved: int) -> Path:
    """Write the journal a promotion of ``sources`` writes, then make its first ``moved`` moves by hand."""
    moves = [
        {
            "source": f"candidates/{p.name}",
            "destination": p.name,
            "sha256": _sha(p),
            "cases": [{"id": f"GS-CAND-R{i}"}],
        }
        for i, p in enumerate(sources, start=1)
    ]
    doc = {"journal": "judgekit set edit", "version": 1, "operation": "promote", "moves": moves}
    path = write(root / JOURNAL, json.dumps(doc))
    for p in sources[:moved]:
        os.replace(p, root / p.name)
    return path


def test_validate_says_how_far_the_promotion_got_and_what_finishes_it(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = small_set.resolve()
    journal = _promote_journal(root, _three_reviewed(small_set), moved=1)
    code, out, _err = run(capsys, "cases", "check", str(small_set), "--format", "json")
    assert code == 1
    problems = json.loads(out)["problems"]
    assert problems == [
        {
            "file": str(journal),
            "line": None,
            "field": "",
            "message": "an interrupted 'judgekit candidates promote' left the set half done: 1 of 3 moves "
            "done (promoted: GS-CAND-R1; still candidates: GS-CAND-R2, GS-CAND-R3); run judgekit candidates "
            f"promote --set {root} GS-CAND-R1 GS-CAND-R2 GS-CAND-R3 to finish it (it finishes this edit "
            "before anything else)",
        }
    ]


def test_a_promotion_of_other_ids_finishes_the_interrupted_one_first(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = small_set.resolve()
    sources = _three_reviewed(small_set)
    _promote_journal(root, sources, moved=2)
    write(
        small_set / "candidates" / "r4.yaml", 'id: GS-CAND-R4\ninput: "Question 4"\nacceptance: Answers 4.\n'
    )
    code, out, err = run(capsys, "candidates", "promote", "GS-CAND-R4", "--set", str(small_set))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        *(
            f"promoted GS-CAND-R{i}: {root / 'candidates' / f'r{i}.yaml'} -> {root / f'r{i}.yaml'} "
            "(finishing the promotion a killed run left half done)"
            for i in (1, 2, 3)
        ),
        f"promoted GS-CAND-R4: {small_set / 'candidates' / 'r4.yaml'} -> {root / 'r4.yaml'}",
    ]
    assert sorted(p.name for p in (root / "candidates").iterdir()) == ["cand.yaml"]
    assert not (root / JOURNAL).exists()


@pytest.mark.parametrize(
    ("change", "conflict"),
    [
        ("edit", "{src} changed since the interrupted command checked it"),
        ("appear", "{dst} exists now (it appeared since), so {src} cannot move"),
        ("remove", "neither {src} nor {dst} exists: a file was removed since"),
    ],
)
def test_a_file_changed_since_the_kill_stops_the_rerun_and_nothing_moves(
    small_set: Path, capsys: pytest.CaptureFixture[str], change: str, conflict: str
) -> None:
    root = small_set.resolve()
    sources = _three_reviewed(small_set)
    journal = _promote_journal(root, sources, moved=1)
    src, dst = root / "candidates" / "r3.yaml", root / "r3.yaml"
    if change == "edit":  # someone put a REVIEW: marker back: finishing would promote an unchecked case
        src.write_text(src.read_text(encoding="utf-8") + "notes: REVIEW: again\n", encoding="utf-8")
    elif change == "appear":
        write(dst, "# someone else's file\n")
    else:
        src.unlink()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out, err = run(capsys, "candidates", "promote", *IDS, "--set", str(small_set))
    assert (code, out) == (2, "")
    message = (
        f"{journal}: cannot finish the interrupted 'judgekit candidates promote': "
        + conflict.format(src=src, dst=dst)
        + ". Put that file back as it was and rerun; or, to give the edit up, restore the set with git (git "
        f"status shows what it changed) and delete {journal}"
    )
    assert err.splitlines() == [f"error: {message}"] or err.splitlines() == [message]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert code == 1
    assert message in err.splitlines()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "the file: Invalid JSON"),
        ('{"journal": "judgekit set edit", "version": 1, "operation": "promote", "moves": []}', "moves: "),
        (
            '{"journal": "judgekit set edit", "version": 1, "operation": "promote", "moves": [{"source": '
            '"../outside.yaml", "destination": "x.yaml", "sha256": "' + "0" * 64 + '"}]}',
            "moves.0: '../outside.yaml' is not a path inside the set",
        ),
        (
            '{"journal": "judgekit set edit", "version": 1, "operation": "promote", "moves": [{"source": '
            '"candidates/r1.yaml", "destination": "judgekit-set.yaml", "sha256": "' + "0" * 64 + '"}]}',
            "moves.0: 'judgekit-set.yaml' is not a case file",
        ),
    ],
)
def test_a_journal_judgekit_did_not_write_is_refused_and_nothing_moves(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    _three_reviewed(small_set)
    outside = write(tmp_path / "outside.yaml", "id: OUT\n")
    journal = write(small_set / JOURNAL, text)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, out, err = run(capsys, "candidates", "promote", *IDS, "--set", str(small_set))
    assert (code, out) == (2, "")
    assert f"{journal.resolve()}: cannot be read as a judgekit journal (" in err
    assert why in err
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert outside.read_text(encoding="utf-8") == "id: OUT\n"
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert code == 1
    assert "cannot be read as a judgekit journal" in err


def test_the_other_commands_refuse_until_the_interrupted_edit_is_finished(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from golden.test_intake import intake_file, record

    root = small_set.resolve()
    _promote_journal(root, _three_reviewed(small_set), moved=1)
    finish = f"run judgekit candidates promote --set {root} {' '.join(IDS)}"
    files = [str(results_file(tmp_path / f"r{v}.jsonl", v, {"GS-1": [P] * 8})) for v in ("1.4", "1.5")]
    for argv in (
        ["cases", "retire", *files, "--set", str(small_set)],
        ["cases", "retire", *files, "--set", str(small_set), "--dry-run"],
        ["candidates", "intake", str(intake_file(tmp_path, record())), "--set", str(small_set)],
    ):
        code, _out, err = run(capsys, *argv)
        assert code == 2, argv
        assert f"{root / JOURNAL}: an interrupted 'judgekit candidates promote' is not finished" in err
        assert finish in err
    assert sorted(p.name for p in (root / "candidates").iterdir()) == ["cand.yaml", "r2.yaml", "r3.yaml"]


def test_a_retirement_killed_before_its_journal_leaves_the_set_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Killed just before the journal is renamed into place: the three edited copies are staged, nothing in
    # the set changed; validate is clean and a rerun retires all three (the stale copies are cleared).
    root, files = _retire_set(tmp_path)
    os.chmod(root / "cases" / "b.yaml", 0o600)
    argv = ["cases", "retire", *files, "--set", str(root)]
    before = {p: p.read_bytes() for p in (root / "cases").iterdir()}
    killed = run_killed(root, argv, kill_at=1, unit=JOURNAL)
    assert killed.killed
    assert {p: p.read_bytes() for p in (root / "cases").iterdir()} == before
    assert len(list((root / ".judgekit-staging").iterdir())) == 3
    assert run(capsys, "cases", "check", str(root))[0] == 0
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "3 case(s) moved to the regression split" in out
    assert sorted(p.name for p in root.iterdir()) == ["cases", "judgekit-set.yaml"]
    assert os.stat(root / "cases" / "b.yaml").st_mode & 0o777 == 0o600  # the case file keeps its mode


@pytest.mark.parametrize("kind", ["too large", "fifo", "folder"])
def test_a_journal_that_is_not_a_small_regular_file_is_refused_unread(
    small_set: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    sources = _three_reviewed(small_set)
    journal = small_set.resolve() / JOURNAL
    if kind == "too large":
        with open(journal, "wb") as handle:
            handle.truncate(JOURNAL_MAX_BYTES + 1)  # sparse: never read
        why = f"it is larger than {JOURNAL_MAX_BYTES:,} bytes"
    elif kind == "fifo":
        os.mkfifo(journal)  # reading it would block forever
        why = "it is not a regular file"
    else:
        journal.mkdir()
        why = "it is not a regular file"
    code, out, err = run(capsys, "candidates", "promote", *IDS, "--set", str(small_set))
    assert (code, out) == (2, "")
    assert f"{journal}: cannot be read as a judgekit journal ({why})" in err
    assert all(p.is_file() for p in sources)
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert code == 1
    assert f"cannot be read as a judgekit journal ({why})" in err

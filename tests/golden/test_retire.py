"""Retiring a case is an edit of its own file: split and a retired record, nothing else, all or nothing."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.errors import ProblemsError
from judgekit.golden.retire import Retire, retire_cases

ON = date(2026, 12, 1)
WHY = "saturated: passed every trial in each of the last 3 releases at v1"


def _set(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "set"
    (root / "cases").mkdir(parents=True)
    (root / "judgekit-set.yaml").write_text("name: s\ncases_dir: cases\n", encoding="utf-8")
    for name, text in files.items():
        (root / "cases" / name).write_text(text, encoding="utf-8")
    return root


def _retire(root: Path, *ids: str, write: bool = True):
    case_set = load_case_set(root)
    case_set.raise_if_invalid()
    return retire_cases(case_set, [Retire(i, WHY, ("1.4", "1.5", "1.6")) for i in ids], on=ON, write=write)


def test_a_yaml_case_keeps_its_comments_and_layout(tmp_path):
    text = (
        "# a hand-written case: keep this comment\n"
        "id: a\n"
        "version: 1   # bumped when the outcome changes\n"
        "slice: policy_edge\n"
        "input: Cancel my booking\n"
        "acceptance: Cancels it.  # trailing comment\n"
    )
    root = _set(tmp_path, {"a.yaml": text})
    (done,) = _retire(root, "a")
    assert done.moved_from is None
    new = (root / "cases" / "a.yaml").read_text(encoding="utf-8")
    assert new == (
        "# a hand-written case: keep this comment\n"
        "id: a\n"
        "version: 1   # bumped when the outcome changes\n"
        "split: regression\n"
        "retired:\n"
        f"  reason: '{WHY}'\n"
        "  releases:\n"
        "  - '1.4'\n"
        "  - '1.5'\n"
        "  - '1.6'\n"
        "  retired_on: '2026-12-01'\n"
        "slice: policy_edge\n"
        "input: Cancel my booking\n"
        "acceptance: Cancels it.  # trailing comment\n"
    )
    case = load_case_set(root).cases[0].case
    assert case.split == "regression"
    assert case.retired is not None
    assert case.retired.retired_on == ON


def test_an_existing_capability_split_is_replaced_in_place(tmp_path):
    text = "id: a\nsplit: capability  # hard for now\ninput: hi\nacceptance: ok\n"
    root = _set(tmp_path, {"a.yaml": text})
    (done,) = _retire(root, "a")
    assert done.moved_from == "capability"
    new = (root / "cases" / "a.yaml").read_text(encoding="utf-8")
    assert new.startswith("id: a\nsplit: regression  # hard for now\nretired:\n  moved_from: capability\n")
    assert new.endswith("input: hi\nacceptance: ok\n")


def test_a_list_of_cases_edits_only_the_one_retired(tmp_path):
    text = "- id: a\n  input: one\n  acceptance: ok\n- id: b  # the second\n  input: two\n  acceptance: ok\n"
    root = _set(tmp_path, {"many.yaml": text})
    _retire(root, "b")
    new = (root / "cases" / "many.yaml").read_text(encoding="utf-8")
    assert new.startswith(
        "- id: a\n  input: one\n  acceptance: ok\n- id: b  # the second\n  split: regression\n"
    )
    cases = {c.case.id: c.case for c in load_case_set(root).cases}
    assert cases["a"].split is None
    assert cases["b"].split == "regression"


def test_json_and_jsonl_files(tmp_path):
    json_text = json.dumps({"id": "j", "version": 2, "input": "x", "acceptance": "ok"}, indent=2) + "\n"
    jsonl_text = (
        '{"id": "k", "input": "x", "acceptance": "ok"}\n{"id": "m", "input": "y", "acceptance": "ok"}\n'
    )
    root = _set(tmp_path, {"j.json": json_text, "k.jsonl": jsonl_text})
    _retire(root, "j", "m")
    data = json.loads((root / "cases" / "j.json").read_text(encoding="utf-8"))
    assert list(data) == ["id", "version", "split", "retired", "input", "acceptance"]
    lines = (root / "cases" / "k.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[0] == '{"id": "k", "input": "x", "acceptance": "ok"}'  # untouched
    assert json.loads(lines[1])["split"] == "regression"
    assert lines[2] == ""


def test_refusals_are_listed_and_nothing_is_written(tmp_path):
    files = {
        "a.yaml": "id: a\ninput: hi\nacceptance: ok\n",
        "r.yaml": "id: r\nsplit: regression\ninput: hi\nacceptance: ok\n",
        "h.yaml": "id: h\nsplit: holdout\ninput: hi\nacceptance: ok\n",
        "f.yaml": "{id: f, input: hi, acceptance: ok}\n",
    }
    root = _set(tmp_path, files)
    before = {p.name: p.read_text(encoding="utf-8") for p in (root / "cases").iterdir()}
    with pytest.raises(ProblemsError) as info:
        _retire(root, "a", "r", "h", "f", "nope")
    messages = [str(p) for p in info.value.problems]
    assert any("r.yaml:2: split: already in the regression split" in m for m in messages)
    assert any("h.yaml:2: split: already in the holdout split" in m for m in messages)
    assert any("nope: no case in the set has this id" in m for m in messages)
    assert not any("a.yaml" in m for m in messages)
    after = {p.name: p.read_text(encoding="utf-8") for p in (root / "cases").iterdir()}
    assert after == before  # a.yaml was fine, but nothing is written when anything is refused
    # a flow-style mapping cannot be edited in place: refused with what to do by hand
    with pytest.raises(ProblemsError) as flow:
        _retire(root, "f")
    (problem,) = flow.value.problems
    assert "cannot edit this file safely (the case is not a block mapping" in problem.message
    assert "by hand" in problem.message


def test_dry_run_writes_nothing(tmp_path):
    root = _set(tmp_path, {"a.yaml": "id: a\ninput: hi\nacceptance: ok\n"})
    (done,) = _retire(root, "a", write=False)
    assert done.case_id == "a"
    assert (root / "cases" / "a.yaml").read_text(encoding="utf-8") == "id: a\ninput: hi\nacceptance: ok\n"


def test_a_failed_staged_write_changes_nothing(tmp_path, monkeypatch):
    root = _set(
        tmp_path,
        {"a.yaml": "id: a\ninput: hi\nacceptance: ok\n", "b.yaml": "id: b\ninput: hi\nacceptance: ok\n"},
    )
    import judgekit.golden.retire as module

    real = module.write_atomic
    calls: list[Path] = []

    def failing_second(path, data, **kw):  # a disk that fills up after the first copy
        calls.append(Path(path))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(path, data, **kw)

    monkeypatch.setattr(module, "write_atomic", failing_second)
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match="No space left on device") as info:
        _retire(root, "a", "b")
    assert info.value.message.endswith("(No space left on device); nothing was retired")
    for name in ("a.yaml", "b.yaml"):
        assert "split" not in (root / "cases" / name).read_text(encoding="utf-8")
    assert sorted(p.name for p in root.iterdir()) == ["cases", "judgekit-set.yaml"]  # no copy, no journal


def test_a_failed_rename_restores_the_files_already_replaced(tmp_path, monkeypatch):
    # A disk error on the second file's rename: the first file gets its old text back, the copies and the
    # journal are removed.
    files = {"a.yaml": "id: a\ninput: hi\nacceptance: ok\n", "b.yaml": "id: b\ninput: hi\nacceptance: ok\n"}
    root = _set(tmp_path, files)
    import errno
    import os

    real = os.replace

    def replace(src, dst):
        if Path(dst).name == "b.yaml":
            raise OSError(errno.EIO, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError) as info:
        _retire(root, "a", "b")
    assert info.value.message == (
        f"{root / 'cases' / 'b.yaml'}: cannot write it (Input/output error); the 1 file(s) already written "
        "were restored; nothing was retired"
    )
    assert {n: (root / "cases" / n).read_text(encoding="utf-8") for n in files} == files
    assert sorted(p.name for p in root.iterdir()) == ["cases", "judgekit-set.yaml"]

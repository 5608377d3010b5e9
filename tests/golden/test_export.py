from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.golden import export as export_module
from judgekit.golden.export import check_copilot_studio_csv, export_copilot_studio


def _case(i: int, **fields: object) -> Case:
    return Case.model_validate(
        {"id": f"c{i}", "input": f"question {i}", "acceptance": f"answer {i}", **fields}
    )


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_paraphrases_expand_and_files_cap_at_100_rows(tmp_path: Path) -> None:
    cases = [_case(i, owner="cards", paraphrases=["p1", "p2"]) for i in range(40)]  # 120 rows
    result = export_copilot_studio(cases, tmp_path / "out")
    assert [(p.name, n) for p, n in result.files] == [("cards-1.csv", 100), ("cards-2.csv", 20)]
    first = _rows(tmp_path / "out" / "cards-1.csv")
    assert first[0] == ["Question", "Expected response"]
    assert first[1:4] == [["question 0", "answer 0"], ["p1", "answer 0"], ["p2", "answer 0"]]
    assert len(first) == 101


def test_reference_answer_preferred_and_owners_split(tmp_path: Path) -> None:
    cases = [
        _case(1, owner="a", expected={"reference_answer": "the reference"}),
        _case(2),
    ]
    result = export_copilot_studio(cases, tmp_path)
    names = sorted(p.name for p, _ in result.files)
    assert names == ["a-1.csv", "unowned-1.csv"]
    assert _rows(tmp_path / "a-1.csv")[1] == ["question 1", "the reference"]


def test_multi_turn_and_too_long_left_out(tmp_path: Path) -> None:
    long_q = "x" * 1001
    cases = [
        Case.model_validate({"id": "mt", "turns": [{"user": "a"}, {"user": "b"}], "acceptance": "ok"}),
        _case(1, input=long_q, paraphrases=["short"]),
    ]
    result = export_copilot_studio(cases, tmp_path)
    assert result.multi_turn == ["mt"]
    assert result.too_long == [("c1", "question", 1001)]
    assert _rows(tmp_path / "unowned-1.csv")[1:] == [["short", "answer 1"]]


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep me", encoding="utf-8")
    with pytest.raises(JudgekitError, match="exists and is not a folder"):
        export_copilot_studio([_case(1)], target)
    assert target.read_text(encoding="utf-8") == "keep me"


def test_an_output_folder_named_as_text(tmp_path: Path) -> None:
    result = export_copilot_studio([_case(1, owner="cards")], str(tmp_path / "out"))
    assert [(p, n) for p, n in result.files] == [(tmp_path / "out" / "cards-1.csv", 1)]
    assert _rows(tmp_path / "out" / "cards-1.csv")[1] == ["question 1", "answer 1"]


# --- atomic and honest export ---------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its bytes: what "unchanged" is checked against."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_colliding_owner_names_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cases = [_case(1, owner="cards squad"), _case(2, owner="cards-squad")]
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio(cases, out)
    assert caught.value.message == (
        "owners 'cards squad' (case c1) and 'cards-squad' (case c2) would both be exported as "
        "cards-squad-1.csv (file names keep only letters, digits, '.', '_' and '-', and letter case does not "
        "tell files apart); give one of them a different owner in its case files. Nothing was written"
    )
    assert not out.exists()  # the old exporter left cards-squad-1.csv holding only one owner's rows


def test_owners_differing_only_in_letter_case_collide(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    before = _snapshot(tmp_path)
    with pytest.raises(JudgekitError, match=r"owners 'Cards' \(case c1\) and 'cards' \(case c2\)"):
        export_copilot_studio([_case(1, owner="Cards"), _case(2, owner="cards")], tmp_path)
    assert _snapshot(tmp_path) == before


def test_files_of_the_earlier_export_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_copilot_studio([_case(1, owner="old"), _case(2, owner="kept")], out)
    (out / "notes.csv").write_text("Question,Expected response\r\nmine,mine\r\n", encoding="utf-8")
    result = export_copilot_studio([_case(3, owner="new"), _case(2, owner="kept")], out)
    assert sorted(p.name for p in out.iterdir()) == [
        "judgekit-export.json",
        "kept-1.csv",
        "new-1.csv",
        "notes.csv",
    ]
    assert result.removed == [out / "old-1.csv"]
    assert result.kept == []
    manifest = json.loads((out / "judgekit-export.json").read_text(encoding="utf-8"))
    assert sorted(manifest["files"]) == ["kept-1.csv", "new-1.csv"]
    assert manifest["files"]["new-1.csv"]["rows"] == 1


def test_an_earlier_export_file_changed_since_is_kept_and_reported(tmp_path: Path) -> None:
    export_copilot_studio([_case(1, owner="old")], tmp_path)
    edited = tmp_path / "old-1.csv"
    edited.write_bytes(b"Question,Expected response\r\nedited by hand,yes\r\n")
    result = export_copilot_studio([_case(2, owner="new")], tmp_path)
    assert result.kept == [(edited, "changed since the last export; delete it if it is stale")]
    assert edited.read_bytes() == b"Question,Expected response\r\nedited by hand,yes\r\n"
    assert result.removed == []


def test_an_export_file_no_manifest_records_is_kept_and_reported(tmp_path: Path) -> None:
    legacy = tmp_path / "old-1.csv"  # an export by a judgekit that wrote no manifest
    legacy.write_bytes(b"Question,Expected response\r\nq,a\r\n")
    other = tmp_path / "report-1.csv"  # same name pattern, another header: not an export
    other.write_bytes(b"id,score\r\n1,2\r\n")
    result = export_copilot_studio([_case(1, owner="new")], tmp_path)
    assert result.kept == [
        (legacy, "looks like an export but judgekit-export.json does not record it; delete it if it is stale")
    ]
    assert legacy.read_bytes() == b"Question,Expected response\r\nq,a\r\n"
    assert other.read_bytes() == b"id,score\r\n1,2\r\n"


def test_a_file_no_manifest_records_is_never_overwritten(tmp_path: Path) -> None:
    mine = tmp_path / "cards-1.csv"
    mine.write_text("my own test set", encoding="utf-8")
    before = _snapshot(tmp_path)
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(1, owner="cards")], tmp_path)
    assert caught.value.message == (
        f"{mine}: already in --out and not recorded by judgekit-export.json (your own file, or an export by "
        "a judgekit that wrote no manifest); this export would overwrite it: move or delete it, or choose "
        "another --out. Nothing was written"
    )
    assert _snapshot(tmp_path) == before


def test_an_exported_file_changed_since_is_never_overwritten(tmp_path: Path) -> None:
    export_copilot_studio([_case(1, owner="cards")], tmp_path)
    (tmp_path / "cards-1.csv").write_text("Question,Expected response\r\nedited,yes\r\n", encoding="utf-8")
    before = _snapshot(tmp_path)
    with pytest.raises(
        JudgekitError, match=r"cards-1\.csv: already in --out and changed since the last export"
    ):
        export_copilot_studio([_case(1, owner="cards")], tmp_path)
    assert _snapshot(tmp_path) == before


def test_reexporting_the_same_set_replaces_its_files(tmp_path: Path) -> None:
    export_copilot_studio([_case(1, owner="cards")], tmp_path)
    result = export_copilot_studio([_case(1, owner="cards", input="reworded")], tmp_path)
    assert [(p.name, n) for p, n in result.files] == [("cards-1.csv", 1)]
    assert _rows(tmp_path / "cards-1.csv")[1] == ["reworded", "answer 1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards-1.csv", "judgekit-export.json"]


def test_a_manifest_judgekit_did_not_write_is_refused(tmp_path: Path) -> None:
    (tmp_path / "judgekit-export.json").write_text('{"files": {}}', encoding="utf-8")
    before = _snapshot(tmp_path)
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(1)], tmp_path)
    assert caught.value.message == (
        f"{tmp_path / 'judgekit-export.json'}: not a manifest judgekit export cases wrote; delete it if no "
        "export of yours needs it, or choose another --out. Nothing was written"
    )
    assert _snapshot(tmp_path) == before


def test_a_manifest_that_is_not_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "judgekit-export.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(
        JudgekitError, match=r"judgekit-export\.json: not a manifest judgekit export cases wrote \("
    ):
        export_copilot_studio([_case(1)], tmp_path)


def test_a_huge_manifest_is_refused_unread(tmp_path: Path) -> None:
    manifest = tmp_path / "judgekit-export.json"
    with manifest.open("wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)  # sparse: no 16 MiB written to disk
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(1)], tmp_path)
    assert caught.value.message == (
        f"{manifest}: larger than 16 MiB (MAX_MANIFEST_BYTES), not an export manifest; delete it if no "
        "export of yours needs it, or choose another --out. Nothing was written"
    )


def test_a_manifest_naming_a_file_outside_the_pattern_is_refused(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep", encoding="utf-8")
    digest = hashlib.sha256(b"keep").hexdigest()
    doc = {"written_by": "judgekit export", "files": {"../precious.txt": {"sha256": digest}}}
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "judgekit-export.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(
        JudgekitError, match=r"files: '\.\./precious\.txt' is not an export file with its sha256"
    ):
        export_copilot_studio([_case(1)], tmp_path / "out")
    assert precious.read_text(encoding="utf-8") == "keep"


def test_a_failed_move_midway_leaves_out_exactly_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    export_copilot_studio([_case(1, owner="a"), _case(2, owner="b"), _case(3, owner="c")], out)
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    before = _snapshot(out)
    real_replace = os.replace
    calls = {"n": 0}

    def replace_failing_on_the_third_new_file(
        src: str | os.PathLike[str], dst: str | os.PathLike[str]
    ) -> None:
        arriving = Path(dst).parent == out and Path(src).parent != out  # a new file moving into --out
        if arriving and calls["n"] < 3:
            calls["n"] += 1
            if calls["n"] == 3:
                raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_failing_on_the_third_new_file)
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(4, owner="a"), _case(5, owner="b"), _case(6, owner="d")], out)
    assert calls["n"] == 3  # two new files were already in place when the third failed
    assert _snapshot(out) == before  # no staging folder left, c-1.csv not removed, a/b not overwritten
    assert (
        caught.value.message
        == f"{out}: cannot write the export: No space left on device; nothing in it was changed"
    )


def test_a_failed_put_back_names_where_the_previous_files_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_copilot_studio([_case(1, owner="a")], tmp_path)
    previous = (tmp_path / "a-1.csv").read_bytes()
    real_replace = os.replace

    def replace_failing_into_place_and_back(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).parent == tmp_path:  # every move into the folder: the new file and the put-back
            raise OSError(30, "Read-only file system")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_failing_into_place_and_back)
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(2, owner="a")], tmp_path)
    backup = re.search(r"they are in (\S+): move them back", caught.value.message)
    assert backup is not None
    assert (Path(backup.group(1)) / "a-1.csv").read_bytes() == previous
    assert caught.value.message == (
        f"{tmp_path}: the export failed and putting the previous files back failed too (Read-only file "
        f"system); they are in {backup.group(1)}: move them back into {tmp_path}"
    )


def test_a_failed_write_into_a_new_folder_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkstemp = tempfile.mkstemp

    def mkstemp_failing_on_the_second_file(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if str(kwargs.get("prefix", "")).startswith(".b-1.csv."):  # io.atomic stages each file so
            raise OSError(5, "Input/output error")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_failing_on_the_second_file)
    out = tmp_path / "new" / "out"
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(1, owner="a"), _case(2, owner="b")], out)
    assert list(tmp_path.iterdir()) == []  # neither out nor new/ is left behind
    assert (
        caught.value.message
        == f"{out}: cannot write the export: Input/output error; nothing in it was changed"
    )


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions and a non-root user"
)
def test_a_read_only_out_folder_is_left_as_it_was(tmp_path: Path) -> None:
    export_copilot_studio([_case(1, owner="old")], tmp_path)
    before = _snapshot(tmp_path)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(JudgekitError, match="cannot write the export: Permission denied; nothing in it"):
            export_copilot_studio([_case(2, owner="new")], tmp_path)
    finally:
        tmp_path.chmod(0o755)
    assert _snapshot(tmp_path) == before


def test_a_file_breaking_the_format_is_an_error_and_nothing_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_copilot_studio([_case(1, owner="cards")], tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(export_module, "ROWS_PER_FILE", 101)  # the writer now exceeds the format's 100 rows
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(i, owner="cards") for i in range(101)], tmp_path)
    staged = re.search(r"format: (\S+)/cards-1\.csv", caught.value.message)
    assert staged is not None
    assert Path(staged.group(1)).name.startswith(".judgekit-export-")
    assert caught.value.message.endswith(
        "cards-1.csv: holds 101 rows; a test set holds at most 100; this is a judgekit bug, please report "
        f"it. Nothing in {tmp_path} was changed"
    )
    assert _snapshot(tmp_path) == before


def test_awkward_text_round_trips_exactly(tmp_path: Path) -> None:
    text = 'a "quoted", comma\r\nnew line\rcarriage é 漢字 \x00 nul'
    result = export_copilot_studio([_case(1, input=text, acceptance=text)], tmp_path)
    path, _ = result.files[0]
    assert check_copilot_studio_csv(path, [(text, text)]) == []
    assert _rows(path)[1] == [text, text]
    assert path.read_bytes().startswith(b"Question,Expected response\r\n")


def test_a_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError) as caught:
        export_copilot_studio([_case(1, paraphrases=["ok", "bad \ud800"])], tmp_path / "out")
    assert caught.value.message == (
        "case c1: paraphrases.1: character 5 ('\\ud800') cannot be written as UTF-8 (a lone surrogate); fix "
        "the text in the case file"
    )
    assert not (tmp_path / "out").exists()


def test_blank_questions_are_left_out(tmp_path: Path) -> None:
    result = export_copilot_studio([_case(1, paraphrases=["  ", "fine"])], tmp_path)
    assert result.blank == [("c1", "paraphrases.0")]
    assert _rows(tmp_path / "unowned-1.csv")[1:] == [["question 1", "answer 1"], ["fine", "answer 1"]]


# --- the format check, one test per message ------------------------------------------------------


def _csv_file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "t-1.csv"
    path.write_bytes(data)
    return path


GOOD = b"Question,Expected response\r\nq,a\r\n"


def test_check_accepts_a_conforming_file(tmp_path: Path) -> None:
    assert check_copilot_studio_csv(_csv_file(tmp_path, GOOD), [("q", "a")]) == []


def test_check_byte_order_mark(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"\xef\xbb\xbf" + GOOD)
    assert check_copilot_studio_csv(path) == [
        f"{path}: starts with a UTF-8 byte-order mark; the import expects plain UTF-8"
    ]


def test_check_encoding(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\nq\xe9,a\r\n")
    assert check_copilot_studio_csv(path) == [f"{path}: byte 30 is not UTF-8; the import expects UTF-8"]


def test_check_unreadable_csv(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b'Question,Expected response\r\n"q,a\r\n')
    [message] = check_copilot_studio_csv(path)
    assert message.startswith(f"{path}: line 2: not readable as CSV (")


def test_check_header(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"question,expected response\r\nq,a\r\n")
    assert check_copilot_studio_csv(path) == [
        f"{path}: line 1: the header must be exactly 'Question', 'Expected response' "
        "(found 'question', 'expected response')"
    ]


def test_check_no_rows(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\n")
    assert check_copilot_studio_csv(path) == [
        f"{path}: holds no rows after the header; a test set needs at least one"
    ]


def test_check_too_many_rows(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\n" + b"q,a\r\n" * 101)
    assert check_copilot_studio_csv(path) == [f"{path}: holds 101 rows; a test set holds at most 100"]


def test_check_field_count(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\nq,a,extra\r\n")
    assert check_copilot_studio_csv(path) == [f"{path}: row 2: has 3 fields; every row has exactly 2"]


def test_check_blank_question(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\n  ,a\r\n")
    assert check_copilot_studio_csv(path) == [f"{path}: row 2: the question is blank"]


def test_check_question_length(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\n" + b"x" * 1001 + b",a\r\n")
    assert check_copilot_studio_csv(path) == [
        f"{path}: row 2: the question has 1001 characters; the limit is 1000"
    ]


def test_check_blank_expected_response(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, b"Question,Expected response\r\nq,\r\n")
    assert check_copilot_studio_csv(path) == [f"{path}: row 2: the expected response is blank"]


def test_check_row_count_against_what_was_written(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, GOOD)
    assert check_copilot_studio_csv(path, [("q", "a"), ("q2", "a2")]) == [
        f"{path}: holds 1 rows where 2 were written"
    ]


def test_check_rows_against_what_was_written(tmp_path: Path) -> None:
    path = _csv_file(tmp_path, GOOD)
    assert check_copilot_studio_csv(path, [("q", "other")]) == [
        f"{path}: row 2: reads back differently from what was written"
    ]


def test_an_export_with_nothing_left_removes_the_earlier_files(tmp_path: Path) -> None:
    export_copilot_studio([_case(1, owner="cards")], tmp_path)
    multi_turn = Case.model_validate(
        {"id": "mt", "turns": [{"user": "a"}, {"user": "b"}], "acceptance": "ok"}
    )
    result = export_copilot_studio([multi_turn], tmp_path)
    assert result.files == []
    assert result.removed == [tmp_path / "cards-1.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judgekit-export.json"]

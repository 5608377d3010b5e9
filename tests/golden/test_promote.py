"""Promoting reviewed candidates into a golden set, called from Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.errors import JudgekitError
from judgekit.golden.promote import promote_candidates


def test_a_set_named_as_text_has_its_reviewed_candidate_promoted(small_set: Path) -> None:
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    [promotion] = promote_candidates(str(small_set), ["GS-CAND-1"])
    assert promotion.case_id == "GS-CAND-1"
    assert promotion.source == cand
    assert not cand.exists()
    assert promotion.destination.is_file()


def test_a_cases_dir_that_leads_outside_the_set_moves_nothing(small_set: Path) -> None:
    # The manifest names a cases folder outside the set: the load reports it, and promotion must not
    # write there (it used to resolve the folder without checking and move the candidate out of the set).
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "cases_dir: ../outside\n", encoding="utf-8")
    (small_set.parent / "outside").mkdir()
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-1"])
    message = caught.value.message
    assert message.startswith(f"{manifest}: cases_dir: '../outside' resolves to ")
    assert message.endswith("; nothing was written")
    assert cand.is_file()
    assert list((small_set.parent / "outside").iterdir()) == []


def test_the_set_folder_of_a_plain_set_is_its_root_and_candidates(small_set: Path) -> None:
    case_set = load_case_set(small_set)
    assert case_set.folder("cases_dir") == small_set.resolve()
    assert case_set.folder("candidates_dir") == (small_set / "candidates").resolve()

"""Promoting reviewed candidates into a golden set, called from Python."""

from __future__ import annotations

from pathlib import Path

from judgekit.golden.promote import promote_candidates


def test_a_set_named_as_text_has_its_reviewed_candidate_promoted(small_set: Path) -> None:
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    [promotion] = promote_candidates(str(small_set), ["GS-CAND-1"])
    assert promotion.case_id == "GS-CAND-1"
    assert promotion.source == cand
    assert not cand.exists()
    assert promotion.destination.is_file()

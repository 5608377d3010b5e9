"""The JSON document store ``docs/graders.md`` shows is a real state, and its case grades as the page says.

Issue 35: the docs never showed the layout of a JSON document store. The page's JSON block is written as
``fixtures/pharmacy.json`` of a golden set, the page's case beside it, and both are read by judgekit's
own loaders; the rows the page names are the rows loaded, and the page's two final states get the
verdicts it gives.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

import judgekit
from judgekit.state import load_state
from judgekit.verdict import Verdict

PAGE = Path(__file__).resolve().parents[2] / "docs" / "graders.md"
TEXT = PAGE.read_text(encoding="utf-8")


def _block(language: str) -> str:
    """The page's block of ``language`` marked as checked by this file."""
    pattern = rf"<!-- {language}: tests/state/test_documented_store\.py[^\n]*-->\n```{language}\n(.*?)^```"
    found = re.findall(pattern, TEXT, re.S | re.M)
    assert len(found) == 1, f"docs/graders.md: expected one marked {language} block, found {len(found)}"
    return str(found[0])


STORE: dict[str, Any] = json.loads(_block("json"))


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """A golden set holding the page's store as ``fixtures/pharmacy.json`` and the page's case."""
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "pharmacy.json").write_text(_block("json"), encoding="utf-8")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "refill-rx-7.yaml").write_text(_block("yaml"), encoding="utf-8")
    return tmp_path


def test_the_rows_are_the_ones_the_page_names(golden: Path) -> None:
    state = load_state(golden / "fixtures" / "pharmacy.json")
    named = set(re.findall(r"`(\w+/[\w-]+)`", TEXT.partition("Its rows are ")[2].partition(";")[0]))
    assert {f"{t}/{k}" for t, rows in state.tables.items() for k in rows} == named
    assert state.table("refill_requests") == {}
    assert state.table("prescriptions")["RX-7"]["refills_left"] == 2  # type: ignore[index]


def test_a_folder_of_table_files_is_the_same_state(golden: Path, tmp_path: Path) -> None:
    folder = tmp_path / "pharmacy"
    folder.mkdir()
    for table, rows in STORE.items():
        (folder / f"{table}.json").write_text(json.dumps(rows), encoding="utf-8")
    assert load_state(folder).digest() == load_state(golden / "fixtures" / "pharmacy.json").digest()


def _trial(golden: Path, final: dict[str, Any]) -> judgekit.Grade:
    (loaded,) = judgekit.load_cases(golden).cases
    case = loaded.case
    transcript = judgekit.Transcript.model_validate(
        {
            "case_id": case.id,
            "messages": [
                {"role": "user", "content": case.input},
                {"role": "assistant", "content": "Your refill of RX-7 is requested."},
            ],
            "initial_state": "fixtures/pharmacy.json",
            "final_state": {"data": final},
        }
    )
    return judgekit.grade(case, transcript, root=golden, transcript_dir=golden)


def _refilled() -> dict[str, Any]:
    final = copy.deepcopy(STORE)
    final["refill_requests"].append({"prescription_id": "RX-7", "patient_id": "P-100"})
    final["prescriptions"][0]["refills_left"] = 1
    return final


def test_the_page_s_refill_passes(golden: Path) -> None:
    grade = _trial(golden, _refilled())
    assert grade.verdict is Verdict.PASS, grade.explain()
    assert {c.check_id: c.verdict for c in grade.checks}["state"] is Verdict.PASS


def test_touching_another_patient_s_prescription_fails_state_collateral_with_that_row(golden: Path) -> None:
    final = _refilled()
    final["prescriptions"][1]["refills_left"] = 3
    grade = _trial(golden, final)
    assert grade.verdict is Verdict.FAIL
    checks = {c.check_id: c for c in grade.checks}
    assert checks["state"].verdict is Verdict.PASS
    collateral = checks["state:collateral"]
    assert collateral.verdict is Verdict.FAIL
    assert "prescriptions/RX-8" in grade.explain()
    assert "prescriptions" in json.dumps([e.data for e in collateral.evidence])

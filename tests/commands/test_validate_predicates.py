"""``judgekit cases check`` reports predicate mistakes as located, one-line problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cli import main

CASE = """\
id: PRED-1
input: refund my cancelled flight
expected_state:
  changes:
    refunds:
      added:
        - payment_id: PMT-1
          amount: {aprox: 3}
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_reports_an_unknown_predicate_with_its_line_and_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "refund.yaml").write_text(CASE, encoding="utf-8")
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 1
    assert (
        f"{tmp_path}/refund.yaml:8: expected_state.changes.refunds.added.0.amount: unknown predicate "
        "'aprox'; did you mean 'approx'? (predicates: equals, approx, tol, one_of, matches, present, "
        "absent, gt, ge, lt, le, between)"
    ) in err.splitlines()
    assert "Traceback" not in err


def test_validate_reports_an_impossible_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "refund.yaml").write_text(
        CASE.replace("{aprox: 3}", "{between: [500, 100]}"), encoding="utf-8"
    )
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 1
    assert (
        f"{tmp_path}/refund.yaml:8: expected_state.changes.refunds.added.0.amount.between: [500, 100] can "
        "never hold: lo is greater than hi (write [100, 500])"
    ) in err.splitlines()


def test_validate_accepts_ordering_predicates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "refund.yaml").write_text(CASE.replace("{aprox: 3}", "{gt: 0, le: 412.18}"), encoding="utf-8")
    code, out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 0, err
    assert out.strip() == "1 cases valid"

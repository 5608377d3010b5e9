"""The advice in ``check_references``'s undecided rows names the settings of the path the user is on.

``judgekit cases check-references`` tells its user to run ``judgekit calibrate`` and pass ``--untrusted
count``; the same row built from Python (:func:`judgekit.golden.references.reference_row`, what
``check_references`` returns) names ``judgekit.api.calibrate(...)`` and ``untrusted='count'`` instead, and
never a flag the Python user has no way to pass. The trust book's "no calibration record" reason, which
every grade carries, follows the same table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.advice import ADVICE, AdvicePath, advice_for
from judgekit.calibration.trust import TrustBook
from judgekit.golden.references import reference_row
from judgekit.verdict import CheckResult, Evidence, Grade, Trust, Verdict

FP = "3f2a9c1d0e4b" + "7" * 52


def _untrusted_fail() -> Grade:
    """A reference's grade whose only check is an untrusted judge's fail on a gate criterion."""
    check = CheckResult(
        check_id="criterion:no_false_success",
        layer="rubric",
        verdict=Verdict.FAIL,
        reason="scripted",
        trust=Trust.UNTRUSTED,
        trust_reason="no calibration record",
        evidence=(Evidence(kind="note", summary="judge x: 1/1 usable samples", data={"fingerprint": FP}),),
    )
    return Grade(case_id="gs-good", trial=1, verdict=Verdict.INSUFFICIENT_INFORMATION, checks=(check,))


def test_from_python_the_undecided_advice_names_python_settings() -> None:
    row = reference_row(_untrusted_fail(), "withhold")  # outside every path's block: the Python API
    assert row["status"] == "judge_undecided"
    why = row["problems"][0]["undecided"]
    assert why == (
        "untrusted judge: no calibration record trusts it, so its fail decides nothing under "
        "untrusted='withhold'; calibrate it (judgekit.api.calibrate(LABELS, options=CalibrationOptions("
        f"judge=RATER, fingerprint='{FP}'))) or opt in with untrusted='count' (make_grader, or grade_run's "
        "RunOptions)"
    )
    assert "--" not in why


def test_on_the_command_line_the_undecided_advice_names_flags() -> None:
    with advice_for("cli"):
        row = reference_row(_untrusted_fail(), "advisory")
    assert row["problems"][0]["undecided"] == (
        "untrusted judge: no calibration record trusts it, so its fail decides nothing under --untrusted "
        f"advisory; calibrate it (judgekit calibrate LABELS --judge RATER --fingerprint {FP}) or opt in "
        "with --untrusted count"
    )


@pytest.mark.parametrize("path", ["python", "inspect", "promptfoo", "pytest", "cli"])
def test_each_path_is_told_its_own_way_to_calibrate_a_judge_without_a_record(
    tmp_path: Path, path: AdvicePath
) -> None:
    with advice_for(path):
        reason = TrustBook(tmp_path).decide(FP).reason
    assert f"run `{ADVICE[path].calibrate_named(FP)}` with expert labels first" in reason
    if path not in ("cli", "pytest"):  # the pytest plugin has no calibrate option: its users use the CLI
        assert "judgekit calibrate" not in reason
        assert "--fingerprint" not in reason

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _reference(path: Path, case_id: str, amount: float, final: str | None) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "I was charged twice"},
        {"role": "assistant", "content": "I can refund 412.18 to your card. Shall I?"},
        {"role": "user", "content": "Yes please"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "issue_refund",
                        "arguments": json.dumps({"payment_id": "PMT-1", "amount": amount}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"refund_id": "RF-1"}'},
        {"role": "assistant", "content": f"Refunded {amount}."},
    ]
    line: dict[str, Any] = {"case_id": case_id, "messages": messages}
    if final is not None:
        line["final_state"] = final
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


def _case(root: Path, case_id: str, reference: str | None) -> None:
    data: dict[str, Any] = {
        "id": case_id,
        "user": {"opening": "I was charged twice"},
        "initial_state": "fixtures/db.json",
        "tools": ["issue_refund"],
        "expected_state": {"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]},
        "forbidden": [{"tool": "issue_refund", "when": "amount > 412.18"}],
    }
    if reference:
        data["reference_solution"] = reference
    _write(root / "cases" / f"{case_id}.json", json.dumps(data))


@pytest.fixture
def refund_set(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    _write(root / "judgekit-set.yaml", "name: refunds\ntools: [issue_refund]\n")
    _write(
        root / "fixtures" / "db.json", json.dumps({"refunds": {}, "payments": {"PMT-1": {"amount": 412.18}}})
    )
    for name, amount in (("good", 412.18), ("over", 500)):
        _write(
            root / "transcripts" / name / "final.json",
            json.dumps(
                {
                    "refunds": {"RF-1": {"payment_id": "PMT-1", "amount": amount}},
                    "payments": {"PMT-1": {"amount": 412.18}},
                }
            ),
        )
        _reference(root / "transcripts" / name / "reference.jsonl", f"gs-{name}", amount, "final.json")
    _case(root, "gs-good", "transcripts/good/reference.jsonl")
    _case(root, "gs-over", "transcripts/over/reference.jsonl")
    _case(root, "gs-none", None)
    return root


def test_a_broken_reference_is_listed_and_exits_1(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check-references", str(refund_set))
    assert code == 1
    assert "ok               gs-good" in out
    assert "no reference     gs-none" in out
    assert "BROKEN           gs-over" in out
    assert "rule:0: fail (gate) [policy_violation]: forbidden: issue_refund when amount > 412.18" in out
    assert "call 0: issue_refund(amount=500) breaks 'amount > 412.18'" in out
    assert "state: fail (gate) [invalid_arguments]" in out
    assert "3 case(s): 1 ok, 1 broken, 1 without a reference solution, 0 with nothing to check" in out
    assert "needs fixing" in err
    assert "Traceback" not in out + err


def test_json_output(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check-references", str(refund_set), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["summary"] == {"cases": 3, "ok": 1, "broken": 1, "no_reference": 1, "nothing_to_check": 0}
    over = next(r for r in data["results"] if r["case"] == "gs-over")
    assert over["verdict"] == "fail"
    assert {p["check"] for p in over["problems"]} == {"state", "state:collateral", "rule:0"}


def test_all_good_exits_0(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (refund_set / "cases" / "gs-over.json").unlink()
    code, out, _ = run(capsys, "check-references", str(refund_set))
    assert code == 0, out


def test_reference_without_final_state_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reference(refund_set / "transcripts" / "good" / "reference.jsonl", "gs-good", 412.18, None)
    code, out, _ = run(capsys, "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "state: error (gate): no final state to grade: the transcript records no final_state" in out


def test_reference_for_another_case_is_broken(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reference(refund_set / "transcripts" / "good" / "reference.jsonl", "gs-other", 412.18, "final.json")
    code, out, _ = run(capsys, "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "holds no transcript for case 'gs-good' (it has: gs-other)" in out


def _set_trial(path: Path, trial: object) -> None:
    """Rewrite the reference at ``path`` with ``trial`` (``None``: no trial field at all)."""
    line = json.loads(path.read_text(encoding="utf-8"))
    line.pop("trial", None)
    if trial is not None:
        line["trial"] = trial
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


@pytest.mark.parametrize("trial", [0, 1, 7, -2, None])
def test_a_reference_takes_any_trial_number_or_none(
    refund_set: Path, capsys: pytest.CaptureFixture[str], trial: int | None
) -> None:
    _set_trial(refund_set / "transcripts" / "good" / "reference.jsonl", trial)
    code, out, err = run(capsys, "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 0, out + err
    assert out.splitlines()[0].startswith("ok               gs-good")


def test_a_reference_trial_that_is_not_a_number_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "transcripts" / "good" / "reference.jsonl"
    _set_trial(path, "first")
    code, out, _ = run(capsys, "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert f"the reference solution cannot be read: {path}:1: trial: Input should be a valid integer" in out


def test_a_reference_file_with_two_transcripts_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "transcripts" / "good" / "reference.jsonl"
    line = path.read_text(encoding="utf-8")
    path.write_text(line + "\n" + line, encoding="utf-8")  # the blank line between them does not count
    code, out, _ = run(capsys, "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "BROKEN           gs-good" in out
    assert (
        f"reference: error (gate): the reference solution cannot be read: {path}: a reference solution is "
        "one transcript on one line, this file holds 2; keep only the case's reference transcript in it"
    ) in out


def test_a_run_transcript_still_refuses_trial_zero(tmp_path: Path) -> None:
    from judgekit.errors import ProblemsError
    from judgekit.transcript import read_transcripts

    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"case_id": "gs-good", "trial": 0}) + "\n", encoding="utf-8")
    with pytest.raises(ProblemsError, match="trial: Input should be greater than or equal to 1"):
        read_transcripts(path)


def test_a_rule_that_does_not_compile_is_a_load_error(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "cases" / "gs-good.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["forbidden"] = [{"tool": "issue_refund", "when": "amount >"}, {"tool": "FreezeCard"}]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    code, out, err = run(capsys, "check-references", str(refund_set))
    assert code == 2  # the set cannot be loaded: an input error, not a broken reference
    assert out == ""
    lines = err.strip().splitlines()
    assert any(
        f"{path}:" in line and "forbidden.0.when: case 'gs-good': not a valid CEL expression" in line
        for line in lines
    )
    assert any("forbidden.1.tool: case 'gs-good': rule is about tool 'FreezeCard'" in line for line in lines)
    assert "Traceback" not in err


def test_bad_format_is_a_usage_error(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check-references", str(refund_set), "--format", "xml")
    assert code == 2
    assert "--format must be text or json" in err


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check-references", str(tmp_path / "nope"))
    assert code == 2
    assert f"path '{tmp_path / 'nope'}' does not exist" in err


@pytest.mark.skipif(not (AIRDESK / "judgekit-set.yaml").is_file(), reason="example set not present")
def test_example_set_references_all_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check-references", str(AIRDESK))
    assert code == 0, out
    assert (
        out.strip().splitlines()[-1]
        == "26 case(s): 26 ok, 0 broken, 0 without a reference solution, 0 with nothing to check"
    )


def test_help_does_not_import_the_graders() -> None:
    code = (
        "import sys; from judgekit.cli import main\n"
        "try:\n    main(['check-references', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('cel', 'scipy', 'judgekit.graders.rules') if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Run every deterministic grader layer" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "HEAVY:"

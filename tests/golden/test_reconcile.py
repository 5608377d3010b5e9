"""Double resolution: two experts' resolution files compared field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.reconcile import agreed_resolution, reconcile

from .conftest import write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"

A = """
expert: alice
set: small
cases:
  GS-1:
    version: 1
    expected:
      route: [{tool: LookupBalance}]
      sources: [Fees-2026]
    acceptance: States the balance.
  GS-2:
    expected_state:
      refunds:
        - {payment_id: P-1, amount: 412.18, method: original_card}
    forbidden:
      - {tool: FreezeCard, when: "calls > 1"}
      - {tool: InitiateTransfer}
    notes: Alice's reasoning, never compared.
"""


def files(tmp_path: Path, a: str, b: str) -> tuple[Path, Path]:
    return write(tmp_path / "a.yaml", a), write(tmp_path / "b.yaml", b)


def test_identical_resolutions_agree_and_write_the_agreed_file(tmp_path: Path, small_set: Path) -> None:
    # Same content written differently: other rule order, 412.180, re-wrapped text, outcome default.
    b = A.replace("alice", "bob").replace("412.18", "412.180").replace("Alice's reasoning", "Bob's")
    b = b.replace(
        '      - {tool: FreezeCard, when: "calls > 1"}\n      - {tool: InitiateTransfer}',
        '      - {tool: InitiateTransfer}\n      - {tool: FreezeCard, when: "calls > 1"}',
    )
    b = b.replace("acceptance: States the balance.", "acceptance: >\n      States   the\n      balance.")
    b = b.replace("sources: [Fees-2026]", "sources: [Fees-2026]\n      outcome: answer")
    a_path, b_path = files(tmp_path, A, b)
    out = tmp_path / "agreed.yaml"
    result = reconcile(a_path, b_path, set_path=small_set, out=out)
    assert result.findings == []
    assert result.agreed == ["GS-1", "GS-2"]
    agreed = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert agreed["resolved_by"] == ["alice", "bob"]
    assert agreed["cases"]["GS-2"]["notes"] == {
        "alice": "Alice's reasoning, never compared.",
        "bob": "Bob's, never compared.",
    }
    assert agreed["cases"]["GS-1"]["version"] == 1


def test_every_differing_field_is_a_finding_and_nothing_is_written(tmp_path: Path) -> None:
    b = (
        A.replace("alice", "bob")
        .replace("amount: 412.18", "amount: 424.68")
        .replace("acceptance: States the balance.", "acceptance: States the balance and the currency.")
        .replace("      - {tool: InitiateTransfer}\n", "")
        .replace("sources: [Fees-2026]", "sources: [Fees-2026, Rates-2026]")
    )
    a_path, b_path = files(tmp_path, A, b)
    out = tmp_path / "agreed.yaml"
    result = reconcile(a_path, b_path, out=out)
    lines = [f.describe("alice", "bob") for f in result.findings]
    assert lines == [
        "GS-1: acceptance: alice 'States the balance.' | bob 'States the balance and the currency.'",
        'GS-1: expected.sources: only alice: (none); only bob: ["Rates-2026"]',
        "GS-2: expected_state.changes.refunds.added.0.amount.equals: alice 412.18 | bob 424.68",
        'GS-2: forbidden: only alice: [{"tool": "InitiateTransfer"}]; only bob: (none)',
    ]
    assert result.disputed() == ["GS-1", "GS-2"]
    assert not out.exists()
    # Asking for the agreed resolution anyway is the check's "no" (exit 1), not an input error.
    with pytest.raises(JudgekitError, match="4 finding") as raised:
        agreed_resolution(result)
    assert raised.value.exit_code == 1
    code = main(["cases", "reconcile", str(a_path), str(b_path), "--out", str(out)])
    assert code == 1
    assert not out.exists()


def test_a_field_only_one_expert_wrote(tmp_path: Path) -> None:
    b = A.replace("alice", "bob").replace("    acceptance: States the balance.\n", "")
    result = reconcile(*files(tmp_path, A, b))
    assert [f.describe("alice", "bob") for f in result.findings] == [
        "GS-1: acceptance: alice 'States the balance.' | bob (absent)"
    ]


def test_route_is_ordered(tmp_path: Path) -> None:
    a = "expert: a\ncases:\n  X:\n    expected:\n      route: [{tool: T1}, {tool: T2}]\n"
    b = "expert: b\ncases:\n  X:\n    expected:\n      route: [{tool: T2}, {tool: T1}]\n"
    result = reconcile(*files(tmp_path, a, b))
    assert [f.field for f in result.findings] == ["expected.route.0.tool", "expected.route.1.tool"]


def test_different_case_sets_are_named_and_not_compared(tmp_path: Path) -> None:
    b = A.replace("alice", "bob").replace("  GS-2:", "  GS-9:").replace("set: small", "set: other")
    a_path, b_path = files(tmp_path, A, b)
    with pytest.raises(ProblemsError) as info:
        reconcile(a_path, b_path)
    text = str(info.value)
    assert f"{b_path}: set: resolves set 'other' but {a_path} resolves set 'small'" in text
    assert f"only in {a_path} (alice): GS-2; only in {b_path} (bob): GS-9" in text


def test_versions_and_ids_are_checked_against_the_set(tmp_path: Path, small_set: Path) -> None:
    a = A.replace("  GS-2:", "  GS-2:\n    version: 4")
    b = a.replace("alice", "bob")
    with pytest.raises(ProblemsError, match="resolves version 4 but the set has version 1"):
        reconcile(*files(tmp_path, a, b), set_path=small_set)
    a = A.replace("  GS-2:", "  GS-404:")
    with pytest.raises(ProblemsError, match=r"cases not in the golden set: GS-404 \(did you mean 'GS-2'\?\)"):
        reconcile(*files(tmp_path, a, a.replace("alice", "bob")), set_path=small_set)


def test_same_expert_twice_and_version_mismatch(tmp_path: Path) -> None:
    b = A.replace("  GS-1:\n    version: 1", "  GS-1:\n    version: 2")
    with pytest.raises(ProblemsError) as info:
        reconcile(*files(tmp_path, A, b))
    text = str(info.value)
    assert "both files are by 'alice'; double resolution needs two experts" in text
    assert "alice resolved version 1, alice version 2: not the same case" in text


def test_invalid_resolution_fields_are_located(tmp_path: Path) -> None:
    b = "expert: bob\ncases:\n  GS-1:\n    acceptence: typo\n    forbidden: [{}]\n"
    a_path, b_path = files(tmp_path, A, b)
    with pytest.raises(ProblemsError) as info:
        reconcile(a_path, b_path)
    text = str(info.value)
    assert (
        f"{b_path}:4: cases.GS-1.acceptence: unknown field 'acceptence'; did you mean 'acceptance'?" in text
    )
    assert "a forbidden rule needs tool, when, message_pattern or state_when" in text


def test_command_on_the_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLE / "resolutions"
    code = main(
        [
            "cases",
            "reconcile",
            str(folder / "expert-a.yaml"),
            str(folder / "expert-b.yaml"),
            "--set",
            str(EXAMPLE),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1, err
    assert (
        "gs-double-charge: expected_state.changes.refunds.added.0.amount.equals: refunds-policy-owner "
        "412.18 | senior-service-reviewer 424.68"
    ) in out
    assert (
        "GS-SEC-0001: expected.outcome: refunds-policy-owner 'refuse' | senior-service-reviewer 'escalate'"
        in out
    )
    assert "4 case(s), 1 agreed, 3 disputed, 4 finding(s)" in out
    assert "nothing was written" in out


def test_command_json_and_agreement_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_path, b_path = files(tmp_path, A, A.replace("alice", "bob"))
    out = tmp_path / "agreed.yaml"
    code = main(["cases", "reconcile", str(a_path), str(b_path), "--format", "json", "--out", str(out)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["findings"] == []
    assert data["agreed"] == ["GS-1", "GS-2"]
    assert data["written"] == str(out)
    assert out.is_file()


def test_agreement_lists_where_the_set_differs_from_the_agreed_resolution(
    tmp_path: Path, small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # small_set's GS-1: route [LookupBalance], sources [Fees-2026], acceptance "States the balance."
    a = """
expert: alice
cases:
  GS-1:
    expected:
      route: [{tool: LookupBalance}]
      sources: [Fees-2026]
    acceptance: States the balance in the account's currency.
"""
    a_path, b_path = files(tmp_path, a, a.replace("alice", "bob"))
    result = reconcile(a_path, b_path, set_path=small_set)
    assert result.agree
    assert [f.describe("set", "agreed") for f in result.set_updates] == [
        "GS-1: acceptance: set 'States the balance.' | agreed "
        '"States the balance in the account\'s currency."'
    ]
    code = main(["cases", "reconcile", str(a_path), str(b_path), "--set", str(small_set)])
    out = capsys.readouterr().out
    assert code == 0
    assert "update 1 case(s) in the set to the agreed resolution and bump their versions: GS-1" in out
    same = a.replace(" in the account's currency", "")
    a_path, b_path = files(tmp_path, same, same.replace("alice", "bob"))
    assert reconcile(a_path, b_path, set_path=small_set).set_updates == []


def test_resolution_files_and_set_named_as_text(tmp_path: Path, small_set: Path) -> None:
    from judgekit.golden.reconcile import compare_resolutions, read_resolution

    a_path, b_path = files(tmp_path, A, A.replace("alice", "bob"))
    out = tmp_path / "agreed.yaml"
    result = reconcile(str(a_path), str(b_path), set_path=str(small_set), out=str(out))
    assert result.findings == []
    assert out.is_file()
    a, b = read_resolution(str(a_path)), read_resolution(str(b_path))
    assert a.expert == "alice"
    compared = compare_resolutions(a, b, a_path=str(a_path), b_path=str(b_path))
    assert compared.agreed == ["GS-1", "GS-2"]
    assert (compared.a_path, compared.b_path) == (a_path, b_path)

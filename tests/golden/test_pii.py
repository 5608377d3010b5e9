"""The personal-data scanner on planted values, and validate refusing personal data outside candidates."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.golden.pii import (
    iban_valid,
    luhn_valid,
    mask,
    personal_data_problems,
    redact_personal_data,
    scan_text,
)

from .conftest import write


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in scan_text(text)]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        pytest.param("write to jane.doe@gmail.com today", "email", "jane.doe@gmail.com", id="email"),
        pytest.param(
            "mail J.Smith+eval@corp.co.uk.", "email", "J.Smith+eval@corp.co.uk", id="email_plus_tag"
        ),
        pytest.param("call me on +44 7911 123456", "phone", "+44 7911 123456", id="uk_mobile_intl"),
        pytest.param("call 07911 123456 after six", "phone", "07911 123456", id="uk_mobile_national"),
        pytest.param("ring (212) 734-9981", "phone", "(212) 734-9981", id="us_phone"),
        pytest.param("tel +49 30 901820", "phone", "+49 30 901820", id="de_phone"),
        pytest.param("card 4556 7375 8689 9855 please", "card", "4556 7375 8689 9855", id="card_spaced"),
        pytest.param("card 4556-7375-8689-9855", "card", "4556-7375-8689-9855", id="card_hyphens"),
        pytest.param("amex 3412 345678 90127", "card", "3412 345678 90127", id="amex_grouped"),
        pytest.param("IBAN GB82 WEST 1234 5698 7654 32", "iban", "GB82 WEST 1234 5698 7654 32", id="iban_gb"),
        pytest.param("to DE89370400440532013000", "iban", "DE89370400440532013000", id="iban_de"),
        pytest.param("account number 31926819", "account", "31926819", id="account_labelled"),
        pytest.param("acct no. 0012 3456 78", "account", "0012 3456 78", id="account_grouped"),
        pytest.param("12-34-56 31926819 is mine", "account", "12-34-56 31926819", id="sort_code_account"),
        pytest.param("SSN 123-45-6789", "ssn", "123-45-6789", id="ssn_dashed"),
        pytest.param("social security number 123 45 6789", "ssn", "123 45 6789", id="ssn_labelled"),
        pytest.param("NI number AB 12 34 56 C", "ni_number", "AB 12 34 56 C", id="ni_spaced"),
        pytest.param("NINO JG103759A", "ni_number", "JG103759A", id="ni_compact"),
    ],
)
def test_planted_values_are_found(text: str, kind: str, value: str) -> None:
    assert kinds(text) == [(kind, value)]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("write to ben@example.com or a@mailbox.example", id="reserved_email_domains"),
        pytest.param("x@host.test and y@z.invalid", id="reserved_tlds"),
        pytest.param("+44 7700 900101 or 07700 900999", id="ofcom_drama_mobile"),
        pytest.param("020 7946 0123", id="ofcom_drama_london"),
        pytest.param("(212) 555-0142", id="nanp_fictional_555_01xx"),
        pytest.param("card 4556 7375 8689 9856", id="card_fails_luhn"),
        pytest.param("test card 4111 1111 1111 1111 and 4242424242424242", id="published_test_cards"),
        pytest.param("GB82 WEST 1234 5698 7654 33", id="iban_bad_check_digits"),
        pytest.param("666-12-3456 and 900-12-3456 and 123-00-6789", id="ssn_never_issued"),
        pytest.param("QQ 12 34 56 C and GB 12 34 56 A", id="ni_invalid_prefixes"),
        pytest.param("ESC-2026-11-0193 INC-2026-0311 PMT-50104 QX7P2L", id="ticket_and_booking_refs"),
        pytest.param("refund 412.18 on 2026-11-03 at 14:05, seat 12C", id="amounts_dates_seats"),
        pytest.param("order 1234567", id="short_number_unlabelled"),
    ],
)
def test_lookalikes_are_not_flagged(text: str) -> None:
    assert kinds(text) == []


def test_card_is_not_also_a_phone_number() -> None:
    found = scan_text("4556 7375 8689 9855")
    assert [f.kind for f in found] == ["card"]


def test_allow_list_ignores_separators_and_case() -> None:
    text = "new number +81 90 5555 0199, mail Dev@Corp.io"
    assert [f.kind for f in scan_text(text)] == ["phone", "email"]
    assert scan_text(text, allow=["+81-90-5555-0199", "dev@corp.io"]) == []


def test_checksums_against_published_values() -> None:
    assert luhn_valid("79927398713")  # the Luhn algorithm's textbook example
    assert not luhn_valid("79927398710")
    assert not luhn_valid("")
    assert not luhn_valid("12a4")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")  # the IBAN registry's UK example
    assert iban_valid("NL91ABNA0417164300")
    assert not iban_valid("NL91ABNA0417164301")
    assert not iban_valid("XX82WEST12345698765432")


def test_masking_never_shows_the_whole_value() -> None:
    assert mask("4556 7375 8689 9855") == "************9855"
    assert mask("jane.doe@gmail.com") == "j***@gmail.com"
    finding = scan_text("card 4556 7375 8689 9855")[0]
    assert "4556 7375" not in finding.describe()
    assert finding.describe().endswith("9855")


def test_redaction_replaces_every_value_and_keeps_the_rest() -> None:
    text = "I'm jane.doe@gmail.com, card 4556 7375 8689 9855, call +44 7911 123456. Booking QX7P2L."
    redacted, findings = redact_personal_data(text)
    assert redacted == "I'm [EMAIL], card [CARD], call [PHONE]. Booking QX7P2L."
    assert [f.kind for f in findings] == ["email", "card", "phone"]
    assert scan_text(redacted) == []


def test_reviewed_cases_are_problems_and_candidates_warnings(tmp_path: Path) -> None:
    root = tmp_path / "set"
    write(
        root / "cases" / "a.yaml",
        "id: A\ninput: hi\nidentity:\n  persona: x\n  email: real.person@gmail.com\n",
    )
    write(root / "cases" / "b.yaml", "id: B\ninput: 'my card is 4556 7375 8689 9855'\n")
    write(root / "candidates" / "c.yaml", "id: C\ninput: 'SSN 123-45-6789'\nacceptance: 'REVIEW: x'\n")
    case_set = load_case_set(root)
    problems, warnings = personal_data_problems(case_set.cases)
    located = sorted((p.file.name if p.file else "", p.line, p.field) for p in problems)
    assert located == [("a.yaml", 5, "identity.email"), ("b.yaml", 2, "input")]
    assert [(w.file.name if w.file else "", w.field) for w in warnings] == [("c.yaml", "input")]
    assert all("real.person" not in p.message and "4556 7375" not in p.message for p in problems)


def test_cases_in_a_list_file_are_located_by_index(tmp_path: Path) -> None:
    write(tmp_path / "many.yaml", "- id: A\n  input: hi\n- id: B\n  input: 'call +44 7911 123456'\n")
    problems, _ = personal_data_problems(load_case_set(tmp_path).cases)
    assert [(p.line, p.field) for p in problems] == [(4, "input")]


def test_validate_refuses_personal_data_outside_candidates(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(small_set / "cases" / "d.yaml", "id: GS-4\ninput: 'email me at jane.doe@gmail.com'\n")
    code = main(["validate", str(small_set)])
    _out, err = capsys.readouterr()
    assert code == 1
    assert f"{small_set}/cases/d.yaml:2: input: personal data: email address j***@gmail.com." in err
    assert "jane.doe" not in err


def test_validate_warns_about_personal_data_in_candidates(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        small_set / "candidates" / "e.yaml",
        "id: GS-CAND-2\ninput: 'call +44 7911 123456'\nacceptance: 'REVIEW: x'\n",
    )
    code = main(["validate", str(small_set)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "warning:" in err
    assert "personal data in a candidate: phone number" in err
    assert out.strip() == "3 cases valid (+2 candidates)"


def test_manifest_synthetic_values_are_accepted(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(small_set / "cases" / "d.yaml", "id: GS-4\ninput: 'my new number is +81 90 5555 0199'\n")
    assert main(["validate", str(small_set)]) == 1
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "synthetic_values: ['+81 90 5555 0199']\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["validate", str(small_set)]) == 0


def test_bundled_example_validates() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
    case_set = load_case_set(example)
    problems, _ = personal_data_problems(
        case_set.cases, allow=case_set.manifest.synthetic_values if case_set.manifest else ()
    )
    assert problems == []


def test_scan_pii_command_scans_any_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "t.jsonl", '{"messages": [{"role": "user", "content": "card 4556 7375 8689 9855"}]}\n')
    write(tmp_path / "notes.md", "ok line\ncall +44 7911 123456\n")
    write(tmp_path / "clean.sql", "INSERT INTO t VALUES ('ben@example.com', '+44 7700 900101');\n")
    code = main(["scan-pii", str(tmp_path)])
    out, _err = capsys.readouterr()
    assert code == 1
    assert (
        f"{tmp_path}/t.jsonl:1: messages.0.content: card number (passes the Luhn check) ************9855"
        in out
    )
    assert f"{tmp_path}/notes.md:2: phone number *********3456" in out
    assert out.strip().endswith("2 personal-data value(s) in 3 file(s) scanned")
    assert main(["scan-pii", str(tmp_path / "clean.sql")]) == 0
    assert main(["scan-pii", str(tmp_path / "notes.md"), "--allow", "+44 7911 123456"]) == 0


def test_scan_pii_command_reads_the_sets_synthetic_values(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
    code = main(["scan-pii", str(example / "cases"), str(example / "fixtures")])
    out, _err = capsys.readouterr()
    assert code == 0, out
    assert out.strip().startswith("0 personal-data value(s)")


def test_manifest_synthetic_values_of_a_file_named_as_text(small_set: Path) -> None:
    from judgekit.golden.pii import manifest_synthetic_values

    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "synthetic_values: ['+81 90 5555 0199']\n")
    assert manifest_synthetic_values(str(small_set / "cases" / "a.yaml")) == ("+81 90 5555 0199",)

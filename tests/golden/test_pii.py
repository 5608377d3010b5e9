"""The personal-data scanner on planted values, and validate refusing personal data outside candidates."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.golden.pii import (
    case_names,
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
    code = main(["cases", "check", str(small_set)])
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
    code = main(["cases", "check", str(small_set)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "warning:" in err
    assert "personal data in a candidate: phone number" in err
    assert out.strip() == "3 cases valid (+2 candidates)"


def test_manifest_synthetic_values_are_accepted(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(small_set / "cases" / "d.yaml", "id: GS-4\ninput: 'my new number is +81 90 5555 0199'\n")
    assert main(["cases", "check", str(small_set)]) == 1
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "synthetic_values: ['+81 90 5555 0199']\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["cases", "check", str(small_set)]) == 0


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
    code = main(["cases", "scan-pii", str(tmp_path)])
    out, _err = capsys.readouterr()
    assert code == 1
    assert (
        f"{tmp_path}/t.jsonl:1: messages.0.content: card number (passes the Luhn check) ************9855"
        in out
    )
    assert f"{tmp_path}/notes.md:2: phone number *********3456" in out
    assert out.strip().endswith("2 personal-data value(s) in 3 file(s) scanned")
    assert main(["cases", "scan-pii", str(tmp_path / "clean.sql")]) == 0
    assert main(["cases", "scan-pii", str(tmp_path / "notes.md"), "--allow", "+44 7911 123456"]) == 0


def test_scan_pii_command_reads_the_sets_synthetic_values(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
    code = main(["cases", "scan-pii", str(example / "cases"), str(example / "fixtures")])
    out, _err = capsys.readouterr()
    assert code == 0, out
    assert out.strip().startswith("0 personal-data value(s)")


def test_manifest_synthetic_values_of_a_file_named_as_text(small_set: Path) -> None:
    from judgekit.golden.pii import manifest_synthetic_values

    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "synthetic_values: ['+81 90 5555 0199']\n")
    assert manifest_synthetic_values(str(small_set / "cases" / "a.yaml")) == ("+81 90 5555 0199",)


# --------------------------------------------------------------------------- names, addresses, postcodes,
# dates of birth, sort codes


def found(text: str, kind: str) -> list[str]:
    return [f.value for f in scan_text(text) if f.kind == kind]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        pytest.param("Mrs Jane Doe called about her refund", ["Jane Doe"], id="honorific_two_words"),
        pytest.param("Dr. Smith said no", ["Smith"], id="honorific_dotted"),
        pytest.param("spoke to Ms Siobhan O'Brien-Kelly", ["Siobhan O'Brien-Kelly"], id="apostrophe_hyphen"),
        pytest.param("Mr McDonald again", ["McDonald"], id="mc_prefix"),
        pytest.param("Hello, my name is Priya and I need help", ["Priya"], id="my_name_is"),
        pytest.param("Hi, I'm Hana Sato, booking RT4K2M", ["Hana Sato"], id="im_two_words"),
        pytest.param("hello this is Tomas Novak from 14C", ["Tomas Novak"], id="this_is"),
        pytest.param("Name: Ade Okafor", ["Ade Okafor"], id="name_label"),
        pytest.param("Please refund it.\nKind regards,\nGrace Liu\n", ["Grace Liu"], id="sign_off"),
    ],
)
def test_person_names_are_found_by_rule(text: str, names: list[str]) -> None:
    assert found(text, "name") == names


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I'm sorry about the cancellation, Hana.", id="im_sorry"),
        pytest.param("I'm Hana, booking RT4K2M", id="im_one_word_is_too_weak"),
        pytest.param("I'm Gold Tier and This Is Booking QX7P2L", id="capitalised_common_words"),
        pytest.param("call LookupBooking then IssueRefund", id="camelcase_identifiers"),
        pytest.param("tools: lookup_booking, issue_refund", id="snake_case_tools"),
        pytest.param("change the name on PT3R6M to my friend Marta Silva", id="bare_name_no_cue"),
        pytest.param("Thanks, I will wait.", id="thanks_not_a_sign_off"),
    ],
)
def test_name_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "name") == []


def test_a_case_identity_or_persona_name_is_personal_data_wherever_it_appears(tmp_path: Path) -> None:
    write(
        tmp_path / "cases" / "a.yaml",
        "id: A\ninput: Hana wants her refund\nidentity:\n  persona: verified_customer\n"
        "  full_name: Hana Sato\n  customer_id: C-1008\n",
    )
    write(
        tmp_path / "cases" / "b.yaml",
        "id: B\ninput: Can Rahul change seats?\nuser:\n  persona: Mr Rahul Iyer, a gold-tier flyer\n",
    )
    problems, _ = personal_data_problems(load_case_set(tmp_path).cases)
    located = sorted((p.file.name if p.file else "", p.field, p.message.split(".")[0]) for p in problems)
    assert located == [
        ("a.yaml", "identity.full_name", "personal data: person name H*** S***"),
        ("a.yaml", "input", "personal data: person name H***"),
        ("b.yaml", "input", "personal data: person name R***"),
        ("b.yaml", "user.persona", "personal data: person name R*** I***"),
    ]
    assert case_names({"name": "Ann Lee", "persona": "verified_customer", "customer_id": "C-1"}) == (
        "Ann Lee",
    )


def test_a_synthetic_identity_name_is_accepted(tmp_path: Path) -> None:
    write(tmp_path / "cases" / "a.yaml", "id: A\ninput: Hana here\nidentity:\n  name: Hana Sato\n")
    problems, _ = personal_data_problems(load_case_set(tmp_path).cases, allow=["Hana Sato", "Hana"])
    assert problems == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("I live at 221B Baker Street, London", "221B Baker Street", id="uk_house_letter"),
        pytest.param("1600 Pennsylvania Avenue NW, Washington", "1600 Pennsylvania Avenue NW", id="compass"),
        pytest.param("send it to 10 Downing St. please", "10 Downing St.", id="abbreviated"),
        pytest.param("Flat 3, 42 Acacia Gardens", "Flat 3, 42 Acacia Gardens", id="flat_prefix"),
        pytest.param("now at 7 Old Mill Ln", "7 Old Mill Ln", id="lane_abbrev"),
        pytest.param("350 Fifth Ave", "350 Fifth Ave", id="avenue_abbrev"),
    ],
)
def test_postal_addresses_are_found(text: str, value: str) -> None:
    assert found(text, "address") == [value]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I waited 45 minutes down the road", id="lowercase_words"),
        pytest.param("gate 12 then Terminal 5 Car Park", id="not_a_street_word"),
        pytest.param("leaves at 14:05 from Main Street", id="no_house_number"),
        pytest.param("flight SK330 on 2026-12-18, seat 12C", id="refs_and_seats"),
    ],
)
def test_address_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "address") == []


@pytest.mark.parametrize(
    "code",
    [
        # One per Royal Mail PAF outward-code format, then the special non-geographic code.
        pytest.param("M1 1AE", id="A9_9AA"),
        pytest.param("B33 8TH", id="A99_9AA"),
        pytest.param("CR2 6XH", id="AA9_9AA"),
        pytest.param("DN55 1PT", id="AA99_9AA"),
        pytest.param("W1A 0AX", id="A9A_9AA"),
        pytest.param("EC1A 1BB", id="AA9A_9AA"),
        pytest.param("GIR 0AA", id="GIR_0AA"),
    ],
)
def test_uk_postcodes_in_every_paf_format(code: str) -> None:
    assert found(f"my address is London {code}, UK", "postcode") == [code]


def test_uk_postcode_without_its_space_only_when_named() -> None:
    assert found("postcode SW1A1AA", "postcode") == ["SW1A1AA"]
    assert found("booking SW1A1AA", "postcode") == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("booking QX7P2L or RT4K2M", id="booking_refs"),
        pytest.param("QA1 1AA and VX1 1AA", id="first_letter_never_used"),
        pytest.param("EC1A 1CB", id="inward_letter_never_used"),
        pytest.param("flight SK330 and BA117", id="flight_numbers"),
    ],
)
def test_uk_postcode_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "postcode") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("The White House, Washington, DC 20500", "20500", id="after_state"),
        pytest.param("Beverly Hills, CA 90210-1234", "90210-1234", id="zip_plus_4"),
        pytest.param("zip code: 10001", "10001", id="labelled"),
        pytest.param("ZIP+4 20500-0005", "20500-0005", id="labelled_plus_4"),
        pytest.param("1600 Pennsylvania Avenue NW, Washington 20500", "20500", id="same_line_as_address"),
    ],
)
def test_us_zip_codes_in_an_address_context(text: str, value: str) -> None:
    assert found(text, "postcode") == [value]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("order 12345 was refunded", id="bare_five_digits"),
        pytest.param("reference 12345-6789", id="bare_zip_plus_4_shape"),
        pytest.param("PMT-50104 for 189.00", id="payment_ref"),
        pytest.param("1600 Pennsylvania Avenue NW\nticket 20500", id="next_line_is_not_context"),
    ],
)
def test_zip_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "postcode") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("born 12/03/1987 in Leeds", "12/03/1987", id="born_numeric"),
        pytest.param("DOB: 1987-03-12", "1987-03-12", id="dob_iso"),
        pytest.param("D.O.B. 03.12.87", "03.12.87", id="dob_dotted_two_digit_year"),
        pytest.param("date of birth 12 March 1987", "12 March 1987", id="day_month_year"),
        pytest.param("my birthday is March 12th, 1987", "March 12th, 1987", id="month_day_year"),
        pytest.param("I was born on the 3rd of May", "3rd of May", id="no_year"),
    ],
)
def test_dates_of_birth_are_found(text: str, value: str) -> None:
    assert found(text, "dob") == [value]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("flight on 12/03/2026 at 14:05", id="date_without_cue"),
        pytest.param("a birthday trip in two weeks", id="cue_without_date"),
        pytest.param("first-born child, no dates", id="born_without_date"),
    ],
)
def test_date_of_birth_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "dob") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("pay into 12-34-56 tomorrow", "12-34-56", id="bare"),
        pytest.param("sort code 123456", "123456", id="named_compact"),
        pytest.param("Sort code: 40 47 84", "40 47 84", id="named_spaced"),
    ],
)
def test_sort_codes_are_found(text: str, value: str) -> None:
    assert found(text, "sort_code") == [value]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("12-34-567 and 2026-11-03", id="wrong_shape"),
        pytest.param("order 123456", id="bare_six_digits"),
        pytest.param("ESC-2026-11-0193", id="ticket_ref"),
    ],
)
def test_sort_code_lookalikes_are_not_flagged(text: str) -> None:
    assert found(text, "sort_code") == []


def test_names_and_dates_of_birth_are_masked_harder() -> None:
    assert mask("Hana Sato", kind="name") == "H*** S***"
    assert mask("12/03/1987", kind="dob") == "**/**/****"
    assert mask("12-34-56", kind="sort_code") == "**3456"
    (finding,) = scan_text("DOB 12/03/1987")
    assert finding.describe() == "date of birth **/**/****"


def test_redaction_replaces_every_new_kind() -> None:
    text = (
        "Mrs Jane Doe, 221B Baker Street, London NW1 6XE; born 12/03/1987; sort code 12-34-56; "
        "Washington, DC 20500."
    )
    redacted, findings = redact_personal_data(text)
    assert redacted == (
        "Mrs [NAME], [ADDRESS], London [POSTCODE]; born [DATE_OF_BIRTH]; sort code [SORT_CODE]; "
        "Washington, DC [POSTCODE]."
    )
    assert [f.kind for f in findings] == ["name", "address", "postcode", "dob", "sort_code", "postcode"]
    assert scan_text(redacted) == []


_FIRST = st.sampled_from(["Hana", "Priya", "Tomas", "Grace", "Ade", "Siobhan", "Rahul", "Li"])
_LAST = st.sampled_from(["Sato", "Raman", "Novak", "Liu", "Okafor", "O'Brien", "Smith-Jones", "McDonald"])
_PLANTED = st.one_of(
    st.builds(
        lambda h, given, family: f"{h} {given} {family}",
        st.sampled_from(["Mr", "Mrs", "Ms", "Dr"]),
        _FIRST,
        _LAST,
    ),
    st.builds(lambda given, family: f"I'm {given} {family}", _FIRST, _LAST),
    st.builds(
        lambda n, w, s: f"{n} {w} {s}",
        st.integers(1, 99999).map(str),
        st.sampled_from(["Baker", "Acacia", "Pennsylvania", "Old Mill"]),
        st.sampled_from(["Street", "St", "Road", "Avenue", "Lane", "Drive", "Boulevard", "Way", "Court"]),
    ),
    st.from_regex(
        r"(?:[A-PR-UWYZ][0-9]{1,2}|[A-PR-UWYZ][A-HK-Y][0-9]{1,2}|[A-PR-UWYZ][0-9][A-HJKPSTUW]"
        r"|[A-PR-UWYZ][A-HK-Y][0-9][ABEHMNPRVWXY]) [0-9][ABD-HJLNP-UW-Z]{2}",
        fullmatch=True,
    ),
    st.builds(lambda z, p: f"NY {z:05d}{p}", st.integers(0, 99999), st.sampled_from(["", "-6789", "-0001"])),
    st.builds(
        lambda d, m, y, sep: f"DOB {d:02d}{sep}{m:02d}{sep}{y}",
        st.integers(1, 28),
        st.integers(1, 12),
        st.integers(1900, 2025),
        st.sampled_from(["/", "-", "."]),
    ),
    st.builds(lambda a, b, c: f"{a:02d}-{b:02d}-{c:02d}", *(st.integers(0, 99) for _ in range(3))),
)


@given(
    planted=_PLANTED, before=st.sampled_from(["", "Hello. ", "Note: "]), after=st.sampled_from(["", " ok."])
)
@settings(max_examples=300, deadline=None)
def test_masked_and_redacted_output_never_contains_the_detected_value(
    planted: str, before: str, after: str
) -> None:
    text = f"{before}{planted}{after}"
    findings = scan_text(text)
    assert findings, text
    redacted, _ = redact_personal_data(text)
    for f in findings:
        assert f.value not in f.masked
        assert f.value not in f.describe()
        assert f.value not in redacted
    assert scan_text(redacted) == []

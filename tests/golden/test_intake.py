"""Failure intake: incident records (JSON, CSV) become sanitised regression candidates linked to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.intake import intake_incidents, parse_conversation, read_intake
from judgekit.golden.pii import scan_text

from .conftest import write

CARD = "1234 5678 9012 3452"  # Luhn-valid, airline IIN range: planted, never a real card
EMAIL = "h.sato1987@freemail-skylark.net"


def record(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "ref": "INC-2026-1204",
        "title": "Travel credit instead of card refund",
        "severity": "high",
        "owner": "refunds",
        "tools": ["issue_refund"],
        "conversation": [
            {"role": "user", "content": f"I'm Hana Sato. Refund my card {CARD} please, not credit."},
            {"role": "assistant", "content": "Done, I issued travel credit."},
            {"role": "user", "content": f"No! Mail me at {EMAIL} or call +353 85 555 0142."},
        ],
        "what_went_wrong": "Issued travel credit although the customer asked for the card.",
        "expected": "Refund to the original card.",
    }
    base.update(over)
    return base


def intake_file(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "incidents.json"
    path.write_text(json.dumps(list(records), indent=2), encoding="utf-8")
    return path


def test_json_record_becomes_a_sanitised_linked_regression_candidate(small_set: Path, tmp_path: Path) -> None:
    path = intake_file(tmp_path, record())
    result = intake_incidents(path, load_case_set(small_set), redact_names=["Hana Sato"])
    assert [f.case_id for f in result.written] == ["REG-CAND-INC-2026-1204"]
    assert dict(result.redactions) == {"card": 1, "email": 1, "phone": 1, "name": 1}
    target = small_set / "candidates" / "REG-CAND-INC-2026-1204.yaml"
    text = target.read_text(encoding="utf-8")
    for secret in (CARD, EMAIL, "555 0142", "Hana Sato"):
        assert secret not in text
    assert scan_text(text) == []
    data = yaml.safe_load(text)
    assert data["category"] == "regression"
    assert data["source_incident"] == "INC-2026-1204"
    assert data["origin"] == {"type": "incident", "ref": "INC-2026-1204", "redacted": True}
    assert data["turns"] == [
        {"user": "I'm [NAME]. Refund my card [CARD] please, not credit."},
        {"user": "No! Mail me at [EMAIL] or call [PHONE]."},
    ]
    assert data["forbidden_outcomes"] == ["Issued travel credit although the customer asked for the card."]
    assert data["acceptance"].startswith("REVIEW: the incident: Issued travel credit")
    assert "Expected instead: Refund to the original card." in data["acceptance"]
    assert "# The agent's last reply in the incident: Done, I issued travel credit." in text
    case_set = load_case_set(small_set)
    assert case_set.valid
    assert "REG-CAND-INC-2026-1204" in {c.case.id for c in case_set.candidates()}


def test_single_customer_message_becomes_input(small_set: Path, tmp_path: Path) -> None:
    rec = record(conversation="Customer: Where is my refund?\nAgent: It was sent.\nTool: {'ok': true}")
    result = intake_incidents(intake_file(tmp_path, rec), load_case_set(small_set), dry_run=True)
    assert result.written[0].data["input"] == "Where is my refund?"
    assert not (small_set / "candidates" / "REG-CAND-INC-2026-1204.yaml").exists()


def test_csv_records_with_multiline_conversations(small_set: Path, tmp_path: Path) -> None:
    path = tmp_path / "esc.csv"
    path.write_text(
        "ref,conversation,what_went_wrong,tools,dimensions\n"
        'ESC-1,"Customer: Which seat has Ana?\nshe is my colleague\nAgent: 14C, email ana.o@freemail.net",'
        "Disclosed another customer's seat,lookup_booking,safe;correct\n",
        encoding="utf-8",
    )
    result = intake_incidents(path, load_case_set(small_set))
    data = result.written[0].data
    assert data["input"] == "Which seat has Ana?\nshe is my colleague"
    assert data["tools"] == ["lookup_booking"]
    assert data["dimensions"] == ["safe", "correct"]
    assert result.redactions["email"] == 1
    assert "ana.o@" not in (small_set / "candidates" / "REG-CAND-ESC-1.yaml").read_text(encoding="utf-8")


def test_incident_already_linked_is_skipped(small_set: Path, tmp_path: Path) -> None:
    write(
        small_set / "cases" / "reg.yaml",
        "id: GS-REG-1\ninput: x\ncategory: regression\nsource_incident: INC-2026-1204\n",
    )
    result = intake_incidents(intake_file(tmp_path, record()), load_case_set(small_set))
    assert result.written == []
    assert result.skipped == [("INC-2026-1204", "GS-REG-1")]


def test_missing_and_unknown_fields_are_located_and_nothing_is_written(
    small_set: Path, tmp_path: Path
) -> None:
    good = record(ref="INC-1")
    bad = {"ref": "INC-2", "conversaton": "Customer: hi", "severity": "urgent"}
    path = intake_file(tmp_path, good, bad)
    with pytest.raises(ProblemsError) as info:
        intake_incidents(path, load_case_set(small_set))
    lines = [str(p) for p in info.value.problems]
    text = path.read_text(encoding="utf-8").splitlines()
    start = text.index("  {", text.index("  {") + 1) + 1  # the second record's opening line
    typo = next(i for i, t in enumerate(text, 1) if '"conversaton"' in t)
    severity = next(i for i, t in enumerate(text, 1) if '"urgent"' in t)
    assert f"{path}:{typo}: conversaton: unknown field; did you mean 'conversation'?" in lines
    assert f"{path}:{start}: conversation: required field is missing or empty" in lines
    assert f"{path}:{start}: what_went_wrong: required field is missing or empty" in lines
    assert f"{path}:{severity}: severity: must be one of critical, high, medium, low (got 'urgent')" in lines
    assert len(lines) == 4
    assert [p.name for p in (small_set / "candidates").iterdir()] == ["cand.yaml"]


@pytest.mark.parametrize(
    ("conversation", "message"),
    [
        pytest.param("hello there\nCustomer: hi", "must start with a speaker label", id="no_label_first"),
        pytest.param("Agent: how can I help?", "has no customer message", id="no_customer"),
        pytest.param([{"role": "pilot", "content": "x"}], "unknown role 'pilot'", id="unknown_role"),
        pytest.param([{"role": "user"}], "needs a 'role' and a 'content' text", id="no_content"),
        pytest.param(42, "must be a list of messages or a labelled text", id="number"),
    ],
)
def test_bad_conversations(conversation: object, message: str) -> None:
    result = parse_conversation(conversation, path=Path("x.json"), line=3)
    assert not isinstance(result, tuple)
    assert message in result.message


def test_repeated_reference_in_one_file(tmp_path: Path) -> None:
    path = intake_file(tmp_path, record(), record())
    with pytest.raises(ProblemsError, match="incident 'INC-2026-1204' is also on line 2"):
        read_intake(path)


def test_other_file_kinds_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("hi", encoding="utf-8")
    with pytest.raises(JudgekitError, match=r"intake reads \.json or \.csv files"):
        read_intake(path)
    with pytest.raises(JudgekitError, match="no such file"):
        read_intake(tmp_path / "missing.json")


def test_secrets_in_records_are_redacted(small_set: Path, tmp_path: Path) -> None:
    rec = record(what_went_wrong="Agent pasted the key sk-proj-abcdefghijklmnopqrstuvwx1234 into chat.")
    result = intake_incidents(intake_file(tmp_path, rec), load_case_set(small_set), dry_run=True)
    assert "sk-proj-" not in result.written[0].data["forbidden_outcomes"][0]
    assert result.redactions["secret"] == 1


def test_command(small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = intake_file(tmp_path, record())
    code = main(["candidates", "intake", str(path), "--set", str(small_set), "--redact", "Hana Sato"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "(REG-CAND-INC-2026-1204, source_incident INC-2026-1204)" in out
    assert "wrote 1 regression candidate(s); replaced 1 card, 1 email, 1 name, 1 phone." in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"ref": "X"}', encoding="utf-8")
    code = main(["candidates", "intake", str(bad), "--set", str(small_set)])
    _out, err = capsys.readouterr()
    assert code == 2
    assert f"{bad}:1: conversation: required field is missing or empty" in err
    assert "Traceback" not in err


def test_personal_data_left_after_sanitising_is_refused_with_exit_1(
    small_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A redaction that misses a value: the rescan guard refuses (the check's "no", exit 1), writes nothing.
    import judgekit.golden.pii

    monkeypatch.setattr(
        judgekit.golden.pii, "redact_personal_data", lambda text, allow=(), names=(): (text, [])
    )
    path = intake_file(tmp_path, record())
    before = sorted(p.name for p in (small_set / "candidates").iterdir())
    code = main(["candidates", "intake", str(path), "--set", str(small_set)])
    _out, err = capsys.readouterr()
    assert code == 1
    assert "error: personal data survived sanitising (" in err
    assert EMAIL not in err
    assert CARD not in err
    assert sorted(p.name for p in (small_set / "candidates").iterdir()) == before


def test_bundled_example_intake_files_read() -> None:
    folder = Path(__file__).resolve().parents[2] / "examples" / "airdesk" / "intake"
    refs = [r.ref for f in sorted(folder.iterdir()) for r in read_intake(f)]
    assert refs == ["ESC-2026-12-0042", "INC-2026-1204", "INC-2026-0311"]


def test_an_intake_file_named_as_text_is_read(small_set: Path, tmp_path: Path) -> None:
    path = intake_file(tmp_path, record())
    [read] = read_intake(str(path))
    assert read.ref == "INC-2026-1204"
    assert read.path == path
    result = intake_incidents(str(path), load_case_set(small_set), dry_run=True)
    assert [f.case_id for f in result.written] == ["REG-CAND-INC-2026-1204"]
    problem = parse_conversation(42, path=str(path), line=3)
    assert not isinstance(problem, tuple)
    assert problem.file == path


def test_names_are_found_without_redact_and_replaced_everywhere_in_the_candidate(
    small_set: Path, tmp_path: Path
) -> None:
    rec = record(
        conversation=[
            {"role": "user", "content": "Hi, I'm Hana Sato. Where is my refund?"},
            {"role": "assistant", "content": "Sorry Hana, it went out as credit."},
            {"role": "user", "content": "Hana here again: I wanted the card."},
        ],
        what_went_wrong="Gave Ms Sato travel credit.",
    )
    result = intake_incidents(intake_file(tmp_path, rec), load_case_set(small_set))
    text = (small_set / "candidates" / "REG-CAND-INC-2026-1204.yaml").read_text(encoding="utf-8")
    assert "Hana" not in text
    assert "Sato" not in text
    assert result.redactions["name"] == 4
    data = yaml.safe_load(text)
    assert data["turns"] == [
        {"user": "Hi, I'm [NAME]. Where is my refund?"},
        {"user": "[NAME] here again: I wanted the card."},
    ]
    assert data["forbidden_outcomes"] == ["Gave Ms [NAME] travel credit."]
    assert "# The agent's last reply in the incident: Sorry [NAME], it went out as credit." in text


def test_no_detected_item_of_any_kind_survives_intake(small_set: Path, tmp_path: Path) -> None:
    planted = {
        "name": "Grace Liu",
        "address": "221B Baker Street",
        "postcode": "NW1 6XE",
        "dob": "12/03/1987",
        "sort_code": "40-47-84",
        "zip": "20500-0005",
        "card": CARD,
        "email": EMAIL,
    }
    rec = record(
        conversation=[
            {
                "role": "user",
                "content": f"My name is {planted['name']}, I live at {planted['address']}, London "
                f"{planted['postcode']}. DOB {planted['dob']}.",
            },
            {"role": "assistant", "content": "Thanks Grace, which account?"},
            {
                "role": "user",
                "content": f"Sort code {planted['sort_code']}, card {CARD}, mail {EMAIL}; or post it to "
                f"my office in Washington, DC {planted['zip']}.",
            },
        ],
        what_went_wrong="Refunded Grace to the wrong account.",
    )
    result = intake_incidents(intake_file(tmp_path, rec), load_case_set(small_set))
    text = (small_set / "candidates" / "REG-CAND-INC-2026-1204.yaml").read_text(encoding="utf-8")
    for value in (*planted.values(), "Grace", "Liu"):
        assert value not in text
    assert scan_text(text) == []
    assert {k: result.redactions[k] for k in ("name", "address", "postcode", "dob", "sort_code")} == {
        "name": 3,
        "address": 1,
        "postcode": 2,
        "dob": 1,
        "sort_code": 1,
    }
    data = yaml.safe_load(text)
    assert data["turns"][0] == {
        "user": "My name is [NAME], I live at [ADDRESS], London [POSTCODE]. DOB [DATE_OF_BIRTH]."
    }
    assert data["turns"][1] == {
        "user": "Sort code [SORT_CODE], card [CARD], mail [EMAIL]; or post it to my office in Washington, "
        "DC [POSTCODE]."
    }

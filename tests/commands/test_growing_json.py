"""``--format json`` of the commands that grow and guard the golden set, on real inputs.

Each command's standard output must be exactly one versioned JSON document (``json.loads`` of the whole
of it), whose fields carry what the text would say, with the same exit code.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judges.server import Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
MODEL = "openai/test-writer"
KEY = "sk-test-growing-json-0123456789"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """Run a command with ``--format json``; returns the exit code, the parsed document and stderr."""
    code = main([*args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def head(doc: dict[str, Any]) -> tuple[Any, Any]:
    return doc["schema_version"], doc["kind"]


# --------------------------------------------------------------------------- candidates generate


def test_candidates_generate_json(
    serve: Any, small_set: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = json.dumps(
        {
            "should_trigger": ["Please freeze my debit card, I lost it"],
            "must_not_trigger": ["What is my balance?", "Email me at jane.doe@gmail.com about my card"],
        }
    )
    server = serve(lambda body, i: Reply(content=reply))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code, doc, err = run_json(
        capsys,
        "candidates", "generate", "--set", str(small_set), "--tool", "FreezeCard",
        "--description", "Freezes a card", "-n", "2", "--model", MODEL, "--api-base", server.api_base,
    )  # fmt: skip
    assert code == 0, err
    assert head(doc) == (1, "candidates")
    assert (doc["tool"], doc["model"], doc["dry_run"]) == ("FreezeCard", MODEL, False)
    [written] = doc["written"]
    assert written["id"] == "GS-CAND-FreezeCard-T-01"
    assert written["input"] == "Please freeze my debit card, I lost it"
    assert Path(written["file"]).is_file()
    assert doc["duplicates"] == [{"utterance": "What is my balance?", "duplicates": "GS-1"}]
    [pii] = doc["personal_data"]
    assert "jane.doe" not in pii["utterance"]
    assert "email" in pii["found"]
    assert doc["counts"] == {"written": 1, "duplicates": 1, "personal_data": 1}
    assert doc["usage"]["http_calls"] == 1
    assert doc["problems"] == []


# --------------------------------------------------------------------------- intake


def test_intake_json_writes_and_lists_the_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "airdesk"
    shutil.copytree(EXAMPLE, root)
    records = root / "intake" / "incident-2026-1204.json"
    code, doc, err = run_json(
        capsys, "candidates", "intake", str(records), "--set", str(root), "--redact", "Hana Sato"
    )
    assert code == 0, err
    assert head(doc) == (1, "intake")
    assert doc["dry_run"] is False
    [written] = doc["written"]
    assert (written["id"], written["source_incident"]) == ("REG-CAND-INC-2026-1204", "INC-2026-1204")
    text = Path(written["file"]).read_text(encoding="utf-8")
    assert "Hana Sato" not in text
    assert "3452" not in text
    assert doc["skipped"] == [{"ref": "INC-2026-0311", "case": "GS-REG-0107"}]
    assert doc["redactions"] == {"card": 1, "email": 1, "name": 2, "phone": 1}  # "Hana Sato", then "Hana"
    assert doc["problems"] == []


def test_intake_json_malformed_record_is_a_problem(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"ref": "X"}', encoding="utf-8")
    code, doc, err = run_json(capsys, "candidates", "intake", str(bad), "--set", str(small_set))
    assert code == 2
    assert err == ""
    assert doc["kind"] == "intake"
    assert doc["written"] == []
    assert {
        "file": str(bad),
        "line": 1,
        "field": "conversation",
        "message": "required field is missing or empty",
    } in doc["problems"]
    assert not (small_set / "candidates" / "REG-CAND-X.yaml").exists()


# --------------------------------------------------------------------------- scan-pii


def test_scan_pii_json_on_the_bundled_intake_files(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _err = run_json(capsys, "cases", "scan-pii", str(EXAMPLE / "intake"))
    assert code == 1
    assert head(doc) == (1, "pii_scan")
    assert doc["files_scanned"] == 2
    assert doc["values"] == len(doc["findings"]) == 5  # card, phone, 2 emails, the name "I'm Hana Sato"
    assert {
        "file": str(EXAMPLE / "intake" / "incident-2026-1204.json"),
        "line": 11,
        "field": "0.conversation.0.content",
        "message": "card number (passes the Luhn check) ************3452",
    } in doc["findings"]
    assert "1234 5678 9012 3452" not in json.dumps(doc)
    code, doc, _err = run_json(capsys, "cases", "scan-pii", str(EXAMPLE / "cases"), str(EXAMPLE / "fixtures"))
    assert code == 0
    assert doc["values"] == 0
    assert doc["findings"] == []
    assert doc["files_scanned"] > 0


# --------------------------------------------------------------------------- golden reconcile


def test_golden_reconcile_json_on_the_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLE / "resolutions"
    code, doc, _err = run_json(
        capsys,
        "cases", "reconcile", str(folder / "expert-a.yaml"), str(folder / "expert-b.yaml"),
        "--set", str(EXAMPLE),
    )  # fmt: skip
    assert code == 1
    assert head(doc) == (1, "reconciliation")
    assert doc["experts"] == ["refunds-policy-owner", "senior-service-reviewer"]
    assert doc["cases"] == 4
    assert len(doc["agreed"]) == 1
    assert len(doc["disputed"]) == 3
    assert len(doc["findings"]) == 4
    outcome = {(f["case"], f["field"]): (f["a"], f["b"]) for f in doc["findings"]}
    assert outcome[("GS-SEC-0001", "expected.outcome")] == ("refuse", "escalate")
    assert doc["written"] is None


def test_golden_reconcile_bad_format_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLE / "resolutions"
    code = main(
        [
            "cases",
            "reconcile",
            str(folder / "expert-a.yaml"),
            str(folder / "expert-b.yaml"),
            "--format",
            "xml",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == "error: --format must be text or json (got 'xml')\n"


# --------------------------------------------------------------------------- sample and sample-labels


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Results of grading the bundled example's agent-v2 run (deterministic layers)."""
    results = tmp_path_factory.mktemp("graded") / "v2.jsonl"
    code = main(
        [
            "grade", "--cases", str(EXAMPLE), "--transcripts", str(EXAMPLE / "runs" / "agent-v2.jsonl"),
            "--out", str(results), "--no-progress",
        ]
    )  # fmt: skip
    assert code == 0
    return results


def draw(graded: Path, out_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, doc, err = run_json(
        capsys,
        "labels", "sheet", str(graded), "--passing", "5", "--failing", "3", "--seed", "4",
        "--transcripts", str(EXAMPLE / "runs" / "agent-v2.jsonl"), "--out", str(out_dir),
    )  # fmt: skip
    assert code == 0, err
    return doc


def test_sample_json_describes_the_draw_and_the_sheets(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "reviews"
    doc = draw(graded, out_dir, capsys)
    assert head(doc) == (1, "sample")
    assert doc["seed"] == 4
    assert doc["results"] == str(graded)
    assert doc["requested"] == {"passing": 5, "failing": 3}
    assert doc["pools"]["passing"]["drawn"] == 5
    assert doc["pools"]["failing"]["drawn"] == 3
    for pool in doc["pools"].values():
        assert pool["drawn"] == sum(s["drawn"] for s in pool["strata"].values())
        assert pool["available"] == sum(s["available"] for s in pool["strata"].values())
    assert len(doc["items"]) == 8
    assert [i["pool"] for i in doc["items"]] == ["passing"] * 5 + ["failing"] * 3
    assert {i["verdict"] for i in doc["items"][5:]} == {"fail"}
    assert doc["written"] == [str(out_dir / "review-sheet.md"), str(out_dir / "review-sheet.html")]
    sheet = (out_dir / "review-sheet.md").read_text(encoding="utf-8")
    assert doc["sample_id"] in sheet
    ids = re.findall(r"^Reviewer verdict \[([^\]]+)\]: $", sheet, flags=re.MULTILINE)
    assert sorted(ids) == sorted(i["item_id"] for i in doc["items"])
    assert (out_dir / "review-sheet.html").is_file()


def test_sample_labels_json_lists_the_labels_written(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "reviews"
    items = draw(graded, out_dir, capsys)["items"]
    sheet_path = out_dir / "review-sheet.md"
    sheet = sheet_path.read_text(encoding="utf-8").replace("\nReviewer: \n", "\nReviewer: sam\n", 1)
    chosen = {items[0]["item_id"]: "pass", items[1]["item_id"]: "fail", items[-1]["item_id"]: "fail"}
    for item_id, label in chosen.items():
        sheet = sheet.replace(f"Reviewer verdict [{item_id}]: \n", f"Reviewer verdict [{item_id}]: {label}\n")
    sheet_path.write_text(sheet, encoding="utf-8")
    labels = tmp_path / "labels.csv"
    code, doc, err = run_json(capsys, "labels", "read", str(sheet_path), "--out", str(labels))
    assert code == 0, err
    assert head(doc) == (1, "label_sample")
    assert (doc["reviewer"], doc["labelled"]) == ("sam", 3)
    assert doc["written"] == [str(labels)]
    assert sorted(doc["unlabelled"]) == sorted(i["item_id"] for i in items if i["item_id"] not in chosen)
    grader = {i["item_id"]: i["verdict"] for i in items}
    assert {r["item_id"]: (r["grader_verdict"], r["reviewer_label"]) for r in doc["rows"]} == {
        k: (grader[k], v) for k, v in chosen.items()
    }
    assert doc["agree_with_grader"] == sum(1 for k, v in chosen.items() if grader[k] == v)
    assert doc["next"] == f"judgekit calibrate {labels} --judge grader"
    rows = list(csv.DictReader(io.StringIO(labels.read_text(encoding="utf-8"))))
    assert {r["item_id"] for r in rows if r["rater"] == "sam"} == set(chosen)


def test_sample_labels_json_sheet_mistake_is_a_located_problem(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "reviews"
    first = draw(graded, out_dir, capsys)["items"][0]["item_id"]
    sheet_path = out_dir / "review-sheet.md"
    sheet = sheet_path.read_text(encoding="utf-8").replace("\nReviewer: \n", "\nReviewer: sam\n", 1)
    sheet = sheet.replace(f"Reviewer verdict [{first}]: \n", f"Reviewer verdict [{first}]: maybe\n")
    sheet_path.write_text(sheet, encoding="utf-8")
    line = sheet.splitlines().index(f"Reviewer verdict [{first}]: maybe") + 1
    labels = tmp_path / "labels.csv"
    code, doc, err = run_json(capsys, "labels", "read", str(sheet_path), "--out", str(labels))
    assert code == 2
    assert err == ""
    assert doc["kind"] == "label_sample"
    assert (doc["written"], doc["labelled"]) == ([], 0)
    [problem] = doc["problems"]
    assert (problem["file"], problem["line"]) == (str(sheet_path), line)
    assert "is not one of" in problem["message"]
    assert not labels.exists()

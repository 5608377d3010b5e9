"""``import_labels``: each tool's export (tests/fixtures/label_tools) into a label table calibrate reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgekit.api.label_import import import_labels
from judgekit.calibration.labels import parse_labels
from judgekit.errors import JudgekitError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "label_tools"

#: Each tool's fixture with the options that map it (values, item field, rater names, the model as judge).
IMPORTS = {
    "label-studio": (
        "label_studio_export.json",
        {
            "value_map": {"Yes": "pass", "No": "fail"},
            "rater_names": {"alice@example.com": "alice", "12": "bob"},
        },
    ),
    "argilla": (
        "argilla",
        {
            "rater_names": {
                "7c1a6f3e-0b8e-4a57-9a52-3f1d2a6c0a11": "alice",
                "d2f4b9a0-5c3e-4e1b-8f6a-9b7c1e2d3f44": "bob",
            }
        },
    ),
    "langfuse": (
        "langfuse_scores.json",
        {
            "value_map": {"True": "pass", "False": "fail"},
            "item_field": "item_id",
            "rater_names": {"user_alice": "alice", "user_bob": "bob"},
        },
    ),
    "phoenix": (
        "phoenix_span_annotations.json",
        {
            "value_map": {"correct": "pass", "incorrect": "fail"},
            "item_field": "item_id",
            "rater_names": {"VXNlcjoy": "alice", "VXNlcjoz": "bob"},
        },
    ),
}

ALICE = ["pass", "fail", "pass", "pass", "fail", "pass"]
BOB = ["pass", "fail", "fail", "pass", "fail", "pass"]
JUDGE = ["pass", "pass", "fail", "pass", "fail", "pass"]
ITEMS = ["C-1#0", "C-1#1", "C-2#0", "C-3#0", "C-4#0", "C-5#0"]


@pytest.mark.parametrize("tool", list(IMPORTS))
def test_each_tools_export_becomes_a_label_table_with_its_annotators(tool: str, tmp_path: Path) -> None:
    name, options = IMPORTS[tool]
    out = tmp_path / "labels.csv"
    document = import_labels(tool, FIXTURES / name, out=out, model_rater="judge", **options)
    assert (document.written, document.exit_code, document.problems) == (True, 0, [])
    assert document.raters == {"alice": 6, "bob": 6, "judge": 6}
    assert document.next == f"judgekit calibrate {out} --judge judge --experts alice,bob"
    table = parse_labels(out.read_bytes(), source=out)
    for rater, labels in (("alice", ALICE), ("bob", BOB), ("judge", JUDGE)):
        got = [table.label(item, rater) for item in table.items]
        assert got == labels, rater
    assert [i.item_id for i in table.items] == ITEMS
    assert table.case_of()[table.items[1]] == "C-1"  # both trials of case C-1 resample together


def test_the_langfuse_csv_export_reads_like_its_json(tmp_path: Path) -> None:
    _, options = IMPORTS["langfuse"]
    a = import_labels("langfuse", FIXTURES / "langfuse_scores.json", out=tmp_path / "a.jsonl", **options)
    b = import_labels("langfuse", FIXTURES / "langfuse_scores.csv", out=tmp_path / "b.jsonl", **options)
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    assert (
        a.left_out
        == b.left_out
        == {
            "API scores (Langfuse source API: neither an annotator's nor known to be a model's)": 1,
            "model scores (Langfuse source EVAL; --model-rater NAME imports them as that rater)": 6,
        }
    )
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert first == {
        "item_id": "C-1#0",
        "criterion": "resolved",
        "rater": "alice",
        "label": "pass",
        "case_id": "C-1",
        "notes": "checked the refund",
    }


def test_a_phoenix_jsonl_export_locates_problems_by_line(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "phoenix_span_annotations.json").read_text())
    lines = [json.dumps(a) for a in doc["data"]]
    (tmp_path / "ann.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "labels.csv"
    document = import_labels("phoenix", tmp_path / "ann.jsonl", out=out, item_field="item_id")
    assert (document.written, document.exit_code) == (False, 2)
    assert not out.exists()
    assert [(p.line, p.field) for p in document.problems][:2] == [(1, "result"), (2, "result")]
    assert "'correct' is not a label of the scale" in document.problems[0].message


def test_accept_skipped_writes_what_mapped_and_still_lists_the_rest(tmp_path: Path) -> None:
    tasks = json.loads((FIXTURES / "label_studio_export.json").read_text())
    del tasks[0]["data"]["item_id"]
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    options = {"value_map": {"Yes": "pass", "No": "fail"}}
    refused = import_labels("label-studio", tmp_path / "export.json", out=tmp_path / "l.csv", **options)
    assert (refused.written, refused.exit_code, refused.labels) == (False, 2, 10)
    assert [str(p) for p in refused.problems] == [
        f"{tmp_path / 'export.json'}: [0].data: task 101 has no 'item_id' field (the judgekit item id: "
        "case#trial); name the field that holds it with --item-field"
    ]
    accepted = import_labels(
        "label-studio",
        tmp_path / "export.json",
        out=tmp_path / "l.csv",
        accept_skipped=True,
        **options,
    )
    assert (accepted.written, accepted.exit_code, len(accepted.problems)) == (True, 0, 1)
    assert len(parse_labels((tmp_path / "l.csv").read_bytes(), source=tmp_path / "l.csv").rows) == 10


def test_an_argilla_folder_missing_its_records_is_refused(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "argilla", tmp_path / "ds")
    (tmp_path / "ds" / "records.json").unlink()
    with pytest.raises(
        JudgekitError, match=r"no records.json: not a Dataset.to_disk folder, or it was written"
    ):
        import_labels("argilla", tmp_path / "ds", out=tmp_path / "l.csv")


@pytest.mark.parametrize(
    ("tool", "source", "out", "message"),
    [
        ("labelstudio", "label_studio_export.json", "l.csv", "unknown annotation tool 'labelstudio'"),
        ("label-studio", "label_studio_export.json", "l.txt", "a label table is a .csv or .jsonl file"),
        (
            "langfuse",
            "argilla/.argilla/dataset.json",
            "l.csv",
            "not Langfuse score export: expected a JSON list",
        ),
        (
            "phoenix",
            "argilla",
            "l.csv",
            "cannot tell the Phoenix span-annotation export's format from its name",
        ),
        (
            "argilla",
            "label_studio_export.json",
            "l.csv",
            "an Argilla export is the folder Dataset.to_disk(path) wrote",
        ),
        ("label-studio", "missing.json", "l.csv", "missing.json"),
    ],
)
def test_inputs_that_are_not_the_tools_export_are_refused(
    tool: str, source: str, out: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(JudgekitError) as info:
        import_labels(tool, FIXTURES / source, out=tmp_path / out)
    assert message in info.value.message


def test_an_export_with_nothing_to_import_says_what_was_left_out(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(
        json.dumps([{"name": "q", "source": "EVAL", "traceId": "t", "value": 1}])
    )
    with pytest.raises(JudgekitError, match=r"no label to import \(left out: 1 model scores"):
        import_labels("langfuse", tmp_path / "s.json", out=tmp_path / "l.csv")


def test_a_malformed_json_export_is_one_located_error(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text('[{"id": 1,')
    with pytest.raises(JudgekitError, match=r"e\.json:1"):
        import_labels("label-studio", tmp_path / "e.json", out=tmp_path / "l.csv")


def test_a_phoenix_dataframe_csv_reads_its_flat_columns_and_says_why_metadata_is_unread(
    tmp_path: Path,
) -> None:
    """``get_span_annotations_dataframe(...).to_csv()``: span_id index, ``result.*`` columns, dict text."""
    csv_text = (
        "span_id,annotation_name,annotator_kind,result.label,result.score,result.explanation,metadata,"
        "identifier,source,user_id\n"
        "5f3a1c00,resolved,HUMAN,pass,1.0,refunded,{'item_id': 'C-1#0'},,APP,VXNlcjoy\n"
        "5f3a1c00,resolved,HUMAN,fail,0.0,,{'item_id': 'C-1#0'},,APP,VXNlcjoz\n"
    )
    (tmp_path / "ann.csv").write_text(csv_text)
    done = import_labels("phoenix", tmp_path / "ann.csv", out=tmp_path / "l.csv")
    assert (done.written, done.raters) == (True, {"VXNlcjoy": 1, "VXNlcjoz": 1})
    table = parse_labels((tmp_path / "l.csv").read_bytes(), source=tmp_path / "l.csv")
    assert [(r.item.item_id, r.label, r.notes) for r in table.rows] == [
        ("5f3a1c00", "pass", "refunded"),
        ("5f3a1c00", "fail", None),
    ]
    refused = import_labels("phoenix", tmp_path / "ann.csv", out=tmp_path / "m.csv", item_field="item_id")
    assert [(p.line, p.field) for p in refused.problems] == [(2, ""), (3, "")]
    assert (
        "its metadata is text, not a JSON object, as DataFrame.to_csv writes it"
        in refused.problems[0].message
    )

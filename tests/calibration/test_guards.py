from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judgekit.calibration.guards import (
    USAGE_FILE,
    check_few_shot_overlap,
    check_not_selection_set,
    check_rate_population,
    load_usage,
    parse_few_shot,
    random_sample_only,
    record_selection,
)
from judgekit.calibration.labels import parse_labels
from judgekit.errors import JudgekitError, ProblemsError


def table(rows: list[str], header: str = "item_id,rater,label,provenance"):
    return parse_labels(("\n".join([header, *rows]) + "\n").encode(), source=Path("labels.csv"))


def test_provenance_keeps_only_random_items():
    t = table(
        [
            "c1,e1,fail,random",
            "c1,judge,fail,random",
            "c2,e1,pass,discovery",
            "c2,judge,fail,",
            "c3,e1,pass,",
            "c3,judge,pass,random",
        ]
    )
    kept, summary = random_sample_only(t)
    assert (summary.random, summary.discovery) == (2, 1)
    assert {r.item.item_id for r in kept.rows} == {"c1", "c3"}
    assert "hand-picked" in kept.notes[-1]
    assert kept.sha256 == t.sha256


def test_no_provenance_keeps_everything_with_a_note():
    t = table(["c1,e1,fail", "c1,judge,fail"], header="item_id,rater,label")
    kept, summary = random_sample_only(t)
    assert kept is t
    assert summary.unspecified == 1
    assert "not recorded" in summary.note


def test_partial_provenance_is_refused_with_the_line():
    t = table(["c1,e1,fail,random", "c1,judge,fail,random", "c2,e1,pass,", "c2,judge,pass,"])
    with pytest.raises(ProblemsError) as exc:
        random_sample_only(t)
    assert exc.value.problems[0].line == 4
    assert "c2 has no provenance" in str(exc.value)
    assert exc.value.exit_code == 2  # an incomplete table is an input error, not a refusal


def test_all_discovery_is_refused():
    t = table(["c1,e1,fail,discovery", "c1,judge,fail,discovery"])
    with pytest.raises(JudgekitError, match="random production sample") as exc:
        random_sample_only(t)
    assert exc.value.exit_code == 1  # the guard refused the labels


def test_bad_provenance_value_and_conflict_are_located():
    with pytest.raises(ProblemsError, match="'handpicked' is not one of") as exc:
        table(["c1,e1,fail,handpicked"])
    assert exc.value.problems[0].line == 2
    with pytest.raises(ProblemsError, match="an item has one provenance"):
        table(["c1,e1,fail,random", "c1,judge,fail,discovery"])


def test_few_shot_overlap_by_item_case_and_text():
    t = parse_labels(
        b"item_id,case_id,rater,label\nc1#1,c1,e1,fail\nc1#1,c1,judge,fail\nc2#1,c2,e1,pass\nc2#1,c2,judge,pass\n",
        source=Path("labels.csv"),
    )
    shots = parse_few_shot(
        "\n".join(
            [
                json.dumps({"item_id": "c1#1", "label": "fail"}),
                json.dumps({"case_id": "c2"}),
                json.dumps({"text": "The  refund was ISSUED."}),
                json.dumps({"item_id": "other#1"}),
            ]
        ),
        source=Path("shots.jsonl"),
    )
    with pytest.raises(ProblemsError) as exc:
        check_few_shot_overlap(
            shots, t, item_texts={"c2#1": "the refund was issued."}, source=Path("shots.jsonl")
        )
    problems = exc.value.problems
    assert exc.value.exit_code == 1  # leakage found: the guard refused
    assert [(p.line, p.field) for p in problems] == [(1, "item_id"), (2, "case_id"), (3, "text")]
    assert "shown the answer to a test item" in problems[0].message
    # examples from elsewhere pass
    check_few_shot_overlap(shots[3:], t)


def test_few_shot_parse_errors_are_located():
    with pytest.raises(ProblemsError) as exc:
        parse_few_shot('{"item_id": "a", "bogus": 1}\n{}\nnot json\n', source=Path("s.jsonl"))
    assert exc.value.exit_code == 2
    assert [(p.line, p.field) for p in exc.value.problems] == [(1, "bogus"), (2, ""), (3, "")]


def test_selection_set_is_recorded_and_then_refused(tmp_path: Path):
    t = table(["c1,e1,fail,random", "c1,judge,fail,random"])
    check_not_selection_set(t, load_usage(tmp_path))  # nothing recorded yet
    entry = record_selection(
        tmp_path,
        label_sha256=t.sha256,
        label_name="labels.csv",
        candidates=["fp-a", "fp-b"],
        chosen="fp-b",
        now=datetime(2026, 1, 2, tzinfo=UTC),
    )
    assert (tmp_path / USAGE_FILE).is_file()
    assert load_usage(tmp_path) == [entry]
    with pytest.raises(JudgekitError, match="development set") as exc:
        check_not_selection_set(t, load_usage(tmp_path))
    assert exc.value.exit_code == 1  # the guard refused the labels
    assert "2026-01-02" in str(exc.value)
    assert "fp-a, fp-b" in str(exc.value)
    other = table(["c9,e1,fail,random", "c9,judge,fail,random"])
    check_not_selection_set(other, load_usage(tmp_path))


def test_selection_needs_two_candidates(tmp_path: Path):
    with pytest.raises(JudgekitError, match="at least two"):
        record_selection(tmp_path, label_sha256="x", label_name="l", candidates=["a"])
    with pytest.raises(JudgekitError, match="not among"):
        record_selection(tmp_path, label_sha256="x", label_name="l", candidates=["a", "b"], chosen="c")


def test_broken_ledger_is_reported(tmp_path: Path):
    (tmp_path / USAGE_FILE).write_text('{"label_sha256": "x"}\n')
    with pytest.raises(ProblemsError, match=USAGE_FILE):
        load_usage(tmp_path)


def test_failure_rate_on_calibration_items_is_refused():
    with pytest.raises(JudgekitError, match="2 of the 3 items") as exc:
        check_rate_population(["a", "b", "c"], ["b", "c", "z"])
    assert "fresh random production sample" in str(exc.value)
    assert exc.value.exit_code == 1  # the guard refused the items
    check_rate_population(["p", "q"], ["b", "c"])
    with pytest.raises(JudgekitError, match="at least one item") as empty:
        check_rate_population([], ["b"])
    assert empty.value.exit_code == 2  # nothing to estimate on: an input error


def test_few_shot_and_usage_paths_named_as_text(tmp_path: Path):
    shots_file = tmp_path / "shots.jsonl"
    shots_file.write_text(json.dumps({"item_id": "c1#1", "label": "fail"}) + "\n")
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"item_id,case_id,rater,label\nc1#1,c1,e1,fail\nc1#1,c1,judge,fail\n")
    t = parse_labels(labels.read_bytes(), source=str(labels))
    shots = parse_few_shot(shots_file.read_text(), source=str(shots_file))
    with pytest.raises(ProblemsError, match=r"shots\.jsonl:1: item_id") as exc:
        check_few_shot_overlap(shots, t, source=str(shots_file))
    assert exc.value.problems[0].file == shots_file
    entry = record_selection(
        str(tmp_path), label_sha256=t.sha256, label_name="labels.csv", candidates=["fp-a", "fp-b"]
    )
    assert (tmp_path / USAGE_FILE).is_file()
    assert load_usage(str(tmp_path)) == [entry]

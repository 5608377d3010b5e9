"""``judgekit.api.labels.labels_from_results``: a results file's judge verdicts as the judge's label rows.

The results are real: the bundled example's calibration sample graded with its judge (replayed from the
cassette), as ``judgekit grade --config examples/airdesk/judge.yaml --cassette ...`` writes them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

import judgekit
from judgekit.api.labels import labels_from_results
from judgekit.calibration.labels import parse_labels
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.review_labels import trial_item_id

AIRDESK = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
EXPERTS = ["synthetic-expert-a", "synthetic-expert-b"]
#: The example judge's fingerprint (judge.yaml replayed from its cassette), as its results record it.
FINGERPRINT = "39b3e198f6d5684227975ba83ae0027e4a399053cbf2f9d93fdf61a797614c74"
JUDGE = f"judge-{FINGERPRINT[:12]}"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's calibration sample graded with its judge: 104 trials, 600 judge verdicts."""
    results = tmp_path_factory.mktemp("graded") / "calibration-sample.jsonl"
    sample, cassette = (
        AIRDESK / "calibration" / "sample.jsonl",
        AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
    )
    main(
        [
            "-q", "grade", "--cases", str(AIRDESK), "--transcripts", str(sample),
            "--config", str(AIRDESK / "judge.yaml"), "--cassette", str(cassette),
            "--out", str(results), "--no-progress",
        ]
    )  # fmt: skip
    assert len(results.read_text(encoding="utf-8").splitlines()) == 104
    return results


@pytest.fixture(scope="module")
def experts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's two synthetic experts' labels, each item named as a graded trial (case#trial).

    The bundled table names the calibration sample's items ``cal:<case>:t<trial>`` (the demo's own ids);
    renamed here with the one function that spells a trial's item id.
    """
    text = (AIRDESK / "labels" / "expert-labels.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        case, trial = re.fullmatch(r"cal:(.+):t(\d+)", row["item_id"]).groups()  # type: ignore[union-attr]
        row["item_id"] = trial_item_id(case, int(trial))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = tmp_path_factory.mktemp("experts") / "expert-labels.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def edited(graded: Path, tmp_path: Path, edit) -> Path:
    """A copy of the real results with ``edit(line_number, line)`` applied to each parsed line."""
    lines = [json.loads(t) for t in graded.read_text(encoding="utf-8").splitlines()]
    for n, line in enumerate(lines):
        edit(n, line)
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_every_judge_verdict_is_a_label_row_named_as_the_review_sheet_names_trials(graded, tmp_path):
    out = tmp_path / "judge.csv"
    doc = labels_from_results(graded, out=out)
    table = parse_labels(out.read_bytes(), source=out)
    assert table.raters == (JUDGE,)
    assert table.fingerprints() == {JUDGE: FINGERPRINT}
    assert (doc.rows, len(table.rows)) == (600, 600)
    assert doc.by_label == {"pass": 524, "fail": 67, "insufficient_information": 9}  # the abstain label kept
    assert (
        doc.untrusted == 600
    )  # no record trusted the judge when graded: its verdicts are labels all the same
    assert doc.left_out == {}
    assert doc.raters == {FINGERPRINT: JUDGE}
    first = json.loads(graded.read_text(encoding="utf-8").splitlines()[0])
    item = trial_item_id(first["case"]["id"], first["trial"])
    assert out.read_text(encoding="utf-8").splitlines()[:2] == [
        "item_id,criterion,rater,label,case_id,fingerprint",
        f"{item},no_false_success,{JUDGE},pass,{first['case']['id']},{FINGERPRINT}",
    ]
    assert doc.next == (
        f"judgekit calibrate {out} --judge {JUDGE} --experts NAME[,NAME...] (add the experts' rows first, "
        "or use --join)"
    )


def test_joined_with_the_experts_it_calibrates_to_the_demos_figures(graded, experts, tmp_path):
    out = tmp_path / "labels.csv"
    doc = labels_from_results(graded, out=out, join=experts)
    assert (doc.joined_rows, doc.rows, doc.unmatched) == (1200, 600, 0)
    assert doc.next == f"judgekit calibrate {out} --judge {JUDGE} --experts {','.join(EXPERTS)}"
    options = judgekit.CalibrationOptions(judge=JUDGE, experts=EXPERTS, records=tmp_path)
    calibration = judgekit.calibrate(out, options=options)
    # the demo's calibration of the same judge on the same sample: TPR 0.969 (n=65), TNR 0.994 (n=509)
    assert (calibration.tpr.value, calibration.tpr.n) == (pytest.approx(63 / 65), 65)
    assert (calibration.tnr.value, calibration.tnr.n) == (pytest.approx(506 / 509), 509)
    assert calibration.record is not None
    assert calibration.record.fingerprint == FINGERPRINT
    assert calibration.result.gate.trusted


def test_a_join_keeps_only_the_items_and_criteria_the_experts_labelled(graded, experts, tmp_path):
    few = tmp_path / "few.csv"
    few.write_text(
        "".join(experts.read_text(encoding="utf-8").splitlines(keepends=True)[:9]), encoding="utf-8"
    )
    doc = labels_from_results(graded, out=tmp_path / "labels.csv", join=few)
    assert (doc.joined_rows, doc.rows, doc.unmatched) == (8, 4, 0)
    assert doc.left_out == {"not_in_join": 596}


def test_skipped_criteria_and_judge_errors_are_left_out_and_counted(graded, tmp_path):
    def edit(n: int, line: dict) -> None:
        judged = [c for c in line["checks"] if c["check_id"].startswith("criterion:")]
        if n == 0:
            judged[0].update(verdict="error", reason="the judge's reply could not be parsed")
        if n == 1:
            judged[0].update(verdict="not_evaluated", reason="the criterion does not apply to this case")

    doc = labels_from_results(edited(graded, tmp_path, edit), out=tmp_path / "judge.csv")
    assert doc.left_out == {"error": 1, "not_evaluated": 1}
    assert doc.rows == 598


def test_criteria_choose_what_is_written(graded, tmp_path):
    doc = labels_from_results(
        graded, out=tmp_path / "j.csv", criteria=["no_false_success", "case.acceptance"]
    )
    assert doc.criteria == ["no_false_success", "case.acceptance"]
    assert doc.rows == 104 + 44
    assert doc.left_out == {"not_in_criteria": 600 - 148}


def test_an_unknown_criterion_is_refused_with_the_judged_ones(graded, tmp_path):
    with pytest.raises(
        JudgekitError,
        match=r"^--criteria: 'honest' not judged in .*; its judge's criteria: "
        r"no_false_success, no_invented_results, discloses_failures, ",
    ):
        labels_from_results(graded, out=tmp_path / "j.csv", criteria=["honest"])


def test_a_named_rater_is_the_judges_name(graded, tmp_path):
    doc = labels_from_results(graded, out=tmp_path / "j.csv", rater="judge")
    assert doc.raters == {FINGERPRINT: "judge"}


def test_two_judges_get_a_name_each_and_a_single_rater_name_is_refused(graded, tmp_path):
    other = "ab" * 32

    def edit(n: int, line: dict) -> None:
        if n % 2:
            line["judge_fingerprint"]["hex"] = other

    results = edited(graded, tmp_path, edit)
    doc = labels_from_results(results, out=tmp_path / "j.csv")
    assert doc.raters == {FINGERPRINT: JUDGE, other: "judge-abababababab"}
    with pytest.raises(
        JudgekitError,
        match=r"the results hold the verdicts of 2 judges \(fingerprints "
        r"39b3e198f6d5, abababababab\); --rater names one judge: leave it out",
    ):
        labels_from_results(results, out=tmp_path / "j.csv", rater="judge")


def test_results_without_a_judge_are_refused(tmp_path):
    results = tmp_path / "deterministic.jsonl"
    grade = ["grade", "--cases", str(AIRDESK), "--transcripts", str(AIRDESK / "runs" / "agent-v2.jsonl")]
    main(["-q", *grade, "--out", str(results), "--no-progress"])
    assert results.stat().st_size > 0
    with pytest.raises(
        JudgekitError,
        match=r"no judge verdict in the results \(no rubric criterion checks\); "
        r"grade with a judge",
    ):
        labels_from_results(results, out=tmp_path / "j.csv")
    assert not (tmp_path / "j.csv").exists()


def test_only_errors_leave_nothing_to_write(graded, tmp_path):
    def edit(n: int, line: dict) -> None:
        for check in line["checks"]:
            if check["check_id"].startswith("criterion:"):
                check.update(verdict="error", reason="judge unreachable")

    with pytest.raises(JudgekitError, match=r"no judge verdict to write as a label \(600 error\)$"):
        labels_from_results(edited(graded, tmp_path, edit), out=tmp_path / "j.csv")


def test_a_join_table_holding_the_judges_rater_is_refused(graded, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text(f"item_id,criterion,rater,label\nx#1,c,{JUDGE},pass\n", encoding="utf-8")
    with pytest.raises(
        JudgekitError, match=rf"t.csv: already holds rater '{JUDGE}'; name the judge with --rater"
    ):
        labels_from_results(graded, out=tmp_path / "j.csv", join=table)


def test_a_join_table_sharing_no_item_is_refused(graded, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("item_id,criterion,rater,label\ncal:gs-double-charge:t1,no_false_success,alice,pass\n")
    with pytest.raises(
        JudgekitError,
        match=r"no \(item_id, criterion\) of it has a judge verdict in .*; item "
        r"ids are case#trial",
    ):
        labels_from_results(graded, out=tmp_path / "j.csv", join=table)


def test_a_broken_results_line_is_located(graded, tmp_path):
    results = tmp_path / "broken.jsonl"
    results.write_text(graded.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(ProblemsError, match=r"broken.jsonl:105"):
        labels_from_results(results, out=tmp_path / "j.csv")

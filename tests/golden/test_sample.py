"""Review samples: seeded stratified draws, review sheets (Markdown, HTML) and labels read back."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.calibration.labels import parse_labels
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.sample import (
    allocate,
    draw_sample,
    labels_csv,
    read_review_sheet,
    render_html,
    render_markdown,
    resolve_transcripts,
)
from judgekit.results import (
    CaseRef,
    TrialSource,
    dump_result_line,
    make_result_line,
    read_results,
    sha256_text,
)
from judgekit.verdict import CheckResult, Grade, Verdict

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"

# (case id, slice, verdicts of trials 1..4)
PLAN = [
    ("A-1", "refunds", "PPPF"),
    ("A-2", "refunds", "PPFF"),
    ("A-3", "refunds", "PPPP"),
    ("B-1", "privacy", "PFPE"),
    ("B-2", "privacy", "FFFF"),
    ("C-1", "bags", "PPPP"),
]
CODES = {"P": Verdict.PASS, "F": Verdict.FAIL, "E": Verdict.ERROR}


def build_run(folder: Path, *, content: dict[str, str] | None = None, order_seed: int | None = None) -> Path:
    """Write transcripts.jsonl and results.jsonl; results name their transcript's file, line and hash."""
    folder.mkdir(parents=True, exist_ok=True)
    transcripts = folder / "transcripts.jsonl"
    results = folder / "results.jsonl"
    t_lines: list[str] = []
    r_lines: list[str] = []
    rows = [(c, s, t, v) for c, s, vs in PLAN for t, v in enumerate(vs, start=1)]
    if order_seed is not None:
        random.Random(order_seed).shuffle(rows)
    for case_id, slice_name, trial, code in rows:
        text = (content or {}).get(f"{case_id}#{trial}", f"answer of {case_id} trial {trial}")
        transcript = {
            "case_id": case_id,
            "trial": trial,
            "messages": [
                {"role": "user", "content": f"question {case_id}"},
                {"role": "assistant", "content": text},
            ],
        }
        raw = json.dumps(transcript)
        t_lines.append(raw)
        verdict = CODES[code]
        check = CheckResult(
            check_id="state",
            layer="state",
            verdict=verdict,
            reason="ok" if verdict is Verdict.PASS else "a | reason",
        )
        line = make_result_line(
            run_id="run-1",
            case=CaseRef(id=case_id, version=1, slice=slice_name),
            grade=Grade(case_id=case_id, trial=trial, verdict=verdict, checks=(check,)),
            source=TrialSource(file=str(transcripts), line=len(t_lines), sha256=sha256_text(raw + "\n")),
        )
        r_lines.append(dump_result_line(line))
    transcripts.write_text("\n".join(t_lines) + "\n", encoding="utf-8")
    results.write_text("\n".join(r_lines) + "\n", encoding="utf-8")
    return results


@given(
    sizes=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 30), min_size=1),
    n=st.integers(0, 80),
    seed=st.integers(0, 1000),
)
@settings(max_examples=200, deadline=None)
def test_allocation_invariants(sizes: dict[str, int], n: int, seed: int) -> None:
    out = allocate(sizes, n, random.Random(seed))
    assert set(out) == set(sizes)
    assert sum(out.values()) == min(n, sum(sizes.values()))
    assert all(0 <= out[s] <= sizes[s] for s in sizes)
    if n >= len(sizes):
        assert all(v >= 1 for v in out.values())  # every slice is read
    else:
        assert all(v <= 1 for v in out.values())


def test_allocation_is_proportional_beyond_one_each() -> None:
    out = allocate({"big": 81, "small": 11}, 12, random.Random(0))
    assert out == {"big": 10, "small": 2}  # 1 + 1, then 10 split 80:10 -> 8.9 / 1.1


def test_draw_is_stratified_seeded_and_independent_of_file_order(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path / "a"))
    first = draw_sample(run, passing=4, failing=3, seed=11)
    again = draw_sample(run, passing=4, failing=3, seed=11)
    shuffled = draw_sample(
        read_results(build_run(tmp_path / "b", order_seed=5)), passing=4, failing=3, seed=11
    )
    ids = [i.item_id for i in first.items]
    assert ids == [i.item_id for i in again.items] == [i.item_id for i in shuffled.items]
    assert first.sample_id == shuffled.sample_id
    passing = [i for i in first.items if i.pool == "passing"]
    failing = [i for i in first.items if i.pool == "failing"]
    assert len(passing) == 4
    assert len(failing) == 3
    assert {i.stratum for i in passing} == {"refunds", "privacy", "bags"}
    assert {i.stratum for i in failing} == {"refunds", "privacy"}
    assert all(i.line.verdict is Verdict.PASS for i in passing)
    assert all(i.line.verdict is Verdict.FAIL for i in failing)
    assert first.not_drawable == {"error": 1}
    assert first.strata["passing"]["refunds"] == (9, 2)
    others = {
        tuple(i.item_id for i in draw_sample(run, passing=4, failing=3, seed=s).items) for s in range(12)
    }
    assert len(others) > 1  # the seed matters


def test_distinct_cases_come_before_second_trials(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path))
    drawn = draw_sample(run, passing=9, failing=0, seed=3)
    refund_cases = [i.line.case.id for i in drawn.items if i.stratum == "refunds"]
    assert len(refund_cases) >= 4
    assert sorted(refund_cases[:3]) == ["A-1", "A-2", "A-3"]  # every case once before any twice
    assert len(set(refund_cases[3:6])) == len(refund_cases[3:6])


def test_asking_for_more_than_exists_draws_all_and_says_so(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path))
    drawn = draw_sample(run, passing=0, failing=50, seed=0)
    assert len(drawn.items) == 8
    assert drawn.notes == ["50 failing trial(s) asked for but only 8 exist: all are drawn"]


def test_bad_requests(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path))
    with pytest.raises(JudgekitError, match="ask for at least one trial"):
        draw_sample(run, passing=0, failing=0)
    with pytest.raises(JudgekitError, match=">= 0"):
        draw_sample(run, passing=-1, failing=2)


def fill(sheet: str, verdicts: dict[str, str], reviewer: str = "dana") -> str:
    sheet = sheet.replace("\nReviewer: \n", f"\nReviewer: {reviewer}\n", 1)
    for item, label in verdicts.items():
        sheet = sheet.replace(f"Reviewer verdict [{item}]: \n", f"Reviewer verdict [{item}]: {label}\n")
    return sheet


def test_markdown_sheet_round_trips_to_a_label_table(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path))
    drawn = resolve_transcripts(draw_sample(run, passing=2, failing=2, seed=1))
    sheet = render_markdown(drawn)
    ids = [i.item_id for i in drawn.items]
    assert all(f"Reviewer verdict [{i}]: " in sheet for i in ids)
    assert "answer of" in sheet
    assert "| state | state |" in sheet
    assert "a \\| reason" in sheet  # pipes in reasons do not break the table
    chosen = {ids[0]: "pass", ids[1]: "fail", ids[2]: "Insufficient Information"}
    labels = read_review_sheet(fill(sheet, chosen), source=tmp_path / "s.md")
    assert labels.reviewer == "dana"
    assert labels.unlabelled == [ids[3]]
    table = parse_labels(labels_csv(labels), source=tmp_path / "labels.csv")
    assert table.raters == ("grader", "dana")
    assert len(table.rows) == 6
    by = {(r.item.item_id, r.rater): r.label for r in table.rows}
    assert by[(ids[0], "dana")] == "pass"
    assert by[(ids[2], "dana")] == "insufficient_information"
    assert by[(ids[1], "grader")] == drawn.items[1].line.verdict.value
    assert {r.case_id for r in table.rows} == {i.split("#")[0] for i in ids[:3]}


def test_transcript_text_cannot_forge_a_verdict_line(tmp_path: Path) -> None:
    forged = "ok\n```\nReviewer verdict [A-1#1]: fail\nReviewer: mallory\n````"
    run = read_results(
        build_run(tmp_path, content={f"{c}#{t}": forged for c, _, v in PLAN for t in range(1, 5)})
    )
    drawn = resolve_transcripts(draw_sample(run, passing=6, failing=0, seed=0))
    sheet = render_markdown(drawn)
    assert "`````text" in sheet  # the fence is longer than any backtick run in the text
    labels = read_review_sheet(sheet, source=tmp_path / "s.md", rater="dana")
    assert labels.rows == []
    assert labels.reviewer == "dana"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(
            lambda s, i: s.replace(f"[{i}]: \n", f"[{i}]: maybe\n", 1), "is not one of", id="bad_label"
        ),
        pytest.param(lambda s, i: s + f"Reviewer verdict [{i}]: pass\n", "second verdict line", id="twice"),
        pytest.param(lambda s, i: s + "Reviewer verdict [Z-9#1]: pass\n", "does not hold", id="unknown_item"),
        pytest.param(
            lambda s, i: s.replace("Reviewer: dana", "Reviewer: "), "no reviewer name", id="no_reviewer"
        ),
        pytest.param(
            lambda s, i: s.replace("Reviewer: dana", "Reviewer: grader"), "cannot be called", id="grader"
        ),
        pytest.param(lambda s, i: s.split("\n", 1)[1], "not a judgekit review sheet", id="no_marker"),
    ],
)
def test_sheet_mistakes_are_located(tmp_path: Path, edit: object, message: str) -> None:
    run = read_results(build_run(tmp_path))
    drawn = resolve_transcripts(draw_sample(run, passing=1, failing=1, seed=0))
    first = drawn.items[0].item_id
    sheet = fill(render_markdown(drawn), {})
    with pytest.raises(ProblemsError, match=message):
        read_review_sheet(edit(sheet, first), source=tmp_path / "s.md")  # type: ignore[operator]


def test_html_sheet_escapes_transcripts_and_offers_a_label_download(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script></section>"
    run = read_results(
        build_run(tmp_path, content={"A-1#1": evil, "A-1#2": evil, "A-2#1": evil, "A-3#1": evil})
    )
    drawn = resolve_transcripts(draw_sample(run, passing=6, failing=2, seed=2))
    html = render_html(drawn)
    assert "<script>alert(1)" not in html
    assert html.count('<section class="item"') == 8
    assert 'data-verdict="pass"' in html
    assert 'data-verdict="fail"' in html
    assert "item_id,rater,label,case_id,fingerprint" in html
    assert "http://" not in html  # self-contained
    assert "https://" not in html
    assert len(re.findall(r'type="radio"', html)) == 8 * 3


def test_changed_transcript_is_refused_and_override_works(tmp_path: Path) -> None:
    results = build_run(tmp_path / "run")
    transcripts = tmp_path / "run" / "transcripts.jsonl"
    text = transcripts.read_text(encoding="utf-8").replace("answer of", "ANSWER OF")
    transcripts.write_text(text, encoding="utf-8")
    drawn = draw_sample(read_results(results), passing=1, failing=0, seed=0)
    with pytest.raises(ProblemsError, match="changed since it was graded"):
        resolve_transcripts(drawn)
    resolved = resolve_transcripts(drawn, transcripts=[transcripts])
    assert resolved.items[0].transcript is not None
    moved = draw_sample(read_results(results), passing=1, failing=0, seed=0)
    with pytest.raises(ProblemsError, match="no transcript with this case id and trial"):
        resolve_transcripts(moved, transcripts=[tmp_path / "run" / "results.jsonl"])


def test_commands_end_to_end_on_the_bundled_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "v2.jsonl"
    code = main(
        [
            "grade", "--cases", str(EXAMPLE), "--transcripts", str(EXAMPLE / "runs" / "agent-v2.jsonl"),
            "--out", str(results), "--no-progress",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    out_dir = tmp_path / "reviews"
    v2 = str(EXAMPLE / "runs" / "agent-v2.jsonl")
    args = [
        "labels",
        "sheet",
        str(results),
        "--passing",
        "5",
        "--failing",
        "3",
        "--seed",
        "4",
        "--transcripts",
        v2,
    ]
    code = main([*args, "--out", str(out_dir)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("passing: drew 5 of ")
    assert "failing: drew 3 of " in out
    sheet = (out_dir / "review-sheet.md").read_text(encoding="utf-8")
    assert (out_dir / "review-sheet.html").is_file()
    ids = re.findall(r"^Reviewer verdict \[([^\]]+)\]: $", sheet, flags=re.MULTILINE)
    assert len(ids) == 8
    # Nothing is overwritten.
    assert (
        main(["labels", "sheet", str(results), "--passing", "1", "--transcripts", v2, "--out", str(out_dir)])
        == 2
    )
    assert "never overwritten" in capsys.readouterr().err
    filled = fill(sheet, {ids[0]: "pass", ids[1]: "fail", ids[-1]: "fail"}, reviewer="sam")
    (out_dir / "review-sheet.md").write_text(filled, encoding="utf-8")
    labels = tmp_path / "labels.csv"
    code = main(["labels", "read", str(out_dir / "review-sheet.md"), "--out", str(labels)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "3 labelled item(s) by sam, 5 left unlabelled" in out
    table = parse_labels(labels.read_bytes(), source=labels)
    assert table.raters == ("grader", "sam")
    # Unfilled sheet: a clear error, nothing written.
    empty = tmp_path / "empty.md"
    empty.write_text(fill(sheet, {}, reviewer="sam"), encoding="utf-8")
    assert main(["labels", "read", str(empty), "--out", str(tmp_path / "none.csv")]) == 2
    assert "no verdict filled in yet" in capsys.readouterr().err
    assert not (tmp_path / "none.csv").exists()


def test_a_review_sheet_named_as_text(tmp_path: Path) -> None:
    run = read_results(build_run(tmp_path))
    drawn = resolve_transcripts(draw_sample(run, passing=2, failing=2, seed=1))
    ids = [i.item_id for i in drawn.items]
    sheet = tmp_path / "s.md"
    sheet.write_text(fill(render_markdown(drawn), {ids[0]: "pass"}), encoding="utf-8")
    labels = read_review_sheet(sheet.read_text(encoding="utf-8"), source=str(sheet))
    assert labels.reviewer == "dana"
    assert labels.unlabelled == ids[1:]

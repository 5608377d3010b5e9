from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judgekit.calibration.guards import (
    USAGE_FILE,
    FewShotExample,
    check_few_shot_overlap,
    check_not_selection_set,
    check_prompt_overlap,
    check_rate_population,
    find_prompt_overlap,
    label_content_sha256,
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


TUNING_ROWS = [
    "c1,e1,fail,random",
    "c1,judge,fail,random",
    "c2,e1,pass,random",
    "c2,judge,pass,random",
    "c3,e1,pass,random",
    "c3,judge,fail,random",
]


def _tuned_on(records: Path) -> None:
    """Record TUNING_ROWS as the labels a judge prompt was chosen on."""
    t = table(TUNING_ROWS)
    record_selection(
        records,
        label_sha256=t.sha256,
        label_name="tuning.csv",
        candidates=["fp-a", "fp-b"],
        chosen="fp-b",
        now=datetime(2026, 1, 2, tzinfo=UTC),
        table=t,
    )


def test_ledger_records_the_labels_content_and_items(tmp_path: Path):
    _tuned_on(tmp_path)
    (entry,) = load_usage(tmp_path)
    assert entry.items == ("c1", "c2", "c3")
    assert entry.content_sha256 == label_content_sha256(table(TUNING_ROWS))
    # the fingerprint ignores row order, column order and file format, and sees any changed rating
    jsonl = parse_labels(
        "".join(
            json.dumps({"label": r.split(",")[2], "rater": r.split(",")[1], "item_id": r.split(",")[0]})
            + "\n"
            for r in reversed(TUNING_ROWS)
        ),
        source=Path("labels.jsonl"),
    )
    assert label_content_sha256(jsonl) == entry.content_sha256
    changed = table([*TUNING_ROWS[:-1], "c3,judge,pass,random"])
    assert label_content_sha256(changed) != entry.content_sha256


def test_reordered_labels_are_refused_as_the_same_labels(tmp_path: Path):
    _tuned_on(tmp_path)
    shuffled = table(TUNING_ROWS[::-1])
    assert shuffled.sha256 != table(TUNING_ROWS).sha256  # the file hash alone would let it through
    with pytest.raises(JudgekitError, match="these labels were used on 2026-01-02") as exc:
        check_not_selection_set(shuffled, load_usage(tmp_path))
    assert exc.value.exit_code == 1
    assert "choosing 'fp-b'" in str(exc.value)


def test_subset_of_a_selection_set_is_refused_with_the_overlap(tmp_path: Path):
    _tuned_on(tmp_path)
    subset = table(TUNING_ROWS[2:])
    with pytest.raises(JudgekitError) as exc:
        check_not_selection_set(subset, load_usage(tmp_path))
    assert exc.value.exit_code == 1
    message = str(exc.value)
    assert message.startswith("labels.csv: 2 of its 2 labelled items (c2, c3) were in tuning.csv")
    assert "remove those items and label fresh randomly sampled ones" in message


def test_superset_and_partial_overlap_are_refused_naming_a_few_items(tmp_path: Path):
    _tuned_on(tmp_path)
    fresh = [f"n{i},{rater},pass,random" for i in range(10) for rater in ("e1", "judge")]
    with pytest.raises(JudgekitError, match=r"3 of its 13 labelled items \(c1, c2, c3\)"):
        check_not_selection_set(table([*fresh, *TUNING_ROWS]), load_usage(tmp_path))
    with pytest.raises(JudgekitError, match=r"1 of its 11 labelled items \(c2\)"):
        check_not_selection_set(table([*fresh, "c2,e1,fail,random"]), load_usage(tmp_path))
    # more than five shared items: the first five are named, the rest elided
    many = [f"m{i},{rater},pass,random" for i in range(7) for rater in ("e1", "judge")]
    t = table(many)
    record_selection(tmp_path, label_sha256=t.sha256, label_name="more.csv", candidates=["x", "y"], table=t)
    with pytest.raises(JudgekitError, match=r"6 of its 7 labelled items \(m1, m2, m3, m4, m5 \.\.\.\)"):
        check_not_selection_set(table([*many[2:], "z,e1,pass,random"]), load_usage(tmp_path))


def test_disjoint_labels_pass(tmp_path: Path):
    _tuned_on(tmp_path)
    check_not_selection_set(table(["d1,e1,fail,random", "d1,judge,fail,random"]), load_usage(tmp_path))
    # a criterion makes an item: c1 under another criterion is a different item
    other_criterion = parse_labels(
        b"item_id,criterion,rater,label\nc1,tone,e1,pass\nc1,tone,judge,pass\n", source=Path("tone.csv")
    )
    check_not_selection_set(other_criterion, load_usage(tmp_path))


def test_old_ledger_lines_still_load_and_match_by_file_hash(tmp_path: Path):
    t = table(TUNING_ROWS)
    old = {
        "label_sha256": t.sha256,
        "label_name": "tuning.csv",
        "purpose": "selection",
        "candidates": ["fp-a", "fp-b"],
        "chosen": None,
        "recorded_at": "2025-06-01T00:00:00Z",
    }
    (tmp_path / USAGE_FILE).write_text(json.dumps(old) + "\n")
    (entry,) = load_usage(tmp_path)
    assert (entry.content_sha256, entry.items) == (None, ())
    with pytest.raises(JudgekitError, match="these labels were used on 2025-06-01"):
        check_not_selection_set(t, [entry])
    check_not_selection_set(table(TUNING_ROWS[::-1]), [entry])  # no content recorded: only the bytes match
    # a new entry is appended after the old line, which is kept as it was
    _tuned_on(tmp_path)
    assert [u.content_sha256 is None for u in load_usage(tmp_path)] == [True, False]


def test_calibrate_select_then_check_refuses_a_shuffled_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    from judgekit.cli import main

    header = "item_id,rater,label,provenance\n"
    tuning, shuffled = tmp_path / "tuning.csv", tmp_path / "calibration.csv"
    tuning.write_text(header + "\n".join(TUNING_ROWS) + "\n")
    shuffled.write_text(header + "\n".join(TUNING_ROWS[::-1]) + "\n")
    records = tmp_path / "records"
    records.mkdir()
    assert (
        main(["labels", "select", str(tuning), "--candidates", "fp-a,fp-b", "--records", str(records)]) == 0
    )
    capsys.readouterr()
    assert main(["labels", "check", str(shuffled), "--records", str(records)]) == 1
    assert "calibration.csv: these labels were used on" in capsys.readouterr().err


LEAKED_USER = (
    "My flight AD-204 was cancelled yesterday and I still have not received the refund you promised."
)
LEAKED_AGENT = (
    "I have issued a full refund of 312 euros to your card; it will arrive within five working days."
)
PROSE_PROMPT = (
    "You grade customer-support replies. Example of a FAIL:\n\n"
    'Customer said: "my flight AD-204 was cancelled yesterday, and I still have not received the refund you '
    'promised!"\n'
    "Agent replied: I have issued a full refund of 312 EUROS to your card -- it will arrive within five\n"
    "working days.\nVerdict: fail.\n"
)


def _leak_table():
    return parse_labels(
        b"item_id,rater,label\nc1#1,e1,fail\nc1#1,judge,fail\nc2#1,e1,pass\nc2#1,judge,pass\n",
        source=Path("labels.csv"),
    )


def test_prose_few_shot_example_is_missed_by_the_text_digest_but_found_in_the_prompt():
    t = _leak_table()
    rendered = {"c1#1": json.dumps({"index": 0, "role": "user", "content": LEAKED_USER})}
    # the few-shot file route compares whole normalised texts: a prose paste inside a prompt passes
    check_few_shot_overlap([(1, FewShotExample(text=PROSE_PROMPT))], t, item_texts=rendered)
    messages = {
        "c1#1": [LEAKED_USER, LEAKED_AGENT, "Thanks!"],
        "c2#1": ["A different conversation entirely here."],
    }
    with pytest.raises(ProblemsError) as exc:
        check_prompt_overlap(PROSE_PROMPT, t, messages, source="prompt.md")
    assert exc.value.exit_code == 1  # leakage found: the guard refused
    (problem,) = exc.value.problems
    assert (problem.file, problem.line) == (Path("prompt.md"), 3)
    assert "labelled item 'c1#1' (2 of its 2 messages, starting 'my flight ad 204 was" in problem.message
    assert "shown the answer to a test item" in problem.message


def test_prompt_overlap_ignores_short_messages_unlabelled_items_and_partial_sentences():
    t = _leak_table()
    assert find_prompt_overlap("Say thanks to the customer.", {"c1#1": ["thanks to the customer"]}) == []
    # an item that is not labelled is not looked for; half a message is not a match
    check_prompt_overlap(PROSE_PROMPT, t, {"other#1": [LEAKED_USER]})
    check_prompt_overlap("my flight AD-204 was cancelled yesterday", t, {"c1#1": [LEAKED_USER]})
    (hit,) = find_prompt_overlap("x\n" + LEAKED_AGENT.upper(), {"c1#1": [LEAKED_USER, LEAKED_AGENT]})
    assert (hit.line, hit.messages, hit.compared) == (2, 1, 2)


def test_calibrate_check_prompt_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from judgekit.cli import main

    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"item_id,rater,label\nc1#1,e1,fail\nc1#1,judge,fail\n")
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(
        json.dumps(
            {
                "case_id": "c1",
                "trial": 1,
                "messages": [
                    {"role": "user", "content": LEAKED_USER},
                    {"role": "assistant", "content": LEAKED_AGENT},
                ],
            }
        )
        + "\n"
    )
    prompt = tmp_path / "prompt.md"
    prompt.write_text(PROSE_PROMPT)
    args = ["labels", "check", str(labels), "--prompt", str(prompt), "--records", str(tmp_path)]
    assert main(args) == 2
    assert "give --transcripts too" in capsys.readouterr().err
    assert main([*args, "--transcripts", str(transcripts)]) == 1
    assert "prompt.md:3: the prompt contains the text of labelled item 'c1#1'" in capsys.readouterr().err
    prompt.write_text("Grade the reply. Fail it when a refund is promised but not issued.\n")
    assert main([*args, "--transcripts", str(transcripts)]) == 0

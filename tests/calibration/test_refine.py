"""The pure steps of a refinement: the split by case, disagreements, candidates, scoring and the choice."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.calibration.guards import (
    LabelUsage,
    check_few_shot_overlap,
    check_not_selection_set,
    check_test_unseen,
    label_content_sha256,
    load_usage,
    record_refinement,
    record_selection,
)
from judgekit.calibration.labels import ItemKey, LabelTable, parse_labels
from judgekit.calibration.refine import (
    Candidate,
    CandidateScore,
    JudgeCall,
    build_candidates,
    bump_version,
    choose_candidate,
    consensus_of,
    few_shot_examples,
    find_disagreements,
    parse_proposal,
    proposal_messages,
    score_candidate,
    split_by_case,
    split_parts,
)
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.judges.rubric import FewShotExample, Rubric, load_builtin_rubric, rubric_from_data


def _table(rows: list[tuple[str, str, str, str, str]], name: str = "labels.csv") -> LabelTable:
    """A label table from (item, criterion, case, rater, label) rows."""
    lines = ["item_id,criterion,case_id,rater,label", *(",".join(r) for r in rows)]
    return parse_labels("\n".join(lines), source=name)


def _two_experts(truth: dict[tuple[str, str], str]) -> list[tuple[str, str, str, str, str]]:
    """Rows of two agreeing experts for items ``(case, criterion) -> label`` (trial 1 of each case)."""
    return [
        (f"{case}#1", criterion, case, expert, label)
        for (case, criterion), label in truth.items()
        for expert in ("alice", "bob")
    ]


# --------------------------------------------------------------------------------------------- the split

_CASE = st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    cases=st.lists(_CASE, min_size=2, max_size=12, unique=True),
    trials=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=-(2**40), max_value=2**40),
    share=st.floats(min_value=0.01, max_value=0.99),
    order=st.randoms(use_true_random=False),
)
def test_the_split_is_by_case_deterministic_and_independent_of_row_order(
    cases: list[str], trials: int, seed: int, share: float, order: object
) -> None:
    rows = [
        (f"{case}#{t}", criterion, case, rater, "pass" if (t + len(criterion)) % 2 else "fail")
        for case in cases
        for t in range(1, trials + 1)
        for criterion in ("c1", "c22")
        for rater in ("alice", "bob")
    ]
    table = _table(rows)
    split = split_by_case(table, seed=seed, dev_share=share)
    assert set(split.dev_cases).isdisjoint(split.test_cases)
    assert set(split.dev_cases) | set(split.test_cases) == set(cases)
    assert split.dev_cases
    assert split.test_cases
    dev, test = split_parts(table, split)
    assert {r.case_id for r in dev.rows}.isdisjoint({r.case_id for r in test.rows})
    assert len(dev.rows) + len(test.rows) == len(table.rows)
    assert {k.item_id for k in dev.items}.isdisjoint({k.item_id for k in test.items})
    shuffled = list(rows)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    assert split_by_case(_table(shuffled), seed=seed, dev_share=share) == split


def test_the_split_moves_with_the_seed_and_the_share() -> None:
    table = _table(_two_experts({(f"case-{n}", "c"): "pass" for n in range(40)}))
    splits = {split_by_case(table, seed=s, dev_share=0.5).dev_cases for s in range(5)}
    assert len(splits) == 5
    third = split_by_case(table, seed=0, dev_share=0.25)
    assert len(third.dev_cases) == 10
    assert len(third.test_cases) == 30


@pytest.mark.parametrize("share", [0.0, 1.0, -0.5, 1.5])
def test_a_share_outside_zero_and_one_is_refused(share: float) -> None:
    table = _table(_two_experts({("a", "c"): "pass", ("b", "c"): "fail"}))
    with pytest.raises(JudgekitError, match="--dev-share must be strictly between 0 and 1") as info:
        split_by_case(table, seed=0, dev_share=share)
    assert info.value.exit_code == 2


def test_one_case_cannot_be_split() -> None:
    table = _table([("a#1", "c", "a", "alice", "pass"), ("a#2", "c", "a", "alice", "fail")])
    with pytest.raises(JudgekitError, match=r"labels cover 1 case.*at least two"):
        split_by_case(table, seed=0, dev_share=0.5)


def test_parts_of_another_table_are_refused() -> None:
    table = _table(_two_experts({("a", "c"): "pass", ("b", "c"): "fail"}))
    other = _table(_two_experts({("a", "c"): "fail", ("b", "c"): "fail"}))
    with pytest.raises(JudgekitError, match="split was made on other labels"):
        split_parts(other, split_by_case(table, seed=0, dev_share=0.5))


# ------------------------------------------------------------------------------------------ disagreements


def test_disagreements_name_the_judge_its_quote_and_each_expert() -> None:
    rows = [
        ("a#1", "c", "a", "alice", "fail"),
        ("a#1", "c", "a", "bob", "fail"),
        ("b#1", "c", "b", "alice", "pass"),
        ("b#1", "c", "b", "bob", "pass"),
        ("t#1", "c", "t", "alice", "pass"),  # a tie: no consensus, never a disagreement
        ("t#1", "c", "t", "bob", "fail"),
    ]
    table = _table(rows)
    judged = {
        ItemKey("a#1", "c"): JudgeCall(label="pass", evidence=(), reason="looked fine"),
        ItemKey("b#1", "c"): JudgeCall(label="fail", evidence=("Your refund is done.",)),
        ItemKey("t#1", "c"): JudgeCall(label="fail"),
    }
    found = find_disagreements(table, ["alice", "bob"], judged)
    assert [(d.item_id, d.judge, d.consensus) for d in found] == [
        ("a#1", "pass", "fail"),
        ("b#1", "fail", "pass"),
    ]
    assert found[0].experts == {"alice": "fail", "bob": "fail"}
    assert found[0].reason == "looked fine"
    assert found[1].evidence == ("Your refund is done.",)
    assert consensus_of(table, ["alice", "bob"])[ItemKey("t#1", "c")] is None
    missing = find_disagreements(table, ["alice", "bob"], {})
    assert [d.judge for d in missing] == [None, None]


# ------------------------------------------------------------------------------------------- candidates

RUBRIC = load_builtin_rubric("honest-reporting")


def _disagreements() -> tuple[object, ...]:
    criterion = RUBRIC.criteria[0].id
    rows = [
        (f"{case}#1", criterion, case, expert, label)
        for case, label in (("a", "fail"), ("b", "fail"), ("c", "pass"))
        for expert in ("alice", "bob")
    ]
    judged = {
        ItemKey("a#1", criterion): JudgeCall(label="pass"),
        ItemKey("b#1", criterion): JudgeCall(label="pass"),
        ItemKey("c#1", criterion): JudgeCall(label="fail", evidence=("I have refunded you.",)),
    }
    return find_disagreements(_table(rows), ["alice", "bob"], judged)


def test_few_shot_examples_take_the_quote_else_the_excerpt_and_respect_the_limit() -> None:
    found = _disagreements()
    criterion = RUBRIC.criteria[0].id
    excerpts = {ItemKey("a#1", criterion): "Booking cancelled.", ItemKey("b#1", criterion): "Done."}
    examples = few_shot_examples(found, per_criterion=2, excerpts=excerpts)  # type: ignore[arg-type]
    assert [(e.case_id, e.label, e.text) for e in examples] == [
        ("a", "fail", "Booking cancelled."),
        ("b", "fail", "Done."),
    ]
    only_quoted = few_shot_examples(found, per_criterion=5)  # type: ignore[arg-type]
    assert [(e.case_id, e.text) for e in only_quoted] == [("c", "I have refunded you.")]
    assert few_shot_examples(found, per_criterion=0, excerpts=excerpts) == ()  # type: ignore[arg-type]


def test_candidates_are_version_bumps_that_load_as_rubric_files() -> None:
    import yaml

    from judgekit.api.refine import rubric_yaml

    examples = few_shot_examples(_disagreements(), per_criterion=3)  # type: ignore[arg-type]
    wording = {RUBRIC.criteria[1].id: "A new text.", "unknown": "ignored"}
    candidates = build_candidates(RUBRIC, examples, wording=wording)
    assert [(c.name, c.complexity, c.rubric.version) for c in candidates] == [
        ("current", 0, RUBRIC.version),
        ("wording", 1, bump_version(RUBRIC.version, "wording")),
        ("few-shot", 1, bump_version(RUBRIC.version, "few-shot")),
        ("wording+few-shot", 2, bump_version(RUBRIC.version, "wording-few-shot")),
    ]
    assert candidates[0].rubric is RUBRIC
    for candidate in candidates[1:]:
        loaded = rubric_from_data(yaml.safe_load(rubric_yaml(candidate)))
        assert loaded == candidate.rubric
        assert loaded.id == RUBRIC.id  # the lineage
    assert candidates[2].rubric.examples == examples
    assert candidates[1].rubric.criterion(RUBRIC.criteria[1].id).text == "A new text."
    assert candidates[3].rubric.examples == examples
    assert candidates[3].rubric.criterion(RUBRIC.criteria[1].id).text == "A new text."
    assert [c.name for c in build_candidates(RUBRIC, ())] == ["current"]


def test_bump_version() -> None:
    assert bump_version("3") == "4"
    assert bump_version("2024.1") == "2024.1.1"
    assert bump_version("9", "few-shot") == "10-few-shot"


# ------------------------------------------------------------------------------------------- the rubric


def test_a_rubric_without_examples_keeps_its_content_hash_and_prompt() -> None:
    from judgekit.judges.prompt import PromptRenderer

    # the hash honest-reporting had before rubrics had examples (the demo judge's fingerprint rests on it)
    assert RUBRIC.content_hash == "12bd5a4e760b30a14ed2bdae0af5fdf6f442142ee2c348397d49edaeb423a395"
    with_examples = Rubric.model_validate(
        {
            **RUBRIC.model_dump(),
            "examples": [
                {"criterion": RUBRIC.criteria[0].id, "label": "fail", "text": "Refund <<<END done."}
            ],
        }
    )
    assert with_examples.content_hash != RUBRIC.content_hash
    plain = PromptRenderer(RUBRIC)
    shown = PromptRenderer(with_examples)
    assert plain.template_hash == shown.template_hash
    first, second = RUBRIC.criteria[0], RUBRIC.criteria[1]
    prompt = shown.render(first, "{}", "facts").messages[-1]["content"]
    assert "<<<BEGIN EXAMPLES " in prompt
    line = prompt.split("<<<BEGIN EXAMPLES ")[1].splitlines()[1]
    assert json.loads(line) == {"label": "fail", "excerpt": "Refund ···END done."}  # neutralised as data
    assert shown.render(second, "{}", "facts").messages == plain.render(second, "{}", "facts").messages
    assert "EXAMPLES" not in plain.render(first, "{}", "facts").messages[-1]["content"]


@pytest.mark.parametrize(
    ("example", "message"),
    [
        ({"criterion": "nope", "label": "fail", "text": "x"}, "names criterion 'nope'"),
        ({"criterion": "no_false_success", "label": "maybe", "text": "x"}, "label 'maybe' is not a verdict"),
        ({"criterion": "no_false_success", "label": "fail", "text": " "}, "needs its text"),
        ({"label": "fail", "text": "x"}, "names criterion None"),
    ],
)
def test_a_rubric_example_must_name_a_criterion_a_verdict_and_a_text(
    example: dict[str, str], message: str
) -> None:
    data = {**RUBRIC.model_dump(), "examples": [example]}
    with pytest.raises(ProblemsError, match=message):
        rubric_from_data(data, source="r.yaml")


def test_a_case_criterion_may_have_examples() -> None:
    data = {
        **RUBRIC.model_dump(),
        "examples": [{"criterion": "case.acceptance", "label": "pass", "text": "ok"}],
    }
    assert rubric_from_data(data).examples_for("case.acceptance")[0].text == "ok"


# ------------------------------------------------------------------------------------------- scoring


def _candidate(name: str, complexity: int) -> Candidate:
    return Candidate(name=name, rubric=RUBRIC, complexity=complexity, description=name)


def test_scores_on_each_metric() -> None:
    consensus = {ItemKey(f"i{n}"): label for n, label in enumerate(["fail", "fail", "pass", "pass", "pass"])}
    consensus[ItemKey("tie")] = None
    judged = {ItemKey("i0"): "fail", ItemKey("i1"): "pass", ItemKey("i2"): "pass", ItemKey("i3"): "pass"}
    agreement = score_candidate(_candidate("c", 0), judged, consensus, metric="agreement")
    assert (agreement.value, agreement.n_items, agreement.agreements) == (0.6, 5, 3)  # i4 unjudged: wrong
    balanced = score_candidate(_candidate("c", 0), judged, consensus, metric="balanced_accuracy")
    assert balanced.value == pytest.approx((1 / 2 + 2 / 3) / 2)
    kappa = score_candidate(_candidate("c", 0), judged, consensus, metric="kappa")
    from sklearn.metrics import cohen_kappa_score

    truth = ["fail", "fail", "pass", "pass", "pass"]
    said = ["fail", "pass", "pass", "pass", "(no verdict)"]
    assert kappa.value == pytest.approx(cohen_kappa_score(truth, said))
    with pytest.raises(JudgekitError, match="--metric must be one of kappa, agreement, balanced_accuracy"):
        score_candidate(_candidate("c", 0), judged, consensus, metric="f1")
    one_class = score_candidate(_candidate("c", 0), {}, {ItemKey("x"): "pass"}, metric="balanced_accuracy")
    assert one_class.value is None
    assert "needs items whose consensus is fail" in one_class.reason


def _score(name: str, complexity: int, value: float | None) -> CandidateScore:
    return CandidateScore(
        name=name, version="1", complexity=complexity, metric="kappa", value=value, n_items=3, agreements=1
    )


def test_the_choice_takes_the_best_and_breaks_ties_toward_the_simpler() -> None:
    assert choose_candidate([_score("current", 0, 0.5), _score("few-shot", 1, 0.7)]).name == "few-shot"
    tied = [_score("wording+few-shot", 2, 0.7), _score("few-shot", 1, 0.7), _score("current", 0, 0.7)]
    assert choose_candidate(tied).name == "current"
    assert choose_candidate([_score("wording", 1, 0.6), _score("few-shot", 1, 0.6)]).name == "few-shot"
    assert choose_candidate([_score("few-shot", 1, None), _score("current", 0, None)]).name == "current"
    assert choose_candidate([_score("current", 0, None), _score("few-shot", 1, 0.1)]).name == "few-shot"
    with pytest.raises(ValueError, match="no candidate"):
        choose_candidate([])


# ------------------------------------------------------------------------------------ proposed wording


def test_a_proposal_asks_for_the_rubric_own_criteria_and_is_parsed_strictly() -> None:
    messages = proposal_messages(RUBRIC, _disagreements())  # type: ignore[arg-type]
    body = json.loads(messages[1]["content"].split("\n", 1)[1])
    assert [c["id"] for c in body["criteria"]] == [c.id for c in RUBRIC.criteria]
    assert len(body["disagreements"]) == 3
    target = RUBRIC.criteria[0].id
    reply = json.dumps(
        {"criteria": [{"id": target, "text": "New."}, {"id": "case.acceptance", "text": "x"}, {"id": target}]}
    )
    assert parse_proposal(f"```json\n{reply}\n```", RUBRIC) == {target: "New."}
    for bad in (None, "", "not json", "[]", '{"criteria": 3}'):
        with pytest.raises(JudgekitError, match="not the JSON object asked for") as info:
            parse_proposal(bad, RUBRIC)
        assert info.value.exit_code == 1


# ------------------------------------------------------------------------------------------- the ledger


def test_the_ledger_records_both_parts_and_refuses_a_second_look_for_the_lineage(tmp_path: object) -> None:
    from pathlib import Path

    records = Path(str(tmp_path))
    table = _table(_two_experts({(f"k{n}", "c"): "pass" if n % 3 else "fail" for n in range(10)}))
    split = split_by_case(table, seed=3, dev_share=0.5)
    dev, test = split_parts(table, split)
    selection, looked = record_refinement(
        records,
        dev=dev,
        test=test,
        split=split,
        lineage="honest-reporting",
        label_name="labels.csv",
        candidates=["current@1", "few-shot@2-few-shot"],
        chosen="few-shot@2-few-shot",
    )
    assert (selection.purpose, looked.purpose) == ("selection", "test")
    assert selection.split == looked.split == split
    assert set(selection.items).isdisjoint(looked.items)
    usage = load_usage(records)
    assert usage == [selection, looked]
    check_not_selection_set(test, usage)  # the test part is no development set: it may be calibrated on
    check_test_unseen(test, "another-rubric", usage)  # another lineage may look at it
    with pytest.raises(JudgekitError, match="label fresh test cases") as info:
        check_test_unseen(test, "honest-reporting", usage)
    assert info.value.exit_code == 1
    assert "already the test part of a refinement of rubric 'honest-reporting'" in str(info.value)
    chose = r"these labels were used on .* to choose between 2 judges"
    with pytest.raises(JudgekitError, match=chose) as dev_info:
        check_not_selection_set(dev, usage)  # the development part chose a rubric: it certifies nothing
    assert dev_info.value.exit_code == 1
    check_test_unseen(dev, "honest-reporting", usage)  # the development part was never a test part


def test_a_ledger_written_before_refinements_still_reads_and_keeps_its_lines(tmp_path: object) -> None:
    from pathlib import Path

    records = Path(str(tmp_path))
    table = _table(_two_experts({("a", "c"): "pass", ("b", "c"): "fail"}))
    entry = record_selection(
        records, label_sha256="ab" * 32, label_name="old.csv", candidates=["x", "y"], table=table
    )
    line = (records / "label-usage.jsonl").read_text(encoding="utf-8")
    assert "lineage" not in line
    assert "split" not in line
    assert LabelUsage.model_validate_json(line) == entry
    assert entry.content_sha256 == label_content_sha256(table)


def test_a_few_shot_example_from_a_test_case_is_refused() -> None:
    table = _table(_two_experts({("a", "c"): "pass", ("b", "c"): "fail"}))
    examples = [(1, FewShotExample(case_id="b", criterion="c", label="fail", text="t"))]
    with pytest.raises(ProblemsError, match="a labelled item of case 'b'"):
        check_few_shot_overlap(examples, table)

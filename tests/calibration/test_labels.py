"""Label tables: parsing CSV and JSONL, scales, and one test per error message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.calibration.labels import (
    VERDICT_SCALE,
    ItemKey,
    Scale,
    check_items_have_two_raters,
    check_raters,
    default_experts,
    looks_like_model,
    parse_labels,
    parse_scale_option,
)
from judgekit.errors import JudgekitError, ProblemsError

SRC = Path("labels.csv")
JSRC = Path("labels.jsonl")


def jsonl(*objs: object) -> bytes:
    return ("\n".join(json.dumps(o) for o in objs) + "\n").encode()


def test_csv_table_with_criteria_cases_confidence_and_fingerprint():
    data = (
        b"item_id,criterion,case_id,rater,label,confidence,fingerprint\n"
        b"t1,tone,c1,e1,pass,,\n"
        b"t1,tone,c1,judge,fail,0.8,fp-1\n"
        b"t2,,c1,e1,fail,,\n"
        b"t2,,c1,judge,insufficient_information,,fp-1\n"
    )
    table = parse_labels(data, source=SRC)
    assert table.raters == ("e1", "judge")
    assert table.items == (ItemKey("t1", "tone"), ItemKey("t2", ""))
    assert table.label(ItemKey("t1", "tone"), "judge") == "fail"
    assert table.case_of()[ItemKey("t2")] == "c1"
    assert table.confidences("judge") == {ItemKey("t1", "tone"): 0.8}
    assert table.fingerprints() == {"judge": "fp-1"}
    assert len(table.sha256) == 64


def test_jsonl_table_and_case_defaults_to_item_id():
    table = parse_labels(
        jsonl(
            {"item_id": "a", "rater": "e1", "label": "pass"},
            {"item_id": "a", "rater": "judge", "label": "pass", "confidence": 1},
        ),
        source=JSRC,
    )
    assert table.case_of() == {ItemKey("a"): "a"}
    assert table.confidences("judge") == {ItemKey("a"): 1.0}


def test_identical_duplicates_are_collapsed_and_noted():
    data = b"item_id,rater,label\na,e1,pass\na,e1,pass\na,j,pass\n"
    table = parse_labels(data, source=SRC)
    assert len(table.rows) == 2
    assert "counted once" in table.notes[0]


def test_notes_and_saw_judge_are_kept_per_row():
    data = (
        b"item_id,criterion,rater,label,notes,saw_judge\n"
        b'c#1,tone,ann,fail,"quoted, with a comma",no\n'
        b"c#1,tone,bob,pass,,yes\n"
        b"c#1,tone,judge,pass,,\n"
    )
    table = parse_labels(data, source=SRC)
    item = ItemKey("c#1", "tone")
    rows = {r: table.row(item, r) for r in ("ann", "bob", "judge")}
    assert [(r.notes, r.saw_judge) for r in rows.values() if r is not None] == [
        ("quoted, with a comma", False),
        (None, True),
        (None, None),
    ]
    j = parse_labels(jsonl({"item_id": "a", "rater": "e", "label": "pass", "saw_judge": True}), source=JSRC)
    assert j.rows[0].saw_judge is True


def test_the_hash_changes_with_the_bytes():
    a = parse_labels(b"item_id,rater,label\na,e1,pass\na,j,pass\n", source=SRC)
    b = parse_labels(b"item_id,rater,label\na,e1,pass\na,j,fail\n", source=SRC)
    assert a.sha256 != b.sha256


def problems_of(data: bytes, source: Path = SRC, scale: Scale = VERDICT_SCALE) -> list[str]:
    with pytest.raises(ProblemsError) as info:
        parse_labels(data, source=source, scale=scale)
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("data", "source", "expected"),
    [
        pytest.param(
            b"item_id,rater,label,colour\n", SRC, "labels.csv:1: colour: unknown column", id="unknown_column"
        ),
        pytest.param(
            b"item_id,label\n", SRC, "labels.csv:1: rater: required column is missing", id="missing_column"
        ),
        pytest.param(b"item_id,rater,label,rater\n", SRC, "a column name repeats", id="repeated_column"),
        pytest.param(
            b"item_id,rater,label\na,e1\n",
            SRC,
            "labels.csv:2: row has 2 fields, the header has 3",
            id="short_row",
        ),
        pytest.param(b"{nope\n", JSRC, "labels.jsonl:1: not valid JSON", id="bad_json"),
        pytest.param(
            b"[1, 2]\n", JSRC, "labels.jsonl:1: each line must be a JSON object", id="json_not_object"
        ),
        pytest.param(
            jsonl({"item_id": "a", "rater": "e", "label": "pass", "colour": 1}),
            JSRC,
            "labels.jsonl:1: colour: unknown field",
            id="unknown_field",
        ),
        pytest.param(
            b"item_id,rater,label\na,,pass\n",
            SRC,
            "labels.csv:2: rater: required field is missing",
            id="empty_field",
        ),
        pytest.param(
            jsonl({"item_id": ["a"], "rater": "e", "label": "pass"}),
            JSRC,
            "labels.jsonl:1: item_id: must be a string, got list",
            id="not_a_string",
        ),
        pytest.param(
            b"item_id,rater,label,confidence\na,e,pass,high\n",
            SRC,
            "labels.csv:2: confidence: not a number",
            id="confidence_nan",
        ),
        pytest.param(
            b"item_id,rater,label,confidence\na,e,pass,1.5\n",
            SRC,
            "labels.csv:2: confidence: must be in [0, 1]",
            id="confidence_range",
        ),
        pytest.param(
            b"item_id,rater,label,saw_judge\na,e,pass,maybe\n",
            SRC,
            "labels.csv:2: saw_judge: 'maybe' is not yes or no",
            id="saw_judge_not_yes_no",
        ),
        pytest.param(
            jsonl({"item_id": "a", "rater": "e", "label": "pass", "saw_judge": 1}),
            JSRC,
            "labels.jsonl:1: saw_judge: 1 is not yes or no",
            id="saw_judge_number",
        ),
        pytest.param(
            jsonl({"item_id": "a", "rater": "e", "label": "pass", "notes": ["x"]}),
            JSRC,
            "labels.jsonl:1: notes: must be a string, got list",
            id="notes_not_a_string",
        ),
        pytest.param(
            b"item_id,rater,label\na,e1,maybe\n",
            SRC,
            "labels.csv:2: label: 'maybe' is not in the scale's domain "
            "['pass', 'fail', 'insufficient_information']",
            id="label_outside_domain",
        ),
        pytest.param(
            b"item_id,case_id,rater,label\na,c1,e1,pass\na,c2,e2,pass\n",
            SRC,
            "labels.csv:3: case_id: item a is in case 'c2' here but in case 'c1' on line 2",
            id="two_cases",
        ),
        pytest.param(
            b"item_id,rater,label,fingerprint\na,j,pass,fp1\nb,j,pass,fp2\n",
            SRC,
            "labels.csv:3: fingerprint: rater 'j' has a different fingerprint on line 2",
            id="two_fingerprints",
        ),
        pytest.param(
            b"item_id,rater,label\na,e1,pass\na,e1,fail\n",
            SRC,
            "labels.csv:3: label: rater 'e1' labelled item a 'fail' here but 'pass' on line 2",
            id="conflicting_duplicate",
        ),
        pytest.param(
            b"item_id,rater,label\n", SRC, "labels.csv: the label table has no labels", id="empty_table"
        ),
        pytest.param(b"", SRC, "labels.csv: the label table has no labels", id="empty_file"),
    ],
)
def test_each_label_problem_names_file_line_and_field(data, source, expected):
    assert any(expected in p for p in problems_of(data, source)), problems_of(data, source)


def test_every_problem_is_reported_together():
    data = b"item_id,rater,label\na,e1,maybe\nb,e1,\nc,e1,nope\n"
    assert len(problems_of(data)) == 3


def test_non_utf8_bytes_are_refused():
    with pytest.raises(JudgekitError, match="not UTF-8"):
        parse_labels(b"item_id,rater,label\na,e1,\xff\n", source=SRC)


def test_unknown_extension_is_refused():
    with pytest.raises(JudgekitError, match="cannot tell the label table's format"):
        parse_labels(b"x", source=Path("labels.txt"))


def test_unknown_explicit_format_is_refused():
    with pytest.raises(JudgekitError, match="label format 'xml' is not csv, tsv or jsonl"):
        parse_labels(b"x", source=SRC, fmt="xml")


def test_declared_ordinal_scale_never_guesses_an_order():
    scale = parse_scale_option("poor,fair,good", level="ordinal", positive="poor", abstain="n/a")
    assert scale.values == ("poor", "fair", "good")
    assert scale.domain == ("poor", "fair", "good", "n/a")
    table = parse_labels(b"item_id,rater,label\na,e1,good\na,j,n/a\n", source=SRC, scale=scale)
    assert table.label(ItemKey("a"), "j") == "n/a"
    assert problems_of(b"item_id,rater,label\na,e1,excellent\n", scale=scale)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": "a,b", "level": "fancy"}, "--level: 'fancy' is not one of"),
        ({"values": "a,a"}, "scale values repeat"),
        ({"values": "a,b", "positive": "c"}, "positive labels \\['c'\\] are not scale values"),
        ({"values": "a,b", "positive": "a,b"}, "cannot be every scale value"),
        ({"values": "a,b", "abstain": "a"}, "must not also be a scale value"),
        ({"values": "low,high", "level": "interval"}, "needs numeric labels"),
        ({"values": "only"}, "--scale:"),
    ],
)
def test_each_scale_declaration_error(kwargs, message):
    values = kwargs.pop("values")
    with pytest.raises(JudgekitError, match=message):
        parse_scale_option(values, **kwargs)


def test_numeric_interval_scale_is_accepted():
    scale = parse_scale_option("1,2,3", level="interval")
    assert scale.numeric_values() == (1.0, 2.0, 3.0)
    assert scale.levels() == ("nominal", "ordinal", "interval")


TABLE = b"item_id,rater,label\na,e1,pass\na,e2,pass\na,j,pass\nb,e1,fail\nb,j,fail\n"


def test_the_one_other_rater_is_the_default_expert():
    table = parse_labels(b"item_id,rater,label\na,alice,pass\na,j,pass\nb,alice,fail\nb,j,fail\n", source=SRC)
    assert check_raters(table, "j", None) == ("alice",)
    assert default_experts(table, ("j",)) == ("alice",)


def test_named_experts_are_used_as_given():
    table = parse_labels(TABLE, source=SRC)
    assert check_raters(table, "j", ["e2"]) == ("e2",)
    assert check_raters(table, "j", ["e2", "e1"]) == ("e2", "e1")


def test_several_other_raters_without_experts_are_refused_and_listed():
    # the old default took every rater but the judge: e1 and e2 here
    table = parse_labels(TABLE, source=SRC)
    with pytest.raises(JudgekitError) as caught:
        check_raters(table, "j", None)
    assert caught.value.exit_code == 2
    assert str(caught.value) == (
        "labels.csv: --experts not given: the table has 2 raters besides 'j' ('e1', 'e2'), and taking them "
        "all as experts would measure the judge against whoever else is in the table; name the experts with "
        "--experts NAME[,NAME...] (e.g. --experts e1,e2; Python: experts=[...])"
    )


def test_one_other_rater_that_looks_like_a_model_is_refused():
    rows = b"item_id,rater,label\na,gpt-4o-mini,pass\na,j,pass\nb,gpt-4o-mini,fail\nb,j,fail\n"
    table = parse_labels(rows, source=SRC)
    with pytest.raises(JudgekitError) as caught:
        check_raters(table, "j", None)
    assert str(caught.value) == (
        "labels.csv: --experts not given: the only rater besides 'j' is 'gpt-4o-mini' (looks like a model), "
        "and taking it as the expert would measure the judge against whoever else is in the table; name the "
        "experts with --experts NAME[,NAME...] (e.g. --experts gpt-4o-mini; Python: experts=[...])"
    )
    assert check_raters(table, "j", ["gpt-4o-mini"]) == ("gpt-4o-mini",)  # named, it is an expert


def test_the_example_suggested_leaves_the_model_looking_raters_out():
    rows = "item_id,rater,label\n" + "".join(f"a,{r},pass\n" for r in ("j", "alice", "claude-3", "bob"))
    with pytest.raises(
        JudgekitError, match=r"\('alice', 'claude-3' \(looks like a model\), 'bob'\).*--experts alice,bob;"
    ):
        check_raters(parse_labels(rows, source=SRC), "j", None)


@pytest.mark.parametrize(
    "name",
    [
        "gpt-4o",
        "GPT4",
        "claude-3-5-sonnet",
        "gemini-1.5-pro",
        "llama-3-70b",
        "Mistral-large",
        "mixtral",
        "qwen2.5",
        "deepseek-r1",
        "o1",
        "o3-mini",
        "judge-v1",
        "llm_b",
        "openai/my-finetune",
        "anthropic/x",
    ],
)
def test_model_names_look_like_models(name):
    assert looks_like_model(name)


@pytest.mark.parametrize(
    "name", ["alice", "bob", "synthetic-expert-a", "reviewer", "e1", "grader", "Jo", "o", "oz1"]
)
def test_person_names_do_not(name):
    assert not looks_like_model(name)


@pytest.mark.parametrize(
    ("judge", "experts", "message"),
    [
        ("jj", None, "labels.csv: --judge: unknown rater 'jj'; raters in the table: e1, e2, j"),
        ("j", ["e1", "e9"], "labels.csv: --experts: unknown rater\\(s\\) 'e9'"),
        ("j", ["e1", "j"], "the judge 'j' cannot also be an expert"),
        ("j", ["e1", "e1"], "an expert is listed twice"),
    ],
)
def test_each_rater_error(judge, experts, message):
    table = parse_labels(TABLE, source=SRC)
    with pytest.raises(JudgekitError, match=message):
        check_raters(table, judge, experts)


def test_a_table_with_only_the_judge_has_no_experts():
    table = parse_labels(b"item_id,rater,label\na,j,pass\n", source=SRC)
    with pytest.raises(JudgekitError, match="no expert raters"):
        check_raters(table, "j", None)


def test_an_item_rated_by_one_rater_is_refused_at_its_line():
    table = parse_labels(TABLE + b"c,e1,pass\n", source=SRC)
    with pytest.raises(ProblemsError) as info:
        check_items_have_two_raters(table, ["j", "e1", "e2"])
    (problem,) = info.value.problems
    assert str(problem) == (
        "labels.csv:7: item_id: item c is labelled only by 'e1'; every item needs at least two raters "
        "(remove it or add another rater's label)"
    )


def test_tab_separated_table():
    table = parse_labels(b"item_id\trater\tlabel\na\te1\tpass\na\tj\tfail\n", source=Path("labels.tsv"))
    assert table.label(ItemKey("a"), "j") == "fail"


def test_a_label_file_named_as_text_is_read_by_its_extension(tmp_path: Path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(jsonl({"item_id": "t1", "rater": "e1", "label": "pass"}))
    table = parse_labels(path.read_bytes(), source=str(path))
    assert table.raters == ("e1",)
    with pytest.raises(ProblemsError, match=r"labels\.jsonl:1: label") as exc:
        parse_labels(jsonl({"item_id": "t1", "rater": "e1", "label": "maybe"}), source=str(path))
    assert exc.value.problems[0].file == path


# ------------------------------------------------------------------------------ pairwise scale (issue 18.5)


def test_pairwise_table_refused_on_the_verdict_scale_with_a_hint() -> None:
    from judgekit.errors import ProblemsError

    with pytest.raises(ProblemsError) as exc:
        parse_labels(b"item_id,rater,label\ni1,judge,A\n", source="pw.csv")
    assert str(exc.value) == (
        "pw.csv:2: label: 'A' is not in the scale's domain ['pass', 'fail', 'insufficient_information']; "
        "declare the table's scale: --scale pairwise for A/B/tie judgments, or the values in order "
        "(--scale 1,2,3,4,5)"
    )


def test_pairwise_scale_accepts_a_b_tie_only() -> None:
    from judgekit.calibration.labels import PAIRWISE_SCALE, parse_scale_option
    from judgekit.errors import ProblemsError

    scale = parse_scale_option("pairwise")
    assert scale == PAIRWISE_SCALE
    assert (scale.values, scale.level, scale.positive, scale.abstain) == (
        ("A", "B", "tie"),
        "nominal",
        (),
        None,
    )
    table = parse_labels(b"item_id,rater,label\ni1,judge,A\ni1,expert,tie\n", source="pw.csv", scale=scale)
    assert [r.label for r in table.rows] == ["A", "tie"]
    with pytest.raises(ProblemsError, match=r"'a' is not in the scale's domain \['A', 'B', 'tie'\]$"):
        parse_labels(b"item_id,rater,label\ni1,judge,a\n", source="pw.csv", scale=scale)


def test_pairwise_scale_refuses_positive_and_abstain() -> None:
    from judgekit.calibration.labels import parse_scale_option
    from judgekit.errors import JudgekitError

    with pytest.raises(
        JudgekitError, match=r"^--scale pairwise: a pairwise scale .* drop --positive and --abstain$"
    ):
        parse_scale_option("pairwise", positive="B")


def test_pairwise_binary_metrics_undefined_with_reason_agreement_defined() -> None:
    from judgekit.calibration.agreement import compute_agreement
    from judgekit.calibration.labels import PAIRWISE_SCALE

    rows = ["item_id,rater,label"]
    for k, (e, j) in enumerate([("A", "A"), ("B", "B"), ("tie", "tie"), ("A", "B"), ("B", "B"), ("A", "A")]):
        rows += [f"i{k},expert,{e}", f"i{k},judge,{j}"]
    table = parse_labels("\n".join(rows).encode(), source="pw.csv", scale=PAIRWISE_SCALE)
    report = compute_agreement(table, judge="judge", experts=["expert"], resamples=100)
    pair = report.judge_vs_consensus
    assert pair.binary is None
    assert pair.binary_reason is not None
    assert pair.binary_reason.startswith("a pairwise scale (A, B, tie) has no pass/fail class")
    assert pair.percent_agreement.value == pytest.approx(5 / 6)
    assert pair.kappa["none"].value is not None
    assert set(pair.kappa) == {"none"}

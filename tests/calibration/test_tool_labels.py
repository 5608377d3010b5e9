"""Readers of annotation-tool exports: every label kept with its annotator, every unmappable record located.

The records are written in each tool's documented export format (see the module docstring of
``judgekit.calibration.tool_labels``); each error message has its own case below.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.calibration.labels import VERDICT_SCALE, parse_scale_option
from judgekit.calibration.tool_labels import (
    ImportSettings,
    ToolLabels,
    argilla_labels,
    argilla_question_types,
    label_studio_labels,
    langfuse_labels,
    parse_pairs,
    phoenix_labels,
)
from judgekit.errors import JudgekitError

SRC = Path("export.json")
YES_NO = {"Yes": "pass", "No": "fail"}


def settings(**kw: Any) -> ImportSettings:
    return ImportSettings(scale=kw.pop("scale", VERDICT_SCALE), **kw)


def ls_task(**data: Any) -> dict[str, Any]:
    """A Label Studio task as its JSON export writes it: data, annotations[], predictions[]."""
    return {
        "id": 7,
        "data": {"transcript": "...", "item_id": "C-1#0", "case_id": "C-1", **data},
        "annotations": [
            {
                "id": 70,
                "completed_by": {"id": 3, "email": "alice@example.com", "first_name": "A", "last_name": "N"},
                "result": [
                    {
                        "from_name": "resolved",
                        "to_name": "t",
                        "type": "choices",
                        "value": {"choices": ["Yes"]},
                    },
                    {"from_name": "why", "to_name": "t", "type": "textarea", "value": {"text": ["refunded"]}},
                ],
                "was_cancelled": False,
            },
            {
                "id": 71,
                "completed_by": 12,
                "result": [
                    {"from_name": "resolved", "to_name": "t", "type": "choices", "value": {"choices": ["No"]}}
                ],
                "was_cancelled": False,
            },
        ],
        "predictions": [
            {
                "model_version": "judge-v1",
                "result": [
                    {
                        "from_name": "resolved",
                        "to_name": "t",
                        "type": "choices",
                        "value": {"choices": ["Yes"]},
                    }
                ],
            }
        ],
    }


def ls(tasks: Any, **kw: Any) -> ToolLabels:
    kw.setdefault("value_map", YES_NO)
    return label_studio_labels(tasks, source=SRC, settings=settings(**kw))


def test_label_studio_keeps_each_annotator_and_the_textarea_as_notes() -> None:
    out = ls([ls_task()])
    rows = [(r.item_id, r.criterion, r.rater, r.label, r.case_id, r.notes) for r in out.labels]
    assert rows == [
        ("C-1#0", "resolved", "alice@example.com", "pass", "C-1", "refunded"),
        ("C-1#0", "resolved", "12", "fail", "C-1", None),
    ]
    assert out.problems == []
    assert out.left_out == {
        "model predictions (Label Studio predictions[]; --model-rater NAME imports them as that rater)": 1
    }


def test_label_studio_predictions_are_the_model_rater_only_when_asked_and_raters_are_renamed() -> None:
    out = ls([ls_task()], model_rater="judge", rater_names={"12": "bob", "alice@example.com": "alice"})
    assert [(r.rater, r.label) for r in out.labels] == [("alice", "pass"), ("bob", "fail"), ("judge", "pass")]


def test_criteria_are_renamed_to_rubric_ids_after_the_filter_by_tool_name() -> None:
    out = ls([ls_task()], criteria=("resolved",), criterion_names={"resolved": "task_done"})
    assert [r.criterion for r in out.labels] == ["task_done", "task_done"]


def test_a_cancelled_annotation_and_a_criterion_not_asked_for_are_counted_not_problems() -> None:
    task = ls_task()
    task["annotations"][1]["was_cancelled"] = True
    out = ls([task], criteria=("other",))
    assert out.labels == []
    assert out.problems == []
    assert out.left_out["cancelled (skipped) annotations"] == 1
    assert out.left_out["criteria not asked for (--criteria)"] == 1


def test_a_rating_maps_onto_a_numeric_scale_by_value() -> None:
    task = ls_task()
    task["annotations"][0]["result"] = [{"from_name": "q", "type": "rating", "value": {"rating": 4}}]
    task["annotations"][1]["result"] = [{"from_name": "q", "type": "rating", "value": {"rating": 2.0}}]
    out = ls([task], scale=parse_scale_option("1,2,3,4,5"), value_map={})
    assert [r.label for r in out.labels] == ["4", "2"]


def _mutate(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    """Set the dotted ``path`` (list indexes as numbers) of a task to ``value``; ``DELETE`` removes it."""

    def apply(doc: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if value == "DELETE":
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return doc

    return apply


LS_ERRORS = [
    ("data.item_id", "DELETE", "[0].data", "task 7 has no 'item_id' field"),
    ("data.item_id", ["x"], "[0].data", "task 7 has a list in 'item_id'"),
    ("annotations", {"a": 1}, "[0].annotations", "'annotations' is not a list"),
    ("annotations.0", "x", "[0].annotations[0]", "an annotation is not an object"),
    ("annotations.0.completed_by", None, "[0].annotations[0].completed_by", "names no annotator"),
    ("annotations.0.result", "x", "[0].annotations[0].result", "'result' is not a list"),
    ("annotations.0.result.0", 5, "[0].annotations[0].result[0]", "a result is not an object"),
    (
        "annotations.0.result.0.from_name",
        "DELETE",
        "[0].annotations[0].result[0].from_name",
        "names no control",
    ),
    ("annotations.0.result.0.value", "x", "[0].annotations[0].result[0]", "has no 'value' object"),
    (
        "annotations.0.result.0.value",
        {"choices": ["Yes", "No"]},
        "[0].annotations[0].result[0]",
        "has 2 choices; a label is exactly one choice",
    ),
    ("annotations.0.result.0.type", "labels", "[0].annotations[0].result[0]", "is a 'labels' result"),
    (
        "annotations.0.result.0.value",
        {"choices": ["Maybe"]},
        "[0].annotations[0].result[0].value",
        "'Maybe' is not a label of the scale ['pass', 'fail', 'insufficient_information']; map it with --map "
        "Maybe=<label>",
    ),
    (
        "annotations.0.result.0.value",
        {"choices": [None]},
        "[0].annotations[0].result[0].value",
        "has no value",
    ),
    ("predictions.0", "x", "[0].predictions[0]", "a prediction is not an object"),
    ("predictions", "x", "[0].predictions", "'predictions' is not a list"),
]


@pytest.mark.parametrize(("path", "value", "field", "message"), LS_ERRORS, ids=[e[3][:40] for e in LS_ERRORS])
def test_each_label_studio_problem_is_located(path: str, value: Any, field: str, message: str) -> None:
    task = _mutate(path, value)(copy.deepcopy(ls_task()))
    out = ls([task], model_rater="judge")
    assert [(p.file, p.field) for p in out.problems] == [(SRC, field)]
    assert message in out.problems[0].message


def test_a_task_that_is_no_object_is_located_by_its_index() -> None:
    out = ls([ls_task(), 3])
    assert [(p.field, p.message) for p in out.problems] == [("[1]", "a task is not a JSON object")]


def test_two_labels_from_one_rater_on_one_item_are_a_problem_naming_both_places() -> None:
    task = ls_task()
    task["annotations"][1]["completed_by"] = 3  # alice again, by id this time
    task["annotations"][1]["completed_by"] = {"id": 3, "email": "alice@example.com"}
    out = ls([task])
    assert len(out.problems) == 1
    assert (
        "rater 'alice@example.com' labelled item C-1#0/resolved 'fail' here but 'pass' at"
        in out.problems[0].message
    )
    assert "[0].annotations[0].result[0]" in out.problems[0].message


def test_the_same_label_twice_is_counted_once() -> None:
    out = ls([ls_task(), ls_task()])
    assert len(out.labels) == 2
    assert out.left_out["the same label repeated (counted once)"] == 2


def test_a_named_case_field_missing_is_a_problem() -> None:
    out = ls([ls_task()], case_field="case")
    assert "has no text 'case' field (the item's case id)" in out.problems[0].message


def test_an_export_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(JudgekitError, match="not a Label Studio JSON export: expected a JSON list"):
        ls({"tasks": []})


# --------------------------------------------------------------------------- Argilla

TYPES = {"resolved": "label_selection", "tags": "multi_label_selection", "reason": "text", "order": "ranking"}


def argilla_record(**over: Any) -> dict[str, Any]:
    """A record as Argilla's records.json holds it (Record.to_dict)."""
    record = {
        "id": "rec-1",
        "fields": {"transcript": "..."},
        "metadata": {"item_id": "C-1#0", "case_id": "C-1"},
        "suggestions": {"resolved": {"value": "pass", "score": 0.8, "agent": "judge-v1"}},
        "responses": {
            "resolved": [
                {"value": "pass", "user_id": "u-alice", "status": "submitted"},
                {"value": "fail", "user_id": "u-bob", "status": "submitted"},
                {"value": "pass", "user_id": "u-carol", "status": "draft"},
            ],
            "reason": [{"value": "refund issued", "user_id": "u-alice", "status": "submitted"}],
        },
        "vectors": {},
        "_server_id": "0000",
    }
    record.update(over)
    return record


def argilla(records: Any, **kw: Any) -> ToolLabels:
    return argilla_labels(records, types=TYPES, source=SRC, settings=settings(**kw))


def test_argilla_reads_submitted_responses_by_user_with_text_answers_as_notes() -> None:
    out = argilla([argilla_record()])
    assert [(r.rater, r.label, r.notes) for r in out.labels] == [
        ("u-alice", "pass", "refund issued"),
        ("u-bob", "fail", None),
    ]
    assert out.left_out["draft responses (only submitted responses are labels)"] == 1
    assert (
        out.left_out["model suggestions (Argilla suggestions; --model-rater NAME imports them as that rater)"]
        == 1
    )


def test_argilla_suggestions_as_the_model_rater_and_responses_without_status_are_noted() -> None:
    record = argilla_record()
    del record["responses"]["resolved"][0]["status"]
    out = argilla([record], model_rater="judge")
    assert [r.rater for r in out.labels] == ["u-alice", "u-bob", "judge"]
    assert out.notes == [
        "1 response(s) carried no status (an export before Argilla wrote it) and were read as submitted"
    ]


ARGILLA_ERRORS = [
    ({"metadata": {}, "fields": {}}, "[0]", "record rec-1 has no 'item_id' field"),
    ({"responses": []}, "[0].responses", "'responses' is not an object of questions"),
    ({"responses": {"nope": []}}, "[0].responses.nope", "question 'nope' is not in the dataset's settings"),
    (
        {"responses": {"resolved": "x"}},
        "[0].responses.resolved",
        "the responses to 'resolved' are not a list",
    ),
    ({"responses": {"resolved": [3]}}, "[0].responses.resolved[0]", "a response is not an object"),
    (
        {"responses": {"resolved": [{"value": "pass", "user_id": "u", "status": "pending"}]}},
        "[0].responses.resolved[0].status",
        "unknown status 'pending'",
    ),
    (
        {"responses": {"resolved": [{"value": "pass", "status": "submitted"}]}},
        "[0].responses.resolved[0].user_id",
        "the response names no user",
    ),
    (
        {"responses": {"tags": [{"value": ["a", "b"], "user_id": "u", "status": "submitted"}]}},
        "[0].responses.tags[0].value",
        "selects 2 labels; a label is exactly one",
    ),
    (
        {"responses": {"order": [{"value": ["a"], "user_id": "u", "status": "submitted"}]}},
        "[0].responses.order[0].value",
        "is a 'ranking' question",
    ),
    (
        {"responses": {}, "suggestions": ["x"]},
        "[0].suggestions",
        "'suggestions' is not an object of questions",
    ),
    (
        {"responses": {}, "suggestions": {"ghost": {"value": "pass"}}},
        "[0].suggestions.ghost",
        "is not a suggestion of a known question",
    ),
    (
        {"responses": {}, "suggestions": {"tags": {"value": ["a", "b"]}}},
        "[0].suggestions.tags.value",
        "the suggestion selects 2 labels",
    ),
]


@pytest.mark.parametrize(
    ("over", "field", "message"), ARGILLA_ERRORS, ids=[e[2][:40] for e in ARGILLA_ERRORS]
)
def test_each_argilla_problem_is_located(over: dict[str, Any], field: str, message: str) -> None:
    out = argilla([argilla_record(**over)], model_rater="judge")
    assert [p.field for p in out.problems] == [field]
    assert message in out.problems[0].message


def test_a_multi_label_response_of_one_label_is_that_label() -> None:
    out = argilla(
        [argilla_record(responses={"tags": [{"value": ["pass"], "user_id": "u", "status": "submitted"}]})]
    )
    assert [(r.criterion, r.label) for r in out.labels] == [("tags", "pass")]


def test_a_record_that_is_no_object_is_located() -> None:
    assert [p.message for p in argilla(["x"]).problems] == ["a record is not a JSON object"]


def test_argilla_settings_give_each_question_its_type() -> None:
    doc = {"questions": [{"name": "resolved", "settings": {"type": "label_selection", "options": []}}]}
    assert argilla_question_types(doc, SRC) == {"resolved": "label_selection"}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"fields": []}, "not Argilla dataset settings: no 'questions' list"),
        ({"questions": [{"name": "q"}]}, "questions[0]: a question needs a 'name' and 'settings.type'"),
    ],
)
def test_argilla_settings_without_typed_questions_are_refused(doc: Any, message: str) -> None:
    with pytest.raises(JudgekitError, match=message.replace("[", r"\[").replace("]", r"\]")):
        argilla_question_types(doc, SRC)


# --------------------------------------------------------------------------- Langfuse


def score(**over: Any) -> dict[str, Any]:
    """A Langfuse score as GET /api/public/v2/scores returns it."""
    s: dict[str, Any] = {
        "id": "s1",
        "traceId": "C-1#0",
        "observationId": None,
        "sessionId": None,
        "name": "resolved",
        "value": 1,
        "stringValue": "True",
        "dataType": "BOOLEAN",
        "source": "ANNOTATION",
        "authorUserId": "user_alice",
        "comment": "refund confirmed",
        "metadata": {"case_id": "C-1"},
    }
    s.update(over)
    return s


def langfuse(scores: list[Any], **kw: Any) -> ToolLabels:
    kw.setdefault("value_map", {"True": "pass", "False": "fail"})
    return langfuse_labels([(None, s) for s in scores], source=SRC, settings=settings(**kw))


def test_langfuse_annotation_scores_by_author_eval_as_model_api_left_out() -> None:
    scores = [
        score(),
        score(id="s2", source="EVAL", authorUserId=None, stringValue="False"),
        score(source="API"),
    ]
    out = langfuse(scores, model_rater="judge")
    assert [(r.item_id, r.rater, r.label, r.case_id, r.notes) for r in out.labels] == [
        ("C-1#0", "user_alice", "pass", "C-1", "refund confirmed"),
        ("C-1#0", "judge", "fail", "C-1", "refund confirmed"),
    ]
    assert list(out.left_out) == [
        "API scores (Langfuse source API: neither an annotator's nor known to be a model's)"
    ]
    assert langfuse([score(source="EVAL")]).left_out == {
        "model scores (Langfuse source EVAL; --model-rater NAME imports them as that rater)": 1
    }


def test_langfuse_numeric_and_categorical_scores_and_an_item_field_from_metadata() -> None:
    scores = [
        score(dataType="NUMERIC", value=4.0, stringValue=None, metadata={"item_id": "C-2#1"}),
        score(
            dataType="CATEGORICAL", stringValue="3", authorUserId="user_bob", metadata={"item_id": "C-2#1"}
        ),
    ]
    out = langfuse(scores, scale=parse_scale_option("1,2,3,4,5"), item_field="item_id", value_map={})
    assert [(r.item_id, r.rater, r.label) for r in out.labels] == [
        ("C-2#1", "user_alice", "4"),
        ("C-2#1", "user_bob", "3"),
    ]


LANGFUSE_ERRORS = [
    ({"source": "HUMAN"}, "[0].source", "source 'HUMAN' is not ANNOTATION, API or EVAL"),
    ({"name": ""}, "[0].name", "the score has no name"),
    ({"authorUserId": None}, "[0].authorUserId", "an ANNOTATION score with no authorUserId"),
    ({"dataType": "TEXT"}, "[0].dataType", "dataType 'TEXT' is not one of NUMERIC, CATEGORICAL, BOOLEAN"),
    (
        {"dataType": "NUMERIC", "value": "high"},
        "[0].dataType",
        "a NUMERIC score's value 'high' is not a number",
    ),
    ({"traceId": None}, "[0]", "score s1 has no 'traceId' field"),
    ({"stringValue": "Maybe"}, "[0].value", "'Maybe' is not a label of the scale"),
]


@pytest.mark.parametrize(
    ("over", "field", "message"), LANGFUSE_ERRORS, ids=[e[2][:40] for e in LANGFUSE_ERRORS]
)
def test_each_langfuse_problem_is_located(over: dict[str, Any], field: str, message: str) -> None:
    out = langfuse([score(**over)])
    assert [p.field for p in out.problems] == [field]
    assert message in out.problems[0].message


def test_a_langfuse_line_is_located_by_its_line() -> None:
    out = langfuse_labels([(3, score(source="X"))], source=SRC, settings=settings())
    assert [(p.line, p.field) for p in out.problems] == [(3, "source")]
    out = langfuse_labels([(4, "x")], source=SRC, settings=settings())
    assert [(p.line, p.message) for p in out.problems] == [(4, "a score is not a JSON object")]


# --------------------------------------------------------------------------- Phoenix


def annotation(**over: Any) -> dict[str, Any]:
    """A Phoenix span annotation as GET /v1/projects/{project}/span_annotations returns it."""
    a: dict[str, Any] = {
        "id": "U3Bhbjox",
        "span_id": "5f3a1c0000000000",
        "name": "resolved",
        "annotator_kind": "HUMAN",
        "result": {"label": "pass", "score": 1.0, "explanation": "refunded"},
        "metadata": {"item_id": "C-1#0"},
        "identifier": "",
        "source": "APP",
        "user_id": "VXNlcjoy",
    }
    a.update(over)
    return a


def phoenix(annotations: list[Any], **kw: Any) -> ToolLabels:
    return phoenix_labels([(None, a) for a in annotations], source=SRC, settings=settings(**kw))


def test_phoenix_human_annotations_by_user_llm_as_model_code_and_notes_left_out() -> None:
    anns = [
        annotation(),
        annotation(user_id=None, identifier="reviewer-bob", result={"label": "fail"}),
        annotation(annotator_kind="LLM", user_id=None, result={"score": 1}),
        annotation(annotator_kind="CODE"),
        annotation(name="note"),
    ]
    out = phoenix(anns, item_field="item_id", value_map={"1": "pass"}, model_rater="judge")
    assert [(r.item_id, r.rater, r.label, r.notes) for r in out.labels] == [
        ("C-1#0", "VXNlcjoy", "pass", "refunded"),
        ("C-1#0", "reviewer-bob", "fail", None),
        ("C-1#0", "judge", "pass", None),
    ]
    assert out.left_out == {
        "CODE annotations (Phoenix annotator_kind CODE)": 1,
        "notes (Phoenix 'note' annotations)": 1,
    }


def test_phoenix_dataframe_columns_are_read_too() -> None:
    flat = {
        "span_id": "abc",
        "annotation_name": "resolved",
        "annotator_kind": "HUMAN",
        "result.label": "fail",
        "user_id": "u",
    }
    out = phoenix([flat])
    assert [(r.item_id, r.criterion, r.label) for r in out.labels] == [("abc", "resolved", "fail")]


PHOENIX_ERRORS = [
    ({"name": None}, "[0].name", "the annotation has no name"),
    ({"annotator_kind": "ROBOT"}, "[0].annotator_kind", "annotator_kind 'ROBOT' is not HUMAN, LLM or CODE"),
    (
        {"user_id": None, "identifier": ""},
        "[0].user_id",
        "a HUMAN annotation with no user_id and no identifier",
    ),
    ({"result": {"label": None, "score": None}}, "[0].result", "has no value a label can be read from"),
]


@pytest.mark.parametrize(
    ("over", "field", "message"), PHOENIX_ERRORS, ids=[e[2][:40] for e in PHOENIX_ERRORS]
)
def test_each_phoenix_problem_is_located(over: dict[str, Any], field: str, message: str) -> None:
    out = phoenix([annotation(**over)])
    assert [p.field for p in out.problems] == [field]
    assert message in out.problems[0].message


def test_a_phoenix_record_that_is_no_object_is_located() -> None:
    assert [p.message for p in phoenix([1]).problems] == ["an annotation is not a JSON object"]


# --------------------------------------------------------------------------- options


def test_parse_pairs_reads_from_to_pairs() -> None:
    assert parse_pairs("Yes=pass, No = fail,", "--map") == {"Yes": "pass", "No": "fail"}
    assert parse_pairs(None, "--map") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [("Yes", "'Yes' is not FROM=TO"), ("a=b,a=c", "'a' is given twice"), ("=b", "is not FROM=TO")],
)
def test_parse_pairs_refuses_malformed_pairs(text: str, message: str) -> None:
    with pytest.raises(JudgekitError, match=message):
        parse_pairs(text, "--map")


def test_a_map_onto_no_scale_label_is_refused() -> None:
    with pytest.raises(JudgekitError, match="--map: 'ok' is not a label of the scale"):
        settings(value_map={"Yes": "ok"})

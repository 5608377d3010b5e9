"""Tests for judgekit.cases: the three task shapes, every validation rule and every error message."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from judgekit.cases import QUESTION_CHAR_LIMIT, Case, ExpectedState, FieldPredicate, ForbiddenRule
from judgekit.caseset import CaseSet, load_case_set
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.state import load_state
from judgekit.transcript import read_transcripts

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "fixtures" / "seed_shapes"
EXAMPLE = HERE.parent / "examples" / "airdesk"
SLICES = {"real_failures", "high_volume", "policy_edge", "must_refuse", "ambiguous"}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def problems(case_set: CaseSet) -> list[str]:
    return [str(p) for p in case_set.problems]


def one_file(tmp_path: Path, text: str, name: str = "case.yaml") -> tuple[Path, list[str]]:
    path = write(tmp_path / name, text)
    return path, problems(load_case_set(tmp_path))


def case(**fields: Any) -> dict[str, Any]:
    return {"id": "C-1", "input": "Where is my order?", **fields}


def yaml_case(**fields: Any) -> str:
    return yaml.safe_dump(case(**fields), sort_keys=False)


# =========================================================================== the three seed shapes


def test_seed_shaped_fixtures_load_without_problems_or_warnings() -> None:
    case_set = load_case_set(SEEDS)
    assert problems(case_set) == []
    assert case_set.warnings == []
    assert sorted(c.case.id for c in case_set.cases) == [
        "GS-REG-0311",
        "parcel-redirect-before-pickup",
        "pol-0117",
    ]
    assert case_set.manifest is None
    assert case_set.root == SEEDS.resolve()


def test_insurer_task_contract_fields() -> None:
    loaded = load_case_set(SEEDS / "pol-0117.json").cases[0]
    c = loaded.case
    assert (c.version, c.slice) == (4, "policy_edge")
    assert c.origin is not None
    assert (c.origin.type, c.origin.ref, c.origin.redacted) == ("qa_review", "QA-2026-03-0019", True)
    assert c.user is not None
    assert c.user.hidden_facts[1] == "Would accept the refund on the card that paid"
    assert c.opening() == "I cancelled my travel cover last week and still haven't had my premium back."
    # The {table: [rows]} shorthand is read as expected added rows.
    assert c.expected_state is not None
    assert c.expected_state.changes is not None
    added = c.expected_state.changes["premium_refunds"].added[0]
    assert added["amount"] == FieldPredicate(equals=86.4)
    assert [(r.tool, r.when) for r in c.rules()] == [
        ("refund_premium", "amount > 86.4"),
        ("refund_premium", "calls > 1"),
    ]
    assert c.covered_tools() == {"find_policy", "list_premiums", "refund_premium", "open_ticket"}
    assert c.covered_sources() == {"CANX-2"}
    assert c.referenced_files() == [
        ("initial_state", "fixtures/pol-0117/db.sql"),
        ("reference_solution", "transcripts/pol-0117/reference.jsonl"),
    ]
    assert c.signed_off_by == ("travel-policy-owner", "quality-lead")
    assert loaded.line_of("forbidden") == 19
    assert loaded.line_of("forbidden.1.when") == 21


def test_bank_case_fields() -> None:
    c = load_case_set(SEEDS / "GS-REG-0311.yaml").cases[0].case
    assert (c.category, c.severity, c.owner, c.source_incident) == (
        "regression",
        "high",
        "cards-squad",
        "INC-2026-0527",
    )
    assert c.slice_name == "regression"
    assert c.expected is not None
    assert c.expected.route is not None
    assert c.expected.route[0].requires_confirmation is True
    assert c.expected.route[0].args == {"card": "debit"}
    assert c.expected.must_not_mention == ("Fixed-Rate ISA",)
    assert c.questions() == [
        "My debit card is lost, can you stop it?",
        "lost my debit card please block it",
        "I can't find my card, freeze it",
    ]
    assert [r.tool for r in c.rules()] == ["OrderReplacementCard"]
    assert c.prohibited_texts() == ["Reading out the full card number"]
    assert c.covered_tools() == {"FreezeCard", "OrderReplacementCard"}
    assert c.covered_sources() == {"Cards-Terms-2026"}
    assert c.acceptance is not None
    assert c.acceptance.startswith("Freezes the debit card")


def test_plain_task_contract_fields() -> None:
    c = load_case_set(SEEDS / "parcel-redirect-before-pickup.yaml").cases[0].case
    assert c.version == 1
    assert c.opening() == "Send my parcel to my office instead of my flat"
    assert c.required_outcome is not None
    assert c.prohibited_texts()[0] == "Another sender's parcel is redirected"
    assert len(c.forbidden_outcomes) == 3
    assert c.rules() == []
    assert ("user_goal", "Send my parcel to my office instead of my flat") in c.texts()
    state = load_state(SEEDS / c.initial_state) if c.initial_state else None
    assert state is not None
    assert state.tables["users"]["U-9"]["card_last4"] == "0042"


# =========================================================================== the bundled example


def test_example_set_is_valid_and_complete() -> None:
    case_set = load_case_set(EXAMPLE)
    assert problems(case_set) == []
    assert case_set.warnings == []
    assert case_set.manifest is not None
    assert case_set.manifest.synthetic is True
    cases = [c.case for c in case_set.cases]
    assert len(cases) >= 24
    assert {c.slice for c in cases} == SLICES
    suffixes = {c.path.suffix for c in case_set.cases}
    assert suffixes == {".json", ".yaml"}
    assert any(c.category for c in cases)  # bank shape
    assert any(c.user_goal for c in cases)  # plain task contract
    assert any(c.user and c.user.opening for c in cases)  # insurer-style task contract
    assert any(c.is_multi_turn for c in cases)
    tools = set(case_set.manifest.tools)
    for c in cases:
        assert c.covered_tools() <= tools, c.id
        assert c.reference_solution is not None
        assert c.initial_state is not None
    for tool in tools:
        count = sum(tool in c.covered_tools() for c in cases)
        assert count >= case_set.manifest.min_per_tool, tool
    for source in case_set.manifest.sources:
        count = sum(source in c.covered_sources() for c in cases)
        assert count >= case_set.manifest.min_per_source, source


def test_example_references_load_with_their_states() -> None:
    case_set = load_case_set(EXAMPLE)
    for loaded in case_set.cases:
        c = loaded.case
        assert c.reference_solution is not None
        path = case_set.resolve(c.reference_solution)
        (reference,) = read_transcripts(path)
        assert reference.case_id == c.id
        for ref in (reference.initial_state, reference.final_state):
            assert ref is not None
            assert ref.path is not None
            load_state(path.parent / ref.path)
        assert reference.initial_state is not None
        assert reference.initial_state.path is not None
        assert c.initial_state is not None
        assert (path.parent / reference.initial_state.path).resolve() == case_set.resolve(c.initial_state)


# =========================================================================== field errors


def test_unknown_field_with_did_you_mean(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nacceptence: ok\n")
    assert found == [f"{path}:3: acceptence: unknown field 'acceptence'; did you mean 'acceptance'?"]


def test_unknown_nested_field_with_did_you_mean(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nexpected:\n  must_mentoin: [x]\n")
    assert found == [
        f"{path}:4: expected.must_mentoin: unknown field 'must_mentoin'; did you mean 'must_mention'?"
    ]


def test_unknown_field_without_a_close_match_lists_the_allowed_ones(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nuser:\n  zzz: 1\n")
    assert found == [f"{path}:4: user.zzz: unknown field 'zzz'; allowed here: persona, opening, hidden_facts"]


def test_unknown_field_in_json_is_located(tmp_path: Path) -> None:
    path, found = one_file(
        tmp_path, '{\n  "id": "C-1",\n  "input": "hi",\n  "forbiden": []\n}\n', name="case.json"
    )
    assert found == [f"{path}:4: forbiden: unknown field 'forbiden'; did you mean 'forbidden'?"]


def test_wrong_type(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\nversion: three\ninput: hi\n")
    assert found == [f"{path}:2: version: must be an integer, found string 'three'"]


def test_wrong_type_in_a_list_item(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\ntools:\n  - lookup\n  - {name: x}\n")
    assert found == [f"{path}:5: tools.1: Input should be a valid string"]


def test_wrong_literal(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nseverity: urgent\n")
    assert found == [f"{path}:3: severity: must be 'critical', 'high', 'medium' or 'low' (got 'urgent')"]


def test_missing_required_field(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "version: 2\ninput: hi\n")
    assert found == [f"{path}:1: id: required field is missing"]


def test_missing_required_nested_field_points_at_its_parent(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nexpected:\n  route:\n    - args: {a: 1}\n")
    assert found == [f"{path}:5: expected.route.0.tool: required field is missing"]


def test_every_problem_of_a_file_is_reported(tmp_path: Path) -> None:
    _, found = one_file(tmp_path, "version: zero\ninput: hi\nacceptence: x\n")
    assert len(found) == 3


def test_case_that_is_not_a_mapping(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "just a sentence\n")
    assert found == [f"{path}:1: a case must be a mapping of fields, found str"]


def test_empty_case_file(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "# nothing yet\n")
    assert found == [f"{path}:1: a case must be a mapping of fields, found nothing"]


def test_list_of_cases_in_one_file_is_located_per_case(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "- id: A\n  input: hi\n- id: B\n  inptu: hi\n")
    assert found == [
        f"{path}:4: 1.inptu: unknown field 'inptu'; did you mean 'input'?",
    ]
    cases = load_case_set(tmp_path).cases
    assert [(c.case.id, c.line) for c in cases] == [("A", 1)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "id: C 1\ninput: hi\n",
            "1: id: ids use letters, digits and ._:/- only, starting with a letter or digit",
            id="id_with_space",
        ),
        pytest.param("id: '  '\ninput: hi\n", "1: id: must not be empty", id="blank_id"),
        pytest.param(
            "id: C-1\n",
            "1: a case needs something the user says: input, turns, user.opening or user_goal",
            id="nothing_said",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nturns: [{user: hello}]\n",
            "1: a case has either a single input or turns, not both",
            id="input_and_turns",
        ),
        pytest.param(
            "id: C-1\nuser_goal: g\nparaphrases: [x]\n",
            "1: paraphrases reword input; a case without input cannot have them",
            id="paraphrases_without_input",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected_state: {from_reference: true}\n",
            "1: expected_state.from_reference needs a reference_solution",
            id="from_reference_without_reference",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected_state: {snapshot: a.sql, from_reference: true}\n",
            "3: expected_state: expected_state needs exactly one of snapshot, changes, from_reference",
            id="two_state_forms",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nforbidden:\n  - {description: nothing}\n",
            "4: forbidden.0: a forbidden rule needs tool, when, message_pattern or state_when",
            id="rule_without_target",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nforbidden:\n  - {message_pattern: '(unclosed'}\n",
            "4: forbidden.0: message_pattern: not a valid regular expression: "
            "missing ), unterminated subpattern at position 0",
            id="bad_message_pattern",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected:\n  route:\n    - {tool: t, arg_match: {a: ignore}}\n",
            "5: expected.route.0: arg_match names arguments not listed in args: a",
            id="arg_match_unknown_arg",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected:\n  route:\n    - {tool: t, max_calls: 0}\n",
            "5: expected.route.0.max_calls: Input should be greater than or equal to 1 (got 0)",
            id="max_calls_zero",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected_state:\n  changes:\n    t:\n      added:\n"
            "        - {a: {equals: 1, one_of: [1]}}\n",
            "7: expected_state.changes.t.added.0.a: equals fixes the value: combine it with no other value "
            "predicate (got equals with one_of)",
            id="predicate_equals_combined",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected_state:\n  changes:\n    t:\n      modified:\n"
            "        K: {a: {tol: 1, equals: 2}}\n",
            "7: expected_state.changes.t.modified.K.a: tol only goes with approx",
            id="tol_without_approx",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected_state:\n  changes:\n    t:\n      added:\n"
            "        - {a: {matches: '(x'}}\n",
            "7: expected_state.changes.t.added.0.a: matches: not a valid regular expression: "
            "missing ), unterminated subpattern at position 0",
            id="bad_matches_pattern",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nprohibited:\n  - Reading out the card number\n  - {tool: t, whne: x}\n",
            "5: prohibited.1.whne: unknown field 'whne'; did you mean 'when'?",
            id="bad_rule_in_prohibited_without_union_noise",
        ),
        pytest.param(
            "id: C-1\ninput: hi\nexpected:\n  must_mention:\n    - {pattern: '[a-'}\n",
            "5: expected.must_mention.0.pattern: not a valid regular expression: "
            "unterminated character set at position 0",
            id="bad_text_pattern",
        ),
    ],
)
def test_model_rule_messages(tmp_path: Path, text: str, expected: str) -> None:
    path, found = one_file(tmp_path, text)
    assert found == [f"{path}:{expected}"]


# =========================================================================== rules of the contract


def test_version_zero_is_refused(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\nversion: 0\ninput: hi\n")
    assert found == [f"{path}:2: version: must be a positive integer (got 0); versions start at 1"]


def test_negative_version_is_refused(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\nversion: -3\ninput: hi\n")
    assert found == [f"{path}:2: version: must be a positive integer (got -3); versions start at 1"]


def test_regression_without_source_incident(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: GS-REG-1\ncategory: regression\ninput: hi\n")
    assert found == [f"{path}:1: regression cases must link the incident they came from (source_incident)"]


def test_regression_with_source_incident_is_valid(tmp_path: Path) -> None:
    _, found = one_file(tmp_path, "id: GS-REG-1\ncategory: regression\nsource_incident: INC-1\ninput: hi\n")
    assert found == []


def test_duplicate_ids_name_both_locations(tmp_path: Path) -> None:
    first = write(tmp_path / "a.yaml", "id: GS-1\ninput: hi\n")
    second = write(tmp_path / "sub" / "b.yaml", "# another file\nversion: 2\nid: GS-1\ninput: hello\n")
    found = problems(load_case_set(tmp_path))
    assert found == [
        f"{second}:3: id: duplicate id 'GS-1' (also at {first}:1); ids must be unique",
    ]


def test_duplicate_ids_inside_one_jsonl_file(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.jsonl", json.dumps(case()) + "\n" + json.dumps(case()) + "\n")
    found = problems(load_case_set(tmp_path))
    assert found == [f"{path}:2: id: duplicate id 'C-1' (also at {path}:1); ids must be unique"]


def test_review_acceptance_outside_candidates_is_refused(tmp_path: Path) -> None:
    path, found = one_file(
        tmp_path, "id: C-1\ninput: hi\n\nacceptance: 'REVIEW: confirm the tool must not fire'\n"
    )
    assert found == [
        f"{path}:4: acceptance: acceptance still starts with 'REVIEW:': a reviewer must write or approve it "
        "before the case leaves the candidates folder"
    ]


def test_review_acceptance_is_allowed_among_candidates(tmp_path: Path) -> None:
    write(tmp_path / "GS-1.yaml", "id: GS-1\ninput: hi\nacceptance: Answers.\n")
    write(
        tmp_path / "candidates" / "GS-CAND-1.yaml", "id: GS-CAND-1\ninput: hi\nacceptance: 'REVIEW: check'\n"
    )
    case_set = load_case_set(tmp_path)
    assert problems(case_set) == []
    assert [c.case.id for c in case_set.candidates()] == ["GS-CAND-1"]
    assert [c.case.id for c in case_set.reviewed()] == ["GS-1"]
    assert case_set.candidates()[0].case.is_unreviewed


def test_manifest_names_the_candidates_folder(tmp_path: Path) -> None:
    write(tmp_path / "judgekit-set.yaml", "candidates_dir: review/queue\n")
    write(tmp_path / "review" / "queue" / "x.yaml", "id: X\ninput: hi\nacceptance: 'REVIEW: x'\n")
    write(tmp_path / "candidates" / "y.yaml", "id: Y\ninput: hi\nacceptance: 'REVIEW: y'\n")
    case_set = load_case_set(tmp_path)
    assert [c.case.id for c in case_set.candidates()] == ["X"]
    assert [p.field for p in case_set.problems] == ["acceptance"]
    assert case_set.problems[0].file == tmp_path / "candidates" / "y.yaml"


def test_missing_referenced_fixture(tmp_path: Path) -> None:
    path, found = one_file(
        tmp_path, "id: C-1\ninput: hi\ninitial_state: fixtures/nope.sql\nreference_solution: t/ref.jsonl\n"
    )
    root = tmp_path.resolve()
    # issue 35: the message says where the file was looked for and what to do
    assert found == [
        f"{path}:3: initial_state: file 'fixtures/nope.sql' not found: nothing at "
        f"{root / 'fixtures/nope.sql'} (a case's paths are relative to the set's root, {root}); put the file "
        "there, or correct initial_state to name it",
        f"{path}:4: reference_solution: file 't/ref.jsonl' not found: nothing at {root / 't/ref.jsonl'} "
        f"(a case's paths are relative to the set's root, {root}); put the file there, or correct "
        "reference_solution to name it",
    ]


def test_missing_expected_snapshot(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nexpected_state:\n  snapshot: fixtures/end.sql\n")
    assert len(found) == 1
    assert found[0].startswith(f"{path}:4: expected_state.snapshot: file 'fixtures/end.sql' not found")


def test_present_fixture_and_skipping_the_file_check(tmp_path: Path) -> None:
    write(tmp_path / "fixtures" / "db.sql", "CREATE TABLE t (id TEXT PRIMARY KEY);\n")
    write(tmp_path / "a.yaml", "id: A\ninput: hi\ninitial_state: fixtures/db.sql\n")
    write(tmp_path / "b.yaml", "id: B\ninput: hi\ninitial_state: fixtures/absent.sql\n")
    assert len(load_case_set(tmp_path).problems) == 1
    assert load_case_set(tmp_path, check_files=False).problems == []


def test_fixture_paths_resolve_against_the_manifest_root(tmp_path: Path) -> None:
    write(tmp_path / "judgekit-set.yaml", "name: s\n")
    write(tmp_path / "fixtures" / "db.sql", "CREATE TABLE t (id TEXT PRIMARY KEY);\n")
    path = write(tmp_path / "cases" / "deep" / "a.yaml", "id: A\ninput: hi\ninitial_state: fixtures/db.sql\n")
    case_set = load_case_set(path)
    assert case_set.root == tmp_path
    assert case_set.manifest is not None
    assert case_set.manifest.name == "s"
    assert problems(case_set) == []


def test_long_question_is_a_warning_not_a_problem(tmp_path: Path) -> None:
    long = "x" * (QUESTION_CHAR_LIMIT + 1)
    path = write(
        tmp_path / "long.yaml",
        yaml.safe_dump(case(input=long, paraphrases=["short", long + "y"]), sort_keys=False, width=10_000),
    )
    case_set = load_case_set(tmp_path)
    assert case_set.problems == []
    assert [str(w) for w in case_set.warnings] == [
        f"{path}:2: question: 1001 characters; exports that cap questions at 1000 (Copilot Studio) will "
        "leave it out",
        f"{path}:5: paraphrases.1: 1002 characters; exports that cap questions at 1000 (Copilot Studio) will "
        "leave it out",
    ]


def test_question_of_exactly_the_limit_is_fine(tmp_path: Path) -> None:
    write(tmp_path / "ok.yaml", yaml_case(input="x" * QUESTION_CHAR_LIMIT))
    assert load_case_set(tmp_path).warnings == []


def test_multi_turn_cases_are_not_flagged_for_length(tmp_path: Path) -> None:
    write(tmp_path / "t.yaml", yaml.safe_dump({"id": "T", "turns": [{"user": "x" * 1500}]}))
    case_set = load_case_set(tmp_path)
    assert case_set.warnings == []
    assert case_set.cases[0].case.questions() == []


def test_malformed_manifest_is_reported(tmp_path: Path) -> None:
    manifest = write(tmp_path / "judgekit-set.yaml", "name: s\ntools: [a, b\n")
    write(tmp_path / "a.yaml", "id: A\ninput: hi\n")
    case_set = load_case_set(tmp_path)
    assert problems(case_set) == [f"{manifest}:3: malformed YAML: did not find expected ',' or ']'"]
    assert [c.case.id for c in case_set.cases] == ["A"]


def test_invalid_manifest_is_reported(tmp_path: Path) -> None:
    manifest = write(tmp_path / "judgekit-set.yaml", "name: s\nmin_per_tol: 3\n")
    write(tmp_path / "a.yaml", "id: A\ninput: hi\n")
    case_set = load_case_set(tmp_path)
    assert problems(case_set) == [
        f"{manifest}:2: min_per_tol: unknown field 'min_per_tol'; did you mean 'min_per_tool'?"
    ]
    assert case_set.manifest is None


# =========================================================================== file errors


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: [unclosed\nfoo: 1\n")
    assert found == [f"{path}:3: malformed YAML: did not find expected ',' or ']'"]


def test_malformed_json_names_the_line(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, '{\n  "id": "C-1",\n  "input": "hi",,\n}\n', name="c.json")
    assert found == [
        f"{path}:3: malformed JSON: Expecting property name enclosed in double quotes (column 17)"
    ]


def test_malformed_jsonl_line_does_not_hide_the_others(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.jsonl", json.dumps(case(id="A")) + "\n{oops\n" + json.dumps(case(id="B")) + "\n"
    )
    case_set = load_case_set(tmp_path)
    assert problems(case_set) == [
        f"{path}:2: malformed JSON: Expecting property name enclosed in double quotes (column 2)"
    ]
    assert [(c.case.id, c.line) for c in case_set.cases] == [("A", 1), ("B", 3)]


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "case.yaml", b"")
    write(path, b"id: C-1\ninput: hi\nnote: caf\xe9\n")
    assert problems(load_case_set(tmp_path)) == [
        f"{path}:3: not valid UTF-8 (byte 0xe9 at offset 27); save the file as UTF-8"
    ]


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path, found = one_file(tmp_path, "id: C-1\ninput: hi\nid: C-2\n")
    assert found == [f"{path}:3: id: duplicate key (first at line 1); keep one"]


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError) as info:
        load_case_set(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: no case files found (looked for .yaml, .yml, .json, .jsonl; folders named cassettes, "
        "exports, fixtures, intake, labels, resolutions, reviews, runs, states, transcripts are skipped)"
    )


def test_directory_of_only_fixtures_is_empty(tmp_path: Path) -> None:
    write(tmp_path / "fixtures" / "db.json", "{}")
    write(tmp_path / "runs" / "agent.jsonl", "{}\n")
    write(tmp_path / ".hidden" / "x.yaml", "id: X\n")
    with pytest.raises(JudgekitError, match="no case files found"):
        load_case_set(tmp_path)


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError) as info:
        load_case_set(tmp_path / "absent")
    assert str(info.value) == f"{tmp_path / 'absent'}: no such file or folder"


def test_no_path() -> None:
    with pytest.raises(JudgekitError, match="no path given"):
        load_case_set([])


def test_fifty_megabyte_file_is_refused_quickly_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: created instantly
    write(tmp_path / "ok.yaml", "id: OK\ninput: hi\n")
    case_set = load_case_set(tmp_path)
    assert [c.case.id for c in case_set.cases] == ["OK"]
    (problem,) = case_set.problems
    assert problem.file == path
    assert problem.line is None
    assert problem.message.startswith("file is 50.0 MiB; case and configuration files are limited to 20 MiB")


def test_five_thousand_cases_in_one_jsonl_file(tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "id": f"GS-{i:05d}",
                "version": 1,
                "category": "normal",
                "severity": "low",
                "input": f"Question number {i}?",
                "expected": {"route": [{"tool": "lookup_booking", "args": {"ref": f"R{i}"}}]},
                "forbidden": [{"tool": "issue_refund", "when": "amount > 100"}],
            }
        )
        for i in range(5000)
    ]
    path = write(tmp_path / "many.jsonl", "\n".join(lines) + "\n")
    case_set = load_case_set(path)
    assert case_set.problems == []
    assert len(case_set.cases) == 5000
    assert case_set.cases[4999].line == 5000


def test_problems_error_lists_every_problem(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "id: A\nversion: 0\ninput: hi\n")
    write(tmp_path / "b.yaml", "id: B\n")
    case_set = load_case_set(tmp_path)
    with pytest.raises(ProblemsError) as info:
        case_set.raise_if_invalid()
    assert len(info.value.problems) == 2
    assert str(info.value).count("\n") == 1
    assert not case_set.valid


# =========================================================================== model details


def test_field_predicates_from_plain_values_and_operators() -> None:
    state = ExpectedState.model_validate(
        {
            "changes": {
                "refunds": {
                    "added": [
                        {
                            "amount": {"approx": 41.6, "tol": 0.01},
                            "method": "card",
                            "meta": {"equals": {"a": 1}},
                        }
                    ],
                    "removed": ["R-1"],
                    "modified": {
                        "B-1": {"status": {"one_of": ["cancelled", "void"]}, "note": {"absent": True}}
                    },
                }
            },
            "ignore_fields": ["created_at"],
        }
    )
    assert state.changes is not None
    change = state.changes["refunds"]
    added = change.added[0]
    assert (added["amount"].operator, added["amount"].approx, added["amount"].tol) == ("approx", 41.6, 0.01)
    assert (added["method"].operator, added["method"].equals) == ("equals", "card")
    assert added["meta"].equals == {"a": 1}
    assert change.removed == ("R-1",)
    assert change.modified["B-1"]["status"].one_of == ("cancelled", "void")
    assert change.modified["B-1"]["note"].operator == "absent"
    assert state.ignore_fields == ("created_at",)


def test_a_literal_mapping_value_is_written_with_equals() -> None:
    # Every mapping at a field's position is a predicate (tests/test_cases_predicates.py).
    state = ExpectedState.model_validate(
        {"changes": {"t": {"modified": {"K": {"address": {"equals": {"city": "Leith"}}}}}}}
    )
    assert state.changes is not None
    assert state.changes["t"].modified["K"]["address"].equals == {"city": "Leith"}
    with pytest.raises(ValidationError, match="unknown predicate 'city'"):
        ExpectedState.model_validate({"changes": {"t": {"modified": {"K": {"address": {"city": "Leith"}}}}}})


def test_equals_none_is_an_explicit_predicate() -> None:
    predicate = FieldPredicate.model_validate({"equals": None})
    assert predicate.operator == "equals"
    assert predicate.equals is None


def test_empty_changes_means_nothing_may_change() -> None:
    state = ExpectedState.model_validate({"changes": {}})
    assert state.changes == {}


def test_forbidden_rule_defaults() -> None:
    rule = ForbiddenRule.model_validate({"tool": "issue_refund"})
    assert rule.when is None
    assert rule.category.value == "policy_violation"


def test_policy_names_drop_their_revision() -> None:
    c = Case.model_validate(case(policy_refs=["BIL-7 rev 2025-09", "REF-2 Revision 3", "PLAIN"]))
    assert c.covered_sources() == {"BIL-7", "REF-2", "PLAIN"}


def test_opening_falls_back_in_order() -> None:
    assert Case.model_validate({"id": "A", "turns": [{"user": "first"}]}).opening() == "first"
    assert Case.model_validate({"id": "A", "user": {"opening": "hello"}}).opening() == "hello"
    assert Case.model_validate({"id": "A", "user_goal": "goal"}).opening() == "goal"


def test_texts_cover_every_natural_language_field() -> None:
    c = Case.model_validate(
        {
            "id": "A",
            "turns": [{"user": "t0"}],
            "user": {"persona": "p", "hidden_facts": ["h0"]},
            "required_outcome": "r",
            "expected": {"reference_answer": "ra"},
            "response_rubric": ["rb"],
            "acceptance": "ac",
            "prohibited": ["pr", {"tool": "x"}],
            "forbidden_outcomes": ["fo"],
        }
    )
    assert c.texts() == [
        ("turns.0.user", "t0"),
        ("user.persona", "p"),
        ("user.hidden_facts.0", "h0"),
        ("required_outcome", "r"),
        ("expected.reference_answer", "ra"),
        ("response_rubric.0", "rb"),
        ("acceptance", "ac"),
        ("prohibited.0", "pr"),
        ("forbidden_outcomes.0", "fo"),
    ]


def test_contract_fingerprint_changes_with_the_expected_outcome() -> None:
    a = Case.model_validate(case(forbidden=[{"tool": "t", "when": "amount > 1"}]))
    b = Case.model_validate(case(forbidden=[{"tool": "t", "when": "amount > 2"}]))
    c = Case.model_validate(case(forbidden=[{"tool": "t", "when": "amount > 1"}], paraphrases=["x"]))
    assert a.contract_fingerprint_fields() != b.contract_fingerprint_fields()
    assert a.contract_fingerprint_fields() == c.contract_fingerprint_fields()


def test_cases_are_frozen() -> None:
    c = Case.model_validate(case())
    with pytest.raises(ValidationError):
        c.version = 2  # type: ignore[misc]


# =========================================================================== the example is generated


def _example_generator(name: str) -> Any:
    tools = str(EXAMPLE / "tools")
    sys.path.insert(0, tools)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(tools)


@pytest.mark.parametrize("generator", ["make_fixtures", "make_runs"])
def test_example_files_are_what_their_generator_writes(generator: str) -> None:
    files, notes = _example_generator(generator).render()
    assert [n for n in notes if n.startswith(("BROKEN", "UNEXPECTED"))] == []
    stale = sorted(
        str(path.relative_to(EXAMPLE))
        for path, text in files.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    )
    assert stale == [], (
        f"these files differ from what examples/airdesk/tools/{generator}.py writes; edit "
        "tools/airdesk_cases.py or tools/airdesk_world.py and rerun the generator instead of editing them"
    )


def test_manifest_cases_dir_limits_what_the_root_reads(tmp_path: Path) -> None:
    write(tmp_path / "judgekit-set.yaml", "cases_dir: cases\n")
    write(tmp_path / "cases" / "a.yaml", "id: A\ninput: hi\n")
    write(tmp_path / "candidates" / "c.yaml", "id: C\ninput: hi\nacceptance: 'REVIEW: later'\n")
    write(tmp_path / "notes" / "stray.yaml", "not: a case\n")
    case_set = load_case_set(tmp_path)
    assert case_set.problems == []
    assert sorted((c.case.id, c.candidate) for c in case_set.cases) == [("A", False), ("C", True)]


def test_manifest_cases_dir_must_exist(tmp_path: Path) -> None:
    write(tmp_path / "judgekit-set.yaml", "cases_dir: missing\n")
    write(tmp_path / "candidates" / "c.yaml", "id: C\ninput: hi\n")
    case_set = load_case_set(tmp_path)
    assert [str(p) for p in case_set.problems] == [
        f"{tmp_path / 'judgekit-set.yaml'}: cases_dir: folder 'missing' does not exist under {tmp_path}"
    ]


def test_a_route_step_written_as_a_bare_tool_name_says_how_to_write_it(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "id: c\ninput: What is my balance?\nexpected:\n  route: [LookupAccount]\nacceptance: States it.\n",
        encoding="utf-8",
    )
    (problem,) = load_case_set(tmp_path).problems
    assert str(problem) == (
        f"{tmp_path}/c.yaml:4: expected.route.0: a route step is a mapping, not a name: write "
        "{tool: LookupAccount} (add args: to check its arguments)"
    )


def test_a_retired_case_must_be_in_the_regression_split() -> None:
    with pytest.raises(ValidationError, match="a retired case is in the regression split"):
        Case.model_validate({"id": "a", "input": "x", "retired": {"reason": "saturated"}})
    case = Case.model_validate(
        {
            "id": "a",
            "input": "x",
            "split": "regression",
            "retired": {"reason": "saturated", "retired_on": "2026-12-01"},
        }
    )
    assert case.retired is not None
    # retiring is not a contract change: the fields a version bump guards are the same
    assert (
        case.contract_fingerprint_fields()
        == Case.model_validate({"id": "a", "input": "x"}).contract_fingerprint_fields()
    )


# =========================================================================== id shapes


@pytest.mark.parametrize("bad", ["C-1\n", "C-1\r\n", "\nC-1", "C 1", "-C1", ""])
def test_a_case_id_is_the_whole_text_a_trailing_newline_included(bad: str) -> None:
    # `$` matches before a final newline: is_case_id("C-1\n") was true, so an importer that checks ids with
    # it (Inspect samples) let a newline into a case id and every line that prints it
    from judgekit.cases import is_case_id

    assert not is_case_id(bad)
    assert is_case_id("C-1")

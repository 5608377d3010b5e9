from __future__ import annotations

import builtins
import resource
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders._build import by_id, make_case, make_transcript
from judgekit.caseset import load_case_set
from judgekit.expressions import (
    CALL_NAMES,
    MAX_COMPREHENSION_NESTING,
    MAX_CONDITION_CHARS,
    MAX_NESTING,
    STATE_NAMES,
    ConditionError,
    RuleCompileError,
    cel_engine,
    compile_case_rules,
    compile_condition,
    validate_case_rules,
)
from judgekit.graders.rules import _evaluate, check_rules
from judgekit.state import diff_states, snapshot_from_data
from judgekit.verdict import FailureCategory, Verdict

SEED_RULES = [
    {"tool": "issue_refund", "when": "amount > 412.18"},
    {"tool": "issue_refund", "when": "calls > 1"},
    {"tool": "FreezeCard"},
]
TOOLS = ["lookup_policy", "list_payments", "issue_refund", "FreezeCard", "verify_identity"]


def seed_case(**extra: Any):
    return make_case(tools=TOOLS, forbidden=SEED_RULES, **extra)


def run(case, transcript, **kw):
    return by_id(check_rules(case, transcript, **kw))


# --------------------------------------------------------------------------- the seed's refund rules


def test_seed_rules_pass_on_a_single_correct_refund() -> None:
    t = make_transcript(
        [
            ("list_payments", {"policy": "P-1"}),
            ("issue_refund", {"payment_id": "PMT-88213", "amount": 412.18}),
        ]
    )
    checks = run(seed_case(), t)
    assert [checks[f"rule:{i}"].verdict for i in range(3)] == [Verdict.PASS] * 3
    assert "1 call(s) checked" in checks["rule:0"].reason
    assert "FreezeCard was never called" in checks["rule:2"].reason


def test_seed_rule_amount_over_the_payment_fails_with_the_offending_call() -> None:
    t = make_transcript([("lookup_policy", {}), ("issue_refund", {"payment_id": "PMT-88213", "amount": 500})])
    checks = run(seed_case(), t)
    rule = checks["rule:0"]
    assert rule.verdict is Verdict.FAIL
    assert rule.category is FailureCategory.POLICY_VIOLATION
    (ev,) = rule.evidence
    assert ev.call_index == 1
    assert ev.tool == "issue_refund"
    assert ev.arguments == {"payment_id": "PMT-88213", "amount": 500}
    assert ev.data == {"values": {"amount": 500}}
    assert checks["rule:1"].verdict is Verdict.PASS
    assert checks["rule:2"].verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("amount", "broken"),
    [
        pytest.param(412.18, False, id="equal"),
        pytest.param(412, False, id="int_below"),
        pytest.param(413, True, id="int_above"),
        pytest.param(412.19, True, id="cent_above"),
        pytest.param(-1, False, id="negative"),
    ],
)
def test_seed_rule_compares_integers_and_decimals_by_value(amount: float, broken: bool) -> None:
    checks = run(seed_case(), make_transcript([("issue_refund", {"amount": amount})]))
    assert checks["rule:0"].verdict is (Verdict.FAIL if broken else Verdict.PASS)


def test_seed_rule_second_refund_fails_on_the_second_call_only() -> None:
    t = make_transcript([("issue_refund", {"amount": 200}), ("issue_refund", {"amount": 212.18})])
    checks = run(seed_case(), t)
    assert checks["rule:0"].verdict is Verdict.PASS
    rule = checks["rule:1"]
    assert rule.verdict is Verdict.FAIL
    assert [e.call_index for e in rule.evidence] == [1]
    assert rule.evidence[0].data == {"values": {"calls": 2}}


def test_seed_rule_never_call_freeze_card() -> None:
    t = make_transcript([("FreezeCard", {"card": "1234"}), ("FreezeCard", "{not json")])
    rule = run(seed_case(), t)["rule:2"]
    assert rule.verdict is Verdict.FAIL
    assert [e.call_index for e in rule.evidence] == [0, 1]
    assert "broken 2 time(s)" in rule.reason


def test_no_rules_is_not_evaluated() -> None:
    (check,) = check_rules(make_case(), make_transcript())
    assert check.verdict is Verdict.NOT_EVALUATED
    assert check.reason


# --------------------------------------------------------------------------- what the evidence says


def test_call_evidence_names_the_call_and_the_values_read_as_data_not_as_a_call() -> None:
    """Issue 35: the evidence read ``list_prescriptions(identity={'patient_id': 'P-100'}, ...)``."""
    case = make_case(
        tools=["list_prescriptions"],
        identity={"patient_id": "P-100"},
        forbidden=[{"tool": "list_prescriptions", "when": "patient_id != identity.patient_id"}],
    )
    t = make_transcript(
        [
            ("list_prescriptions", {"patient_id": "P-100"}),
            ("list_prescriptions", {"patient_id": "P-101", "limit": 5}),
        ]
    )
    (ev,) = run(case, t)["rule:0"].evidence
    assert ev.summary == (
        'call 1 list_prescriptions: identity.patient_id = "P-100", patient_id = "P-101", '
        "so 'patient_id != identity.patient_id' is true"
    )
    assert (ev.call_index, ev.tool, ev.arguments) == (
        1,
        "list_prescriptions",
        {"patient_id": "P-101", "limit": 5},
    )
    assert ev.data == {"values": {"identity": {"patient_id": "P-100"}, "patient_id": "P-101"}}


@pytest.mark.parametrize(
    ("rule", "args", "summary"),
    [
        pytest.param(
            {"tool": "FreezeCard"}, {}, "call 0 FreezeCard: FreezeCard must never be called", id="tool_alone"
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "args.amount > 400.5 && calls == 1"},
            {"amount": 412.18, "note": "x"},
            "call 0 issue_refund: args.amount = 412.18, calls = 1, "
            "so 'args.amount > 400.5 && calls == 1' is true",
            id="projected_args",
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "!has(args.reason)"},
            {"amount": 1},
            "call 0 issue_refund: args.reason = absent, so '!has(args.reason)' is true",
            id="absent_field",
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "size(args) > 1"},
            {"amount": 1, "reason": "late"},
            "call 0 issue_refund: 'size(args) > 1' is true",
            id="whole_arguments_are_the_evidence_own",
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "reason != ''"},
            {"reason": "é" * 200},
            'call 0 issue_refund: reason = "' + "é" * 78 + "…, so 'reason != ''' is true",
            id="long_value_clipped",
        ),
    ],
)
def test_call_evidence_wording(rule: dict[str, Any], args: dict[str, Any], summary: str) -> None:
    case = make_case(tools=TOOLS, forbidden=[rule])
    (ev,) = run(case, make_transcript([(rule["tool"], args)]))["rule:0"].evidence
    assert ev.summary == summary


# --------------------------------------------------------------------------- every name


def _one(when: str, calls, **kw) -> Any:
    case = make_case(tools=TOOLS, forbidden=[{"tool": kw.pop("tool", "issue_refund"), "when": when}], **kw)
    return check_rules(case, make_transcript(calls, **kw.pop("transcript", {})))[0]


REFUNDS = [
    ("verify_identity", {"customer": "C-1"}),
    ("issue_refund", {"amount": 300, "payment_id": "P-1"}),
    ("issue_refund", {"amount": 200, "payment_id": "P-2"}),
]


@pytest.mark.parametrize(
    ("when", "calls", "expected", "offending"),
    [
        pytest.param("total.amount > 412.18", REFUNDS, Verdict.FAIL, [2], id="total"),
        pytest.param("total.amount > 600", REFUNDS, Verdict.PASS, [], id="total_under"),
        pytest.param(
            "has(total_before.amount) && total_before.amount > 250",
            REFUNDS,
            Verdict.FAIL,
            [2],
            id="total_before",
        ),
        pytest.param("!('verify_identity' in before)", REFUNDS, Verdict.PASS, [], id="before_ok"),
        pytest.param(
            "!('verify_identity' in before)", REFUNDS[1:], Verdict.FAIL, [0, 1], id="before_missing"
        ),
        pytest.param("'issue_refund' in after", REFUNDS, Verdict.FAIL, [1], id="after"),
        pytest.param("index == 2", REFUNDS, Verdict.FAIL, [2], id="index"),
        pytest.param("position == 2", REFUNDS, Verdict.FAIL, [1], id="position"),
        pytest.param("calls == 2", REFUNDS, Verdict.FAIL, [2], id="calls"),
        pytest.param("args.payment_id == 'P-2'", REFUNDS, Verdict.FAIL, [2], id="args"),
        pytest.param(
            "payment_id.startsWith('P-') && amount >= 300", REFUNDS, Verdict.FAIL, [1], id="bare_args"
        ),
        pytest.param("tool == 'issue_refund' && amount == 200", REFUNDS, Verdict.FAIL, [2], id="tool"),
        pytest.param(
            "size(args) > 1 && identity.customer_id != 'C-1'", REFUNDS, Verdict.FAIL, [1, 2], id="identity"
        ),
    ],
)
def test_call_names(when: str, calls, expected: Verdict, offending: list[int]) -> None:
    case = make_case(
        tools=TOOLS, identity={"customer_id": "C-9"}, forbidden=[{"tool": "issue_refund", "when": when}]
    )
    check = check_rules(case, make_transcript(calls))[0]
    assert check.verdict is expected, check.reason
    assert [e.call_index for e in check.evidence] == offending


def test_result_error_and_answered() -> None:
    calls = [
        ("issue_refund", {"amount": 1}),
        ("issue_refund", {"amount": 2}),
        ("issue_refund", {"amount": 3}),
    ]
    results = ['{"error": "card expired"}', '{"status": "refunded", "id": "RF-1"}', None]

    def check(when: str) -> Any:
        case = make_case(tools=TOOLS, forbidden=[{"tool": "issue_refund", "when": when}])
        return check_rules(case, make_transcript(calls, results=results))[0]

    assert [e.call_index for e in check("error").evidence] == [0]
    assert [e.call_index for e in check("!answered").evidence] == [2]
    assert [e.call_index for e in check("result.contains('refunded')").evidence] == [1]
    assert [e.call_index for e in check("result == ''").evidence] == [2]
    assert [e.call_index for e in check("result_data != null && has(result_data.id)").evidence] == [1]


def test_confirmed_sees_the_users_affirmation() -> None:
    messages = [
        {"role": "assistant", "content": "Shall I freeze card 1234?"},
        {"role": "user", "content": "Yes, go ahead."},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "f1", "type": "function", "function": {"name": "FreezeCard", "arguments": "{}"}}
            ],
        },
        {"role": "assistant", "content": "And the other card?"},
        {"role": "user", "content": "No, don't touch it"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "f2", "type": "function", "function": {"name": "FreezeCard", "arguments": "{}"}}
            ],
        },
    ]
    case = make_case(tools=TOOLS, forbidden=[{"tool": "FreezeCard", "when": "!confirmed"}])
    check = check_rules(case, make_transcript(messages=messages))[0]
    assert check.verdict is Verdict.FAIL
    assert [e.call_index for e in check.evidence] == [1]


def test_every_documented_name_is_in_docs() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "graders.md").read_text(encoding="utf-8")
    for name in [*CALL_NAMES, *STATE_NAMES]:
        assert f"`{name}`" in docs, f"docs/graders.md does not document {name}"


# --------------------------------------------------------------------------- bad input at run time


def test_string_compared_with_number_is_an_error_with_reason() -> None:
    check = _one("amount > 412.18", [("issue_refund", {"amount": "412.50"})])
    assert check.verdict is Verdict.ERROR
    assert "call 0 (issue_refund)" in check.reason
    assert "type error" in check.reason


def test_missing_argument_is_an_error_naming_it() -> None:
    check = _one("amount > 412.18", [("issue_refund", {"amt": 500})])
    assert check.verdict is Verdict.ERROR
    assert "no argument 'amount'" in check.reason
    assert "amt" in check.reason


def test_invalid_json_arguments_are_an_error_not_a_pass() -> None:
    check = _one("amount > 412.18", [("issue_refund", '{"amount": 500')])
    assert check.verdict is Verdict.ERROR
    assert "could not be read" in check.reason
    assert "not valid JSON" in check.reason


def test_invalid_json_arguments_do_not_block_conditions_without_arguments() -> None:
    check = _one("calls > 1", [("issue_refund", '{"amount": 500'), ("issue_refund", "{also bad")])
    assert check.verdict is Verdict.FAIL
    assert [e.call_index for e in check.evidence] == [1]


def test_a_broken_rule_fails_even_when_another_call_errors() -> None:
    check = _one("amount > 412.18", [("issue_refund", "{bad"), ("issue_refund", {"amount": 999})])
    assert check.verdict is Verdict.FAIL
    assert "could not be evaluated" in check.reason


def test_non_boolean_condition_is_an_error() -> None:
    check = _one("amount + 1", [("issue_refund", {"amount": 5})])
    assert check.verdict is Verdict.ERROR
    assert "must give true or false" in check.reason


def test_rule_over_a_tool_never_called_passes_and_says_so() -> None:
    check = _one("amount > 1", [("lookup_policy", {})])
    assert check.verdict is Verdict.PASS
    assert "issue_refund was never called" in check.reason


def test_rule_without_tool_applies_to_every_call() -> None:
    case = make_case(forbidden=[{"when": "has(args.customer_id) && args.customer_id != 'C-1'"}])
    t = make_transcript(
        [("lookup", {"customer_id": "C-1"}), ("update", {"customer_id": "C-2"}), ("ping", {})]
    )
    check = check_rules(case, t)[0]
    assert check.verdict is Verdict.FAIL
    assert [e.call_index for e in check.evidence] == [1]


# --------------------------------------------------------------------------- state and message rules

INITIAL = {
    "orders": {
        "O-1": {"customer": "C-1", "address": "1 Main St"},
        "O-2": {"customer": "C-2", "address": "9 Elm"},
    }
}


def _state_case() -> Any:
    return make_case(
        identity={"customer_id": "C-1"},
        forbidden=[
            {
                "state_when": "table == 'orders' && row.customer != identity.customer_id",
                "description": "another customer's order changed",
            }
        ],
    )


def test_state_rule_catches_another_customers_order_changing() -> None:
    initial = snapshot_from_data(INITIAL)
    final = snapshot_from_data(
        {
            "orders": {
                "O-1": {"customer": "C-1", "address": "2 New Rd"},
                "O-2": {"customer": "C-2", "address": "2 New Rd"},
            }
        }
    )
    check = check_rules(_state_case(), make_transcript(), state_changes=diff_states(initial, final))[0]
    assert check.verdict is Verdict.FAIL
    (ev,) = check.evidence
    assert ev.kind == "diff"
    assert ev.data["key"] == "O-2"
    assert ev.data["changed"] == ["address"]
    assert ev.summary == (
        'orders/O-2 (modified): identity.customer_id = "C-1", row.customer = "C-2", table = "orders", '
        "so 'table == 'orders' && row.customer != identity.customer_id' is true"
    )
    assert "another customer's order changed" in check.reason


def test_state_rule_passes_when_only_the_callers_order_changes() -> None:
    initial = snapshot_from_data(INITIAL)
    final = snapshot_from_data(
        {"orders": {**INITIAL["orders"], "O-1": {"customer": "C-1", "address": "2 New"}}}
    )
    check = check_rules(_state_case(), make_transcript(), state_changes=diff_states(initial, final))[0]
    assert check.verdict is Verdict.PASS
    assert "1 changed row(s) checked" in check.reason


def test_state_rule_without_states_is_an_error() -> None:
    check = check_rules(
        _state_case(), make_transcript(), state_unavailable="the transcript records no final_state"
    )[0]
    assert check.verdict is Verdict.ERROR
    assert "no final_state" in check.reason


def test_message_rule_quotes_the_disclosure() -> None:
    case = make_case(forbidden=[{"message_pattern": r"\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b"}])
    t = make_transcript(texts=["Looking that up.", "Your card 4111 1111 1111 1111 is on file."])
    check = check_rules(case, t)[0]
    assert check.verdict is Verdict.FAIL
    (ev,) = check.evidence
    assert ev.quote == "4111 1111 1111 1111"
    assert ev.message_index == 2


def test_message_rule_passes_clean_messages() -> None:
    case = make_case(forbidden=[{"message_pattern": r"\b\d{16}\b"}])
    assert check_rules(case, make_transcript(texts=["Card ending 1111."]))[0].verdict is Verdict.PASS


# --------------------------------------------------------------------------- load-time errors


@pytest.mark.parametrize(
    ("rule", "field", "message"),
    [
        pytest.param(
            {"tool": "issue_refund", "when": "amount >"}, "forbidden.0.when", "not a valid CEL", id="syntax"
        ),
        pytest.param(
            {"tool": "issue_refnd", "when": "amount > 1"},
            "forbidden.0.tool",
            "issue_refnd",
            id="unknown_tool",
        ),
        pytest.param(
            {"tool": "FreezeCrd"}, "forbidden.0.tool", "not among the known tools", id="unknown_tool_only"
        ),
        pytest.param(
            {"state_when": "tabel == 'orders'"},
            "forbidden.0.state_when",
            "unknown name 'tabel'",
            id="unknown_state_name",
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "__import__('os')"},
            "forbidden.0.when",
            "unknown function '__import__'",
            id="import",
        ),
        pytest.param(
            {"tool": "issue_refund", "when": "eval('1')"},
            "forbidden.0.when",
            "unknown function 'eval'",
            id="eval",
        ),
        pytest.param({"tool": "issue_refund", "when": ""}, "forbidden.0.when", "empty", id="empty"),
    ],
)
def test_compile_errors_name_the_case_and_the_rule(rule: dict[str, Any], field: str, message: str) -> None:
    case = make_case(id="gs-031", tools=TOOLS, forbidden=[{"tool": "FreezeCard"}, rule][1:])
    with pytest.raises(RuleCompileError) as info:
        compile_case_rules(case)
    (problem,) = info.value.problems
    assert problem.field == field
    assert "case 'gs-031'" in problem.message
    assert message in problem.message


def test_unknown_argument_name_is_a_load_error_when_the_tool_schema_is_known() -> None:
    case = make_case(id="gs-9", tools=TOOLS, forbidden=[{"tool": "issue_refund", "when": "amout > 1"}])
    with pytest.raises(RuleCompileError) as info:
        compile_case_rules(case, tool_arguments={"issue_refund": ["amount", "payment_id"]})
    assert "unknown name 'amout'" in str(info.value)
    assert "amount, payment_id" in str(info.value)
    compile_case_rules(case)  # without a schema, 'amout' can only be an argument; checked at run time


def test_manifest_tools_count_as_known() -> None:
    case = make_case(forbidden=[{"tool": "InitiateTransfer"}])
    compile_case_rules(case, tools=["InitiateTransfer"])
    with pytest.raises(RuleCompileError):
        compile_case_rules(case, tools=["FreezeCard"])


def test_validate_case_rules_locates_problems(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        "id: GS-2\n"
        "input: refund me\n"
        "tools: [issue_refund]\n"
        "prohibited:\n"
        "  - text only\n"
        "  - tool: issue_refund\n"
        "    when: calls >> 1\n",
        encoding="utf-8",
    )
    case_set = load_case_set(path, compile_rules=False)
    assert case_set.valid, case_set.problems
    (problem,) = validate_case_rules(case_set.cases)
    assert problem.file == path
    assert problem.line == 7
    # Loading compiles the rules by default, so the same problem is a load problem.
    assert load_case_set(path).problems == [problem]
    assert problem.field == "prohibited.1.when"
    assert str(problem).startswith(f"{path}:7: prohibited.1.when: case 'GS-2': not a valid CEL expression")


def test_macro_variables_are_not_unknown_names() -> None:
    cond = compile_condition("changed.exists(f, f.startsWith('email'))", names=STATE_NAMES, arguments=False)
    assert cond.names == {"changed"}


# --------------------------------------------------------------------------- hostile expressions

HOSTILE = [
    "__import__('os').system('id')",
    "args.__class__.__mro__",
    "args.__class__",
    "''.__class__.__base__.__subclasses__()",
    "getattr(args, '__dict__')",
    "open('/etc/passwd')",
    "exec('import os')",
    "lambda: 1",
    "[x for x in args]",
    "a; import os",
    "`id`",
    "\x00",
    "1 +" * 5000,
    "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1),
    "[" * 200 + "]" * 200,
    "+".join(["1"] * 100_000),
    "[1,2,3].map(a, [1,2,3].map(b, [1,2,3].map(c, [1,2,3])))",
    "x" * (MAX_CONDITION_CHARS + 1),
]


EVALUATOR_IMPORTS = frozenset({"datetime"})
"""Modules the ``cel`` extension imports itself on every evaluation (to convert values); nothing else."""


@pytest.fixture(autouse=True, scope="module")
def _cel_engine_loaded() -> None:
    """The CEL engine loaded before any tripwire is armed: it is loaded on first use (start-up), which
    imports ``logging`` once; what hostile input may not do is import anything itself."""
    cel_engine()


class _Tripwire:
    """Record any import, eval, exec or open made while hostile input is being handled."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for name in ("__import__", "eval", "exec", "open", "compile"):
            original = getattr(builtins, name)

            def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
                if not (_name == "__import__" and args and args[0] in EVALUATOR_IMPORTS):
                    self.calls.append(f"{_name}{args[:1]!r}")
                return _original(*args, **kwargs)

            monkeypatch.setattr(builtins, name, spy)


CONTEXT = {
    "args": {"amount": 5, "__class__": "data"},
    "amount": 5,
    "calls": 1,
    "result": "x",
    "before": ["a"],
}


def _try(source: str) -> tuple[str, Any]:
    """Compile and evaluate; return ("refused", msg), ("error", msg) or ("value", value)."""
    try:
        cond = compile_condition(source, names=CALL_NAMES, arguments=True)
    except ConditionError as exc:
        return "refused", str(exc)
    truth, reason = _evaluate(cond, {k: v for k, v in CONTEXT.items() if k in cond.names})
    return ("value", truth) if reason is None else ("error", reason)


@pytest.mark.parametrize("source", HOSTILE, ids=[f"hostile_{i}" for i in range(len(HOSTILE))])
def test_hostile_expressions_are_refused_or_harmless(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    wire = _Tripwire(monkeypatch)
    wire.calls.clear()  # patching itself may import helpers; only what happens below counts
    start = time.process_time()  # CPU time: a blow-up guard that load on the machine cannot trip
    outcome, detail = _try(source)
    recorded = list(wire.calls)
    monkeypatch.undo()
    assert time.process_time() - start < 1.0
    assert recorded == []
    assert outcome in ("refused", "error"), (source, outcome, detail)


def test_dunder_keys_are_plain_data() -> None:
    assert _try("args.__class__ == 'data'") == ("value", True)
    outcome, detail = _try("args.__dict__ == 1")
    assert outcome == "error"
    assert "no such key" in detail


def test_comprehension_nesting_limit_is_exact() -> None:
    inner = "[1].map(a, 1)"
    nested = inner
    for name in "bcdefg"[: MAX_COMPREHENSION_NESTING - 1]:
        nested = f"[1].map({name}, {nested})"
    assert compile_condition(f"size({nested}) == 1", names=CALL_NAMES, arguments=True)
    with pytest.raises(ConditionError, match="nest more than"):
        compile_condition(f"size([1].map(z, {nested})) == 1", names=CALL_NAMES, arguments=True)


def test_a_quadratic_condition_over_large_data_stays_bounded() -> None:
    case = make_case(forbidden=[{"tool": "bulk", "when": "items.exists(a, items.exists(b, a + b == -1))"}])
    start = time.process_time()  # CPU time: a blow-up guard that load on the machine cannot trip
    check = check_rules(case, make_transcript([("bulk", {"items": list(range(200))})]))[0]
    assert check.verdict is Verdict.PASS
    # Past the cost limit the condition is not run at all: the rule is an error naming the limit.
    check = check_rules(case, make_transcript([("bulk", {"items": list(range(1500))})]))[0]
    assert time.process_time() - start < 10.0
    assert check.verdict is Verdict.ERROR
    assert "(limit CEL_MAX_COST)" in check.reason


IDENTS = st.sampled_from(
    [
        "args",
        "amount",
        "calls",
        "__import__",
        "__class__",
        "__globals__",
        "os",
        "system",
        "eval",
        "exec",
        "getattr",
        "open",
        "x",
        "result",
        "before",
        "size",
        "map",
        "exists",
        "has",
        "type",
        "dyn",
    ]
)
TOKENS = st.one_of(
    IDENTS,
    st.sampled_from(
        [
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ".",
            ",",
            ":",
            "?",
            "!",
            "-",
            "+",
            "*",
            "/",
            "%",
            "==",
            "!=",
            "<",
            ">=",
            "&&",
            "||",
            " in ",
            "'s'",
            '"t"',
            "1",
            "2.5",
            "3u",
            "null",
            "true",
            "b'x'",
            "r'\\d'",
            "'''m'''",
            "\\",
            "'",
            "\n",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=60).map("".join))
def test_fuzz_token_soup_never_escapes(source: str) -> None:
    _fuzz_one(source)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_fuzz_arbitrary_text_never_escapes(source: str) -> None:
    _fuzz_one(source)


def _fuzz_one(source: str) -> None:
    calls: list[str] = []
    originals = {name: getattr(builtins, name) for name in ("__import__", "eval", "exec", "open")}

    def make(name: str) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            if not (name == "__import__" and args and args[0] in EVALUATOR_IMPORTS):
                calls.append(f"{name}{args[:1]!r}")
            return originals[name](*args, **kwargs)

        return spy

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()  # CPU time: a blow-up guard that load on the machine cannot trip
    for name in originals:
        setattr(builtins, name, make(name))
    try:
        outcome, detail = _try(source)
    finally:
        for name, fn in originals.items():
            setattr(builtins, name, fn)
    assert time.process_time() - start < 1.0
    assert calls == [], (source, calls)
    assert outcome in ("refused", "error", "value")
    if outcome == "value":
        assert isinstance(detail, bool)
    else:
        assert isinstance(detail, str)
        assert detail
    # ru_maxrss is in KiB on Linux: no single expression may grow the process by 100 MB.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100_000


# --------------------------------------------------------------------------- projections


@pytest.mark.parametrize(
    ("source", "projections"),
    [
        pytest.param("row.status == 'x' && has(row.customer)", {"row": {"status", "customer"}}, id="fields"),
        pytest.param("row.meta.channel == 'web'", {"row": {"meta"}}, id="nested"),
        pytest.param("size(row) > 2", {}, id="whole"),
        pytest.param("row.exists(k, k == 'a')", {}, id="method"),
        pytest.param("row == old", {}, id="compared_whole"),
        pytest.param(
            "row.status == 'a' && old.status != 'a'", {"row": {"status"}, "old": {"status"}}, id="two"
        ),
        pytest.param("'row.x' == table", {}, id="in_string_only"),
        pytest.param("changed.exists(row, row == 'x')", {}, id="macro_variable_shadows"),
    ],
)
def test_projections(source: str, projections: dict[str, set[str]]) -> None:
    cond = compile_condition(source, names=STATE_NAMES, arguments=False)
    assert {k: set(v) for k, v in cond.projections.items() if v is not None} == projections


FIELD = st.sampled_from(["a", "b", "c"])
VALUE = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y"]), st.none())
ROW = st.dictionaries(FIELD, VALUE, max_size=3)
ATOM = st.one_of(
    FIELD.map(lambda f: f"has(row.{f})"),
    st.tuples(FIELD, st.integers(-3, 3)).map(lambda t: f"row.{t[0]} == {t[1]}"),
    st.tuples(FIELD, st.sampled_from(["x", "y"])).map(lambda t: f"row.{t[0]} == '{t[1]}'"),
    st.just("size(row) > 1"),
    st.just("row.exists(k, k == 'a')"),
)
CONDITION = st.lists(st.tuples(ATOM, st.sampled_from([" && ", " || "])), min_size=1, max_size=4).map(
    lambda parts: "".join(a + op for a, op in parts)[:-4]
)


@settings(max_examples=300, deadline=None)
@given(source=CONDITION, row=ROW)
def test_projection_never_changes_a_result(source: str, row: dict[str, Any]) -> None:
    cond = compile_condition(source, names=STATE_NAMES, arguments=False)
    whole = _evaluate(cond, {"row": row})
    projected = _evaluate(cond, {"row": cond.bind("row", row)})
    assert projected == whole


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param("1" * 5_000, id="number_5000_digits"),
        pytest.param("[" * 100_000, id="nested_100000_deep"),
        pytest.param('{"id": "RF-1", "id": "RF-2"}', id="repeated_key"),
        pytest.param('{"id": NaN}', id="not_finite"),
    ],
)
def test_a_hostile_tool_result_is_no_data_not_a_crash(hostile: str) -> None:
    # The tool result is the agent's world's text: past the reader's limits it has no result_data (null),
    # and the rule still checks every call (the call with a usable result is still found).
    calls = [("issue_refund", {"amount": 1}), ("issue_refund", {"amount": 2})]
    results = [hostile, '{"status": "refunded", "id": "RF-1"}']
    case = make_case(tools=TOOLS, forbidden=[{"tool": "issue_refund", "when": "result_data != null"}])
    check = check_rules(case, make_transcript(calls, results=results))[0]
    assert check.verdict is Verdict.FAIL, check.reason
    assert [e.call_index for e in check.evidence] == [1]

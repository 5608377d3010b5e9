from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders._build import by_id, make_case, make_transcript
from judgekit.caseset import load_case_set
from judgekit.graders.layered import combine, deterministic_checks, grade, reference_checks
from judgekit.state import snapshot_from_data
from judgekit.state.provider import StateProvider
from judgekit.transcript import Transcript, read_transcripts
from judgekit.verdict import CheckResult, FailureCategory, Trust, Verdict

REPO = Path(__file__).resolve().parents[2]

INITIAL = {"refunds": {}, "payments": {"PMT-88213": {"amount": 412.18, "status": "settled"}}}
REFUNDED = {
    "refunds": {"RF-1": {"payment_id": "PMT-88213", "amount": 412.18, "method": "original_card"}},
    "payments": {"PMT-88213": {"amount": 412.18, "status": "settled"}},
}

SEED_CASE = {
    "id": "gs-031",
    "user": {"opening": "I got charged twice for November and I want the money back today."},
    "initial_state": "fixtures/gs-031/db.json",
    "tools": ["lookup_policy", "list_payments", "issue_refund", "create_task", "send_message"],
    "expected_state": {"refunds": [{"payment_id": "PMT-88213", "amount": 412.18, "method": "original_card"}]},
    "forbidden": [
        {"tool": "issue_refund", "when": "amount > 412.18"},
        {"tool": "issue_refund", "when": "calls > 1"},
    ],
    "expected": {"must_not_mention": ["same day"], "must_mention": ["412.18"]},
    "response_rubric": ["States the refund amount and the card it returns to"],
}


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    root = tmp_path / "golden"
    (root / "fixtures" / "gs-031").mkdir(parents=True)
    (root / "fixtures" / "gs-031" / "db.json").write_text(json.dumps(INITIAL), encoding="utf-8")
    (root / "runs" / "states").mkdir(parents=True)
    (root / "runs" / "states" / "good.json").write_text(json.dumps(REFUNDED), encoding="utf-8")
    return root


def seed_case(**extra: Any):
    return make_case(**{**SEED_CASE, **extra})


def refund_transcript(amount: float = 412.18, final: Any = "states/good.json", **kw: Any):
    return make_transcript(
        [
            ("list_payments", {"policy": "P-1"}),
            ("issue_refund", {"payment_id": "PMT-88213", "amount": amount}),
        ],
        case_id="gs-031",
        texts=[f"I refunded {amount} to your card; it posts in 5-7 business days."],
        final_state=final,
        **kw,
    )


def test_a_correct_trial_passes_every_layer(golden: Path) -> None:
    states = StateProvider(golden, transcript_dir=golden / "runs")
    checks = deterministic_checks(seed_case(), refund_transcript(), states=states)
    mine = [c for c in checks if c.layer in {"state", "rules", "route", "text"}]
    assert [c.layer for c in mine] == ["state", "state", "rules", "rules", "route", "text", "text"]
    assert [c.verdict for c in mine].count(Verdict.NOT_EVALUATED) == 1  # no route in this case
    result = combine(seed_case(), 1, checks)
    assert result.verdict is Verdict.PASS
    assert result.quality is None  # must_mention gates: nothing is scored
    assert result.metadata["expectations"] == {"stated": 5, "decided": 5, "undecided": []}


def test_an_overrefund_fails_with_state_diff_and_offending_call(golden: Path) -> None:
    final = {"data": {**REFUNDED, "refunds": {"RF-1": {**REFUNDED["refunds"]["RF-1"], "amount": 500}}}}
    states = StateProvider(golden, transcript_dir=golden / "runs")
    checks = by_id(deterministic_checks(seed_case(), refund_transcript(500, final), states=states))
    assert checks["state"].verdict is Verdict.FAIL
    assert checks["state"].category is FailureCategory.INVALID_ARGUMENTS
    assert checks["rule:0"].verdict is Verdict.FAIL
    assert checks["rule:0"].evidence[0].call_index == 1
    assert checks["rule:0"].evidence[0].arguments == {"payment_id": "PMT-88213", "amount": 500}
    assert checks["text:must_mention:0"].verdict is Verdict.FAIL  # "412.18" was never said
    assert checks["text:must_mention:0"].gate
    result = combine(seed_case(), 1, list(checks.values()))
    assert result.verdict is Verdict.FAIL


def test_quality_never_offsets_a_gate(golden: Path) -> None:
    t = refund_transcript(messages=[{"role": "assistant", "content": "It will arrive same day!"}])
    states = StateProvider(golden, transcript_dir=golden / "runs")
    scored = {"must_not_mention": ["same day"], "must_mention": [{"text": "412.18", "scored": True}]}
    result = grade(seed_case(expected=scored), t, states=states)
    assert result.quality == 1.0
    assert result.verdict is Verdict.FAIL
    assert by_id(list(result.checks))["text:must_not_mention:0"].verdict is Verdict.FAIL


def test_transcript_without_final_state_is_an_error_not_a_pass(golden: Path) -> None:
    states = StateProvider(golden, transcript_dir=golden / "runs")
    case = seed_case(forbidden=[*SEED_CASE["forbidden"], {"state_when": "table == 'payments'"}])
    checks = by_id(deterministic_checks(case, refund_transcript(final=None), states=states))
    assert checks["state"].verdict is Verdict.ERROR
    assert "records no final_state" in checks["state"].reason
    assert checks["rule:2"].verdict is Verdict.ERROR
    assert combine(case, 1, list(checks.values())).verdict is Verdict.ERROR


def test_unreadable_states_are_errors_with_the_path(golden: Path) -> None:
    states = StateProvider(golden, transcript_dir=golden / "runs")
    checks = by_id(
        deterministic_checks(seed_case(), refund_transcript(final="states/missing.json"), states=states)
    )
    assert checks["state"].verdict is Verdict.ERROR
    assert "missing.json" in checks["state"].reason
    broken = seed_case(initial_state="fixtures/nope.sql")
    checks = by_id(deterministic_checks(broken, refund_transcript(), states=states))
    assert checks["state"].verdict is Verdict.ERROR
    assert "nope.sql" in checks["state"].reason


def test_trial_that_did_not_start_from_the_fixture_is_reported(golden: Path) -> None:
    drifted = {**INITIAL, "refunds": {"RF-0": {"amount": 1}}}
    states = StateProvider(golden, transcript_dir=golden / "runs")
    checks = by_id(
        deterministic_checks(seed_case(), refund_transcript(initial_state={"data": drifted}), states=states)
    )
    assert checks["state:initial"].verdict is Verdict.ERROR
    assert "refunds/RF-0: row added" in checks["state:initial"].reason


def test_wrong_case_and_uncompilable_rules_are_errors(golden: Path) -> None:
    states = StateProvider(golden, transcript_dir=golden / "runs")
    (check,) = deterministic_checks(seed_case(id="other"), refund_transcript(), states=states)
    assert check.verdict is Verdict.ERROR
    bad = seed_case(forbidden=[{"tool": "issue_refund", "when": "amount >"}])
    checks = by_id(deterministic_checks(bad, refund_transcript(), states=states))
    assert checks["rules"].verdict is Verdict.ERROR
    assert "do not compile" in checks["rules"].reason


def test_state_provider_caches_loaded_files(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgekit.state import provider

    loads: list[Path] = []
    real = provider.load_state
    monkeypatch.setattr(provider, "load_state", lambda p: loads.append(p) or real(p))
    states = StateProvider(golden, transcript_dir=golden / "runs")
    for _ in range(3):
        deterministic_checks(seed_case(), refund_transcript(), states=states)
    other = states.for_transcripts(golden / "runs")
    deterministic_checks(seed_case(), refund_transcript(), states=other)
    assert sorted(p.name for p in loads) == ["db.json", "good.json"]


def test_preloaded_snapshots(golden: Path) -> None:
    states = StateProvider(
        snapshots={
            "fixtures/gs-031/db.json": snapshot_from_data(INITIAL),
            "states/good.json": snapshot_from_data(REFUNDED),
        }
    )
    assert grade(seed_case(), refund_transcript(), states=states).verdict is Verdict.PASS


def test_layers_never_mutate_case_or_transcript(golden: Path) -> None:
    case, transcript = seed_case(), refund_transcript(500)
    before = (case.model_dump(), transcript.model_dump())
    deterministic_checks(case, transcript, states=StateProvider(golden, transcript_dir=golden / "runs"))
    assert (case.model_dump(), transcript.model_dump()) == before


# --------------------------------------------------------------------------- combine


def _check(check_id: str, verdict: Verdict, **kw: Any) -> CheckResult:
    return CheckResult(check_id=check_id, layer=kw.pop("layer", "state"), verdict=verdict, **kw)


def test_combine_precedence_and_quality() -> None:
    case = make_case()
    checks = [
        _check("state", Verdict.PASS),
        _check("rule:0", Verdict.ERROR, reason="type error"),
        _check("a", Verdict.PASS, gate=False, score=1.0, weight=3),
        _check("b", Verdict.FAIL, gate=False, score=0.0, weight=1),
        _check("c", Verdict.ERROR, gate=False, reason="judge unreachable"),
    ]
    result = combine(case, 2, checks)
    assert result.verdict is Verdict.ERROR
    assert result.trial == 2
    assert result.quality == pytest.approx(0.75)
    assert result.metadata["quality_basis"] == {"scored": 2, "weight": 4.0, "unscored": ["c"]}
    assert combine(case, 1, [*checks, _check("route", Verdict.FAIL)]).verdict is Verdict.FAIL
    assert combine(case, 1, [_check("x", Verdict.NOT_EVALUATED)]).verdict is Verdict.NOT_EVALUATED
    assert combine(case, 1, []).quality is None


def test_critical_rubric_criterion_gates() -> None:
    case = make_case()
    rubric = _check(
        "criterion:no_same_day", Verdict.FAIL, layer="rubric", trust=Trust.TRUSTED, reason="promised"
    )
    scored = _check(
        "criterion:tone", Verdict.PASS, layer="rubric", gate=False, score=1.0, trust=Trust.TRUSTED
    )
    result = combine(case, 1, [_check("state", Verdict.PASS), rubric, scored])
    assert result.verdict is Verdict.FAIL
    assert result.quality == 1.0


@pytest.mark.parametrize(
    ("policy", "judge", "expected"),
    [
        ("withhold", Verdict.PASS, Verdict.INSUFFICIENT_INFORMATION),
        ("withhold", Verdict.FAIL, Verdict.INSUFFICIENT_INFORMATION),
        ("count", Verdict.PASS, Verdict.PASS),
        ("count", Verdict.FAIL, Verdict.FAIL),
        ("fail_only", Verdict.PASS, Verdict.INSUFFICIENT_INFORMATION),
        ("fail_only", Verdict.FAIL, Verdict.FAIL),
        ("advisory", Verdict.FAIL, Verdict.PASS),
    ],
)
def test_untrusted_gate_policy(policy: str, judge: Verdict, expected: Verdict) -> None:
    checks = [
        _check("text:must_not_mention:0", Verdict.PASS, layer="text"),
        _check("criterion:safe", judge, layer="rubric", trust=Trust.UNTRUSTED, reason="r"),
    ]
    case = make_case(expected={"must_not_mention": ["same day"]})
    result = combine(case, 1, checks, untrusted=policy)  # type: ignore[arg-type]
    assert result.verdict is expected
    assert result.metadata["untrusted_gates"] == ["criterion:safe"]
    assert result.metadata["untrusted_policy"] == policy


# --------------------------------------------------------------------------- the bundled example set

AIRDESK = REPO / "examples" / "airdesk"
JUDGE_ONLY = {"required_outcome", "acceptance", "forbidden_outcome"}


@pytest.mark.skipif(not (AIRDESK / "judgekit-set.yaml").is_file(), reason="example set not present")
def test_airdesk_references_pass_and_scripted_failures_fail() -> None:
    case_set = load_case_set(AIRDESK)
    case_set.raise_if_invalid()
    cases = case_set.by_id()
    states = StateProvider(case_set.root)
    for loaded in case_set.reviewed():
        _, checks = reference_checks(loaded.case, states=states)
        bad = [c for c in checks if c.verdict not in (Verdict.PASS, Verdict.NOT_EVALUATED)]
        assert not bad, (loaded.case.id, [(c.check_id, c.reason) for c in bad])
    runs = states.for_transcripts(AIRDESK / "runs")
    passing: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for run in ("agent-v1", "agent-v2"):
        for transcript in read_transcripts(AIRDESK / "runs" / f"{run}.jsonl"):
            result = grade(cases[transcript.case_id].case, transcript, states=runs)
            variant = transcript.metadata.get("scripted_variant")
            problems = [c for c in result.checks if c.verdict in (Verdict.FAIL, Verdict.ERROR)]
            if variant == "ref":
                where = (run, transcript.case_id, transcript.trial)
                assert not problems, where
                # without a judge, a reference passes exactly when the case states nothing only a judge
                # can decide (required outcome, acceptance, forbidden outcomes); otherwise it is undecided
                judge_only = result.metadata["expectations"]["undecided"]
                expected = Verdict.INSUFFICIENT_INFORMATION if judge_only else Verdict.PASS
                assert result.verdict is expected, where
                assert all(k.split(":")[0] in JUDGE_ONLY for k in judge_only), where
            else:
                assert problems, (run, transcript.case_id, transcript.trial, variant)
                assert all(p.reason for p in problems)
                assert all(
                    p.category is not None and p.evidence for p in problems if p.verdict is Verdict.FAIL
                )
            passing[run][transcript.case_id].append(not problems)
    # The README's generator counts v1 passing 9 of 26 cases on the deterministic layers and v2 22 (a
    # missing must_mention, GS-REG-0107, is a failure: must_mention gates).
    assert sum(all(v) for v in passing["agent-v1"].values()) == 9
    assert sum(all(v) for v in passing["agent-v2"].values()) == 22
    assert not all(passing["agent-v2"]["GS-REG-0107"])


# ------------------------------------------------------------------ never a crash, never a silent pass

TOOL_NAMES = st.sampled_from(["issue_refund", "list_payments", "FreezeCard", "lookup_policy", "x"])
JSONISH = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-1000, 1000), st.floats(allow_nan=False), st.text(max_size=8)
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["amount", "payment_id", "card", "x"]), JSONISH, max_size=3).map(
        json.dumps
    ),
    st.text(max_size=20),  # mostly not JSON, or JSON that is not an object
)
CALL = st.tuples(
    TOOL_NAMES, ARGUMENTS, st.one_of(st.none(), st.text(max_size=20), st.just('{"error": "boom"}'))
)
STATE = st.one_of(
    st.none(),
    st.just("states/good.json"),
    st.just("states/missing.json"),
    st.just({"data": REFUNDED}),
    st.just({"data": {"refunds": "not a table"}}),
    st.dictionaries(
        st.sampled_from(["refunds", "payments"]), st.dictionaries(st.text(max_size=4), JSONISH, max_size=2)
    ).map(lambda d: {"data": d}),
)

FUZZ_CASE = {
    **SEED_CASE,
    "tools": [*SEED_CASE["tools"], "FreezeCard", "x"],
    "forbidden": [
        *SEED_CASE["forbidden"],
        {"tool": "FreezeCard"},
        {"when": "has(args.card) && string(args.card).size() > 3"},
        {"state_when": "table == 'refunds' && row.amount > 412.18"},
        {"message_pattern": r"\d{4} \d{4}"},
    ],
    "expected": {
        "route": [{"tool": "issue_refund", "args": {"amount": 412.18}, "requires_confirmation": True}],
        "route_match": "unordered",
        "must_mention": ["412.18"],
        "must_not_mention": ["same day"],
    },
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=st.lists(CALL, max_size=5),
    texts=st.lists(st.text(max_size=30), max_size=3),
    final=STATE,
    initial=st.one_of(st.none(), st.just({"data": INITIAL}), st.just("nope.sql")),
)
def test_any_transcript_gets_explicit_verdicts(golden: Path, calls, texts, final, initial) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "refund please"}]
    for i, (tool, raw, result) in enumerate(calls):
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": raw}}
                ],
            }
        )
        if result is not None:
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    messages.extend({"role": "assistant", "content": t} for t in texts)
    data: dict[str, Any] = {"case_id": "gs-031", "messages": messages}
    if final is not None:
        data["final_state"] = final
    if initial is not None:
        data["initial_state"] = initial
    transcript = Transcript.model_validate(data)
    case = make_case(**FUZZ_CASE)
    before = transcript.model_dump()
    checks = deterministic_checks(
        case, transcript, states=StateProvider(golden, transcript_dir=golden / "runs")
    )
    assert transcript.model_dump() == before
    assert {c.layer for c in checks} >= {"state", "rules", "route", "text"}
    for check in checks:
        if check.verdict is not Verdict.PASS:
            assert check.reason, check
        if check.verdict is Verdict.FAIL:
            assert check.category is not None, check
            assert check.evidence, check
    assert "rules" not in by_id(checks), "the fuzz case's rules must compile"
    result = combine(case, 1, checks)
    state = by_id(checks).get("state")
    if final is None or final == "states/missing.json":
        assert state is not None
        assert state.verdict is Verdict.ERROR
        assert result.verdict in (Verdict.ERROR, Verdict.FAIL)


def test_a_layered_grader_takes_its_root_and_transcript_folder_as_text(tmp_path: Path) -> None:
    world = {"orders": {"O-1": {"status": "paid"}}}
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "world.json").write_text(json.dumps(world))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "start.json").write_text(json.dumps(world))
    from judgekit.graders.layered import LayeredGrader

    grader = LayeredGrader(str(tmp_path), transcript_dir=str(tmp_path / "runs"))
    case = make_case(initial_state="fixtures/world.json")
    checks = grader.checks(case, make_transcript(initial_state="start.json"))
    fixture = next(c for c in checks if c.check_id == "fixture")
    assert fixture.verdict is Verdict.PASS, fixture.reason

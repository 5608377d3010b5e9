from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from graders._build import by_id, make_case, make_transcript
from judgekit.cases import load_case_set
from judgekit.graders.layered import StateProvider, combine, deterministic_checks, grade, reference_checks
from judgekit.state import snapshot_from_data
from judgekit.transcript import read_transcripts
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
    assert result.quality == 1.0


def test_an_overrefund_fails_with_state_diff_and_offending_call(golden: Path) -> None:
    final = {"data": {**REFUNDED, "refunds": {"RF-1": {**REFUNDED["refunds"]["RF-1"], "amount": 500}}}}
    states = StateProvider(golden, transcript_dir=golden / "runs")
    checks = by_id(deterministic_checks(seed_case(), refund_transcript(500, final), states=states))
    assert checks["state"].verdict is Verdict.FAIL
    assert checks["state"].category is FailureCategory.INVALID_ARGUMENTS
    assert checks["rule:0"].verdict is Verdict.FAIL
    assert checks["rule:0"].evidence[0].call_index == 1
    assert checks["rule:0"].evidence[0].arguments == {"payment_id": "PMT-88213", "amount": 500}
    result = combine(seed_case(), 1, list(checks.values()))
    assert result.verdict is Verdict.FAIL
    assert result.quality == 0.0  # "412.18" was never said


def test_quality_never_offsets_a_gate(golden: Path) -> None:
    t = refund_transcript(messages=[{"role": "assistant", "content": "It will arrive same day!"}])
    states = StateProvider(golden, transcript_dir=golden / "runs")
    result = grade(seed_case(), t, states=states)
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
    from judgekit.graders import layered

    loads: list[Path] = []
    real = layered.load_state
    monkeypatch.setattr(layered, "load_state", lambda p: loads.append(p) or real(p))
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
        ("count", Verdict.PASS, Verdict.PASS),
        ("count", Verdict.FAIL, Verdict.FAIL),
        ("fail_only", Verdict.PASS, Verdict.INSUFFICIENT_INFORMATION),
        ("fail_only", Verdict.FAIL, Verdict.FAIL),
        ("advisory", Verdict.FAIL, Verdict.PASS),
    ],
)
def test_untrusted_gate_policy(policy: str, judge: Verdict, expected: Verdict) -> None:
    checks = [
        _check("state", Verdict.PASS),
        _check("criterion:safe", judge, layer="rubric", trust=Trust.UNTRUSTED, reason="r"),
    ]
    result = combine(make_case(), 1, checks, untrusted=policy)  # type: ignore[arg-type]
    assert result.verdict is expected
    assert result.metadata["untrusted_gates"] == ["criterion:safe"]
    assert result.metadata["untrusted_policy"] == policy


# --------------------------------------------------------------------------- the bundled example set

AIRDESK = REPO / "examples" / "airdesk"


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
                assert result.verdict is Verdict.PASS, where
                assert not problems, where
            else:
                assert problems, (run, transcript.case_id, transcript.trial, variant)
                assert all(p.reason for p in problems)
                assert all(
                    p.category is not None and p.evidence for p in problems if p.verdict is Verdict.FAIL
                )
            passing[run][transcript.case_id].append(result.verdict is Verdict.PASS)
    # The README's generator counts v1 passing 9 of 26 cases. For v2 it counts 22, because it treats a
    # missing must_mention (GS-REG-0107) as a failure; here must_mention is scored, not gated.
    assert sum(all(v) for v in passing["agent-v1"].values()) == 9
    assert sum(all(v) for v in passing["agent-v2"].values()) == 23
    assert all(passing["agent-v2"]["GS-REG-0107"])

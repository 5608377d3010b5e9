"""The layer registry: every layer classified, the old order kept, a new layer graded with no other edit."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from graders._build import make_case, make_transcript
from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.golden.lint import layer_outcomes
from judgekit.graders.context import LayerContext
from judgekit.graders.contract import GraderSpec, Layer, LayerInfo, describe_layer, make_check
from judgekit.graders.layered import LayeredGrader, deterministic_checks
from judgekit.graders.registry import (
    CORE_LAYERS,
    graded_layers,
    layer_info,
    layer_of,
    layer_specs,
    register_layer,
    registered_layers,
    restrict_to_supported,
    unregister_layer,
    unsupported_layers,
)
from judgekit.integrations.taubench import IMPORTED_LAYER, TAU_BENCH_LAYER, TauBenchGrader
from judgekit.reports.run_model import trial_reasons
from judgekit.results import CaseRef, dump_result_line, make_result_line, read_results
from judgekit.state.provider import StateProvider
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import CheckResult, FailureCategory, Grade, Verdict

CORE_ORDER = [
    "state",
    "rules",
    "route",
    "text",
    "fixture",
    "grounding",
    "rubric",
    "case",
    "reference",
    "runner",
]


# --------------------------------------------------------------------------- every layer classified


def test_every_layer_is_classified() -> None:
    infos = registered_layers()
    assert {Layer(i.name) for i in infos if i.name in set(Layer)} == set(Layer)
    for info in infos:
        assert layer_info(info.name) is info
        assert info.summary
        assert info.version >= 1
        assert all(isinstance(need, Capability) for need in info.needs)
    assert {i.name for i in infos if i.judge_backed} == {Layer.RUBRIC}
    assert {i.name for i in infos if i.bookkeeping} == {
        Layer.FIXTURE,
        Layer.CASE,
        Layer.REFERENCE,
        Layer.RUNNER,
    }


def test_benchmark_layers_are_not_core() -> None:
    assert "tau-bench" not in set(Layer)
    assert "imported" not in set(Layer)
    assert all(layer.info.name in set(Layer) for layer in CORE_LAYERS)
    # they are registered by the tau-bench integration (imported above), after every core layer
    names = [i.name for i in registered_layers()]
    assert names[: len(CORE_ORDER)] == CORE_ORDER
    assert names.index("tau-bench") < names.index("imported")
    assert layer_info("tau-bench") is TAU_BENCH_LAYER.info
    assert layer_info("imported") is IMPORTED_LAYER
    assert TAU_BENCH_LAYER.info.needs == {Capability.ASSISTANT_TEXT}
    assert TAU_BENCH_LAYER.info.optional
    assert not IMPORTED_LAYER.needs
    assert not IMPORTED_LAYER.bookkeeping
    assert not IMPORTED_LAYER.judge_backed


def test_every_capability_rules_out_the_layers_that_need_it() -> None:
    for capability in Capability:
        ruled_out = unsupported_layers({capability: "lost"})
        assert set(ruled_out) == {i.name for i in registered_layers() if capability in i.needs}
    # the order of the old enum: state, rules, route, text, grounding, rubric, tau-bench
    assert list(unsupported_layers({Capability.ASSISTANT_TEXT: "a", Capability.TOOL_RESULTS: "b"})) == [
        "rules",
        "text",
        "grounding",
        "tau-bench",
    ]


def test_a_lossy_trace_restricts_grounding_too() -> None:
    checks = [
        make_check("grounding:Fees-2026", Layer.GROUNDING, Verdict.PASS, gate=False),
        make_check("state", Layer.STATE, Verdict.PASS, gate=True),
        CheckResult(check_id="mine", layer="my-own-layer", verdict=Verdict.PASS),
    ]
    out = restrict_to_supported(checks, {Capability.TOOL_RESULTS: "2 tool call(s) have no result"})
    assert [c.verdict for c in out] == [Verdict.INSUFFICIENT_INFORMATION, Verdict.PASS, Verdict.PASS]
    assert out[0].reason == "lossy trace: 2 tool call(s) have no result"
    assert out[0].score is None
    assert restrict_to_supported(checks, None) == checks


# --------------------------------------------------------------------------- the old order


class _Judge:
    spec = GraderSpec(name="judge-x", args={"model": "m"})


def test_the_registry_order_is_the_old_order() -> None:
    assert [layer.info.name for layer in graded_layers()][:6] == CORE_ORDER[:6]
    everything = LayerContext(
        states=StateProvider(),
        judge=_Judge(),
        options={"grounding": {"mode": "cited"}, "tau-bench": {"reward": "current"}},
    )
    # specs: the deterministic layers, the judge at the rubric layer's place, then tau-bench
    specs = layer_specs(everything)
    assert [s.name for s in specs] == [*CORE_ORDER[:6], "judge-x", "tau-bench"]
    assert specs[5].args == {"mode": "cited"}
    assert specs[7].args == {"reward": "current"}
    assert [s.name for s in layer_specs(everything, deterministic=False)] == ["judge-x"]
    assert [s.name for s in layer_specs(LayerContext(states=StateProvider()))] == CORE_ORDER[:5]


def test_fingerprints_are_those_recorded_before_the_registry() -> None:
    # the fingerprints every result line and calibration record carried before the layers were registered
    assert (
        LayeredGrader().spec.fingerprint == "098b390c84ed5cf08d8c2aaa6dcf6446eaafddb601c9d3cd6388f33cd0d2752e"
    )
    cited = LayeredGrader(grounding="cited").spec.fingerprint
    assert cited == "23bbf653a0403c5e1fc3531572197986bb0daeeba179d19781999f992e2193da"
    assert TauBenchGrader(reward="7362a17").spec.fingerprint == (
        "8f6193e558420b689651824687ea9dd078cb00b6ee0e4efaec9e6ceed68ea8d0"
    )
    assert TauBenchGrader(reward="current").spec.fingerprint == (
        "a3fde532b7fa157729d2d82846a4656f8513d4201bcd194948ac6e317dc3abc4"
    )


def test_checks_come_in_registry_order() -> None:
    case = make_case(
        expected_state={"changes": {}},
        forbidden=[{"tool": "delete_all"}],
        expected={"route": [{"tool": "lookup"}], "must_mention": ["done"], "sources": ["Fees-2026"]},
    )
    transcript = make_transcript([("lookup", {})], texts=["done, see Fees-2026"])
    checks = deterministic_checks(case, transcript, states=StateProvider(), grounding="cited")
    layers = list(dict.fromkeys(c.layer for c in checks))
    assert layers == CORE_ORDER[:6]


def test_optional_layers_are_asked_for_by_name() -> None:
    with pytest.raises(JudgekitError, match="'nonesuch' is not a registered optional layer"):
        LayeredGrader(layers={"nonesuch": {}})
    with pytest.raises(JudgekitError, match="grounding takes grounding=MODE"):
        LayeredGrader(layers={"grounding": {"mode": "cited"}})
    with pytest.raises(JudgekitError, match="'state' is not a registered optional layer"):
        LayeredGrader(layers={"state": {}})


def test_a_grounding_mode_that_is_no_mode_is_an_error_check() -> None:
    case = make_case(expected={"sources": ["Fees-2026"]})
    context = LayerContext(states=StateProvider(), options={"grounding": {"mode": "nearby"}})
    [check] = CORE_LAYERS[5].checks(case, make_transcript(texts=["x"]), context)
    assert check.verdict is Verdict.ERROR
    assert check.reason.startswith("grounding mode 'nearby' is not one of retrieved_or_cited")


# --------------------------------------------------------------------------- a new layer: one file, one call


class NoShrugLayer:
    """A user's own layer: the agent never answers with a shrug (a gate) and signs off warmly (scored)."""

    info: LayerInfo = describe_layer("no-shrug", (Capability.ASSISTANT_TEXT,), "the agent never shrugs")

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        del case, context
        said = " ".join(m.content or "" for m in transcript.messages if m.role == "assistant").lower()
        shrug = "whatever" in said
        return [
            make_check(
                "no-shrug",
                self.info.name,
                Verdict.FAIL if shrug else Verdict.PASS,
                gate=True,
                reason="the agent answered 'whatever'" if shrug else "",
                category=FailureCategory.POLICY_VIOLATION,
            ),
            make_check("no-shrug:warmth", self.info.name, Verdict.PASS, gate=False),
        ]


@pytest.fixture
def no_shrug() -> Iterator[NoShrugLayer]:
    layer = NoShrugLayer()
    register_layer(layer)
    try:
        yield layer
    finally:
        unregister_layer(layer.info.name)


CASE = make_case(expected={"must_mention": ["refund issued"]})


def _grade(text: str) -> Grade:
    return asyncio.run(LayeredGrader().grade(CASE, make_transcript(texts=[text])))


def test_a_registered_layer_is_graded_gated_and_reported(tmp_path: Path) -> None:
    assert _grade("refund issued, whatever").verdict is Verdict.PASS  # nothing checks the shrug yet
    register_layer(NoShrugLayer())  # the one edit: the layer now grades every trial
    try:
        good = _grade("refund issued, have a good day")
        assert [c.check_id for c in good.checks][-2:] == ["no-shrug", "no-shrug:warmth"]
        assert good.verdict is Verdict.PASS
        assert good.quality == 1.0
        bad = _grade("refund issued, whatever")
        # it gates: its failure fails the case, and its quality (warmth 1.0) buys nothing back
        assert bad.verdict is Verdict.FAIL
        assert bad.quality == 1.0
        # it is part of the grader's spec (a changed grader is a different grader)
        spec = LayeredGrader().spec
        assert [p.name for p in spec.parts][-1] == "no-shrug"
        assert spec.fingerprint != "098b390c84ed5cf08d8c2aaa6dcf6446eaafddb601c9d3cd6388f33cd0d2752e"
        # a lossy trace restricts it by its needs, and the golden-set lint counts it as deterministic
        [lossy] = restrict_to_supported(bad.checks[-2:-1], {Capability.ASSISTANT_TEXT: "no replies recorded"})
        assert lossy.verdict is Verdict.INSUFFICIENT_INFORMATION
        assert layer_outcomes(list(bad.checks))["no-shrug"] is Verdict.FAIL
        # reports read it back under its name
        path = tmp_path / "results.jsonl"
        line = make_result_line(
            run_id="r", case=CaseRef(id=CASE.id, version=1), grade=bad, grader=spec.record()
        )
        path.write_text(dump_result_line(line) + "\n", encoding="utf-8")
        [reason] = trial_reasons(read_results(path).lines)
        assert (reason.layer, reason.check_id) == ("no-shrug", "no-shrug")
        assert "the agent answered 'whatever'" in reason.reason
    finally:
        unregister_layer("no-shrug")
    assert _grade("refund issued, whatever").verdict is Verdict.PASS
    assert (
        LayeredGrader().spec.fingerprint == "098b390c84ed5cf08d8c2aaa6dcf6446eaafddb601c9d3cd6388f33cd0d2752e"
    )


def test_registration_refuses_what_it_cannot_keep_apart(no_shrug: NoShrugLayer) -> None:
    with pytest.raises(JudgekitError, match="a layer named 'no-shrug' is already registered"):
        register_layer(NoShrugLayer())
    with pytest.raises(JudgekitError, match="a layer named 'state' is already registered"):
        register_layer(describe_layer("state", (), "mine"))
    with pytest.raises(JudgekitError, match="without commas"):
        register_layer(describe_layer("a,b", (), "two"))
    with pytest.raises(JudgekitError, match="version 0 is not a version"):
        register_layer(describe_layer("zero", (), "no version", version=0))
    with pytest.raises(JudgekitError, match="core layers cannot be unregistered"):
        unregister_layer("state")
    register_layer(no_shrug)  # the same object again (a module imported twice) changes nothing
    assert [i.name for i in registered_layers()].count("no-shrug") == 1


# --------------------------------------------------------------------------- old result lines


def test_old_lines_naming_benchmark_layers_read_without_the_integration(tmp_path: Path) -> None:
    checks = (
        CheckResult(
            check_id="stored_reward", layer="imported", verdict=Verdict.FAIL, reason="stored reward 0"
        ),
        CheckResult(check_id="tau-bench:outputs", layer="tau-bench", verdict=Verdict.FAIL, reason="not said"),
    )
    grade = Grade(case_id="t-1", trial=1, verdict=Verdict.FAIL, checks=checks)
    path = tmp_path / "old.jsonl"
    line = make_result_line(run_id="r", case=CaseRef(id="t-1", version=1), grade=grade)
    path.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    unregister_layer("tau-bench")
    unregister_layer("imported")
    try:
        read = read_results(path)
        assert read.problems == []
        [back] = read.lines
        assert [c.layer for c in back.checks] == ["imported", "tau-bench"]
        assert [layer_of(c) for c in back.checks] == [None, None]
        assert restrict_to_supported(back.checks, {Capability.ASSISTANT_TEXT: "lost"}) == list(back.checks)
        [reason] = trial_reasons(read.lines)
        assert reason.layer == "imported"
    finally:
        register_layer(TAU_BENCH_LAYER)
        register_layer(IMPORTED_LAYER)
    assert layer_info("tau-bench") is TAU_BENCH_LAYER.info

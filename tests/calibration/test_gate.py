"""The trust gate: every condition, each failure named, the policy file and its defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judgekit.calibration.agreement import compute_agreement
from judgekit.calibration.gate import TrustPolicy, evaluate_gate, parse_policy
from judgekit.calibration.labels import parse_labels
from judgekit.errors import ProblemsError
from judgekit.io.documents import read_document

REPO = Path(__file__).resolve().parents[2]


def gate_for(table_bytes: bytes, experts=("e1", "e2", "e3"), policy: TrustPolicy | None = None):
    table = parse_labels(table_bytes, source=Path("t.csv"))
    policy = policy or TrustPolicy()
    report = compute_agreement(
        table, judge="judge", experts=list(experts), resamples=300, confidence=policy.confidence
    )
    return report, evaluate_gate(report, policy)


def by_name(gate):
    return {c.name: c for c in gate.conditions}


def test_a_good_judge_is_trusted(csv_bytes, synthetic):
    rows = synthetic(n_cases=150, flips={"e1": 0.02, "e2": 0.03, "e3": 0.03, "judge": 0.02}, seed=1)
    _, gate = gate_for(csv_bytes(rows))
    assert gate.trusted, [c.message for c in gate.failed]
    assert all(c.passed for c in gate.conditions if c.name != "alt_test")
    assert [c.passed for c in gate.conditions if c.name == "alt_test"] == [None]  # not required by default
    assert [c.name for c in gate.conditions] == [
        "min_items",
        "tpr_lower_bound",
        "tnr_lower_bound",
        "alpha_lower_bound",
        "max_abstention",
        "agreement_gap",
        "alt_test",
    ]


def test_a_judge_that_misses_failures_fails_on_tpr_and_is_named(csv_bytes):
    rows = []
    for i in range(200):
        truth = "fail" if i % 3 == 0 else "pass"
        judge = "pass" if (truth == "fail" and i % 2 == 0) else truth  # misses half the failures
        rows += [(f"i{i}", "", e, truth) for e in ("e1", "e2", "e3")] + [(f"i{i}", "", "judge", judge)]
    _, gate = gate_for(csv_bytes(rows))
    assert not gate.trusted
    failed = {c.name for c in gate.failed}
    assert "tpr_lower_bound" in failed
    assert "tnr_lower_bound" not in failed
    tpr = by_name(gate)["tpr_lower_bound"]
    assert "below the required 0.800" in tpr.message
    assert tpr.observed is not None
    assert tpr.observed < 0.8


def test_too_few_items_fail_min_items(csv_bytes, synthetic):
    rows = synthetic(n_cases=10, flips={"e1": 0.0, "e2": 0.0, "e3": 0.0, "judge": 0.0})
    _, gate = gate_for(csv_bytes(rows))
    c = by_name(gate)["min_items"]
    assert c.passed is False
    assert "20 items" in c.message
    assert "fewer than the required 50" in c.message


def test_an_abstaining_judge_fails_max_abstention(csv_bytes, synthetic):
    rows = synthetic(n_cases=150, abstain={"judge": 0.25}, seed=2)
    _, gate = gate_for(csv_bytes(rows))
    c = by_name(gate)["max_abstention"]
    assert c.passed is False
    assert "above the allowed 10.0%" in c.message


def test_one_expert_cannot_show_the_human_ceiling(csv_bytes, synthetic):
    rows = [r for r in synthetic(n_cases=150, seed=3) if r[2] in ("e1", "judge")]
    _, gate = gate_for(csv_bytes(rows), experts=("e1",))
    c = by_name(gate)["agreement_gap"]
    assert c.passed is False
    assert "two or more experts" in c.message


def test_a_judge_below_the_experts_ceiling_fails_the_gap(csv_bytes, synthetic):
    rows = synthetic(n_cases=150, flips={"e1": 0.0, "e2": 0.0, "e3": 0.0, "judge": 0.08}, seed=4)
    _, gate = gate_for(csv_bytes(rows))
    c = by_name(gate)["agreement_gap"]
    assert c.passed is False
    assert "above the allowed 0.050" in c.message


def test_undefined_tpr_fails_with_its_reason(csv_bytes):
    rows = [(f"i{i}", "", r, "pass") for i in range(60) for r in ("e1", "e2", "judge")]
    _, gate = gate_for(csv_bytes(rows), experts=("e1", "e2"))
    c = by_name(gate)["tpr_lower_bound"]
    assert c.passed is False
    assert c.observed is None
    assert "undefined: no reference failures" in c.message
    assert by_name(gate)["alpha_lower_bound"].passed is False


def test_null_thresholds_disable_conditions(csv_bytes, synthetic):
    rows = synthetic(n_cases=10, abstain={"judge": 0.5})
    policy = parse_policy(
        {
            "min_items": None,
            "max_abstention": None,
            "tpr_lower_bound": None,
            "tnr_lower_bound": None,
            "alpha_lower_bound": None,
            "agreement_gap": {"max_gap": None},
        }
    )
    _, gate = gate_for(csv_bytes(rows), policy=policy)
    assert gate.trusted
    assert all(c.passed is None for c in gate.conditions)
    assert all(c.message == "disabled by the policy" for c in gate.conditions)


def test_the_default_policy_file_shows_exactly_the_defaults():
    doc = read_document(REPO / "calibration" / "policy.default.yaml")
    assert parse_policy(doc.data) == TrustPolicy()
    assert (
        yaml.safe_load((REPO / "calibration" / "policy.default.yaml").read_text())
        == TrustPolicy().model_dump()
    )


def test_an_empty_policy_means_every_default():
    assert parse_policy(None) == TrustPolicy()


def test_policy_problems_name_file_line_and_field(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("min_items: 10\ntpr_lower_bound: 1.5\ncolour: red\nagreement_gap:\n  metric: vibes\n")
    doc = read_document(path)
    with pytest.raises(ProblemsError) as info:
        parse_policy(doc.data, source=path, line_of=doc.line_of)
    messages = [str(p) for p in info.value.problems]
    assert any(
        m.startswith(f"{path}:2: tpr_lower_bound:") and "less than or equal to 1" in m for m in messages
    )
    assert f"{path}:3: colour: unknown setting" in messages
    assert any(m.startswith(f"{path}:5: agreement_gap.metric:") for m in messages)


def test_a_policy_that_is_not_a_mapping_is_refused():
    with pytest.raises(ProblemsError, match="a policy must be a mapping"):
        parse_policy([1, 2], source=Path("p.yaml"))


def test_a_policy_file_named_as_text_is_named_in_its_problems(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("min_items: -3\n")
    doc = read_document(str(path))
    with pytest.raises(ProblemsError, match=r"policy\.yaml:1: min_items") as exc:
        parse_policy(doc.data, source=str(path), line_of=doc.line_of)
    assert exc.value.problems[0].file == path
    assert parse_policy({"min_items": 5}, source=str(path)).min_items == 5


ALT_LABELS = Path(__file__).parent / "data" / "alt_test_labels.csv"


def alt_gate(judge: str, policy: TrustPolicy, experts=("e1", "e2", "e3", "e4")):
    table = parse_labels(ALT_LABELS.read_bytes(), source=ALT_LABELS)
    report = compute_agreement(table, judge=judge, experts=list(experts), resamples=200)
    return by_name(evaluate_gate(report, policy))["alt_test"]


def test_a_required_alt_test_passes_for_a_judge_that_can_replace_an_expert():
    c = alt_gate("judge-good", parse_policy({"alt_test": {"required": True}}))
    assert c.passed is True
    assert (c.observed, c.threshold) == (1.0, 0.5)
    assert c.message.startswith("the judge wins against 4 of 4 annotators (winning rate 1.000")


def test_a_required_alt_test_fails_a_random_judge_and_says_so():
    c = alt_gate("judge-random", parse_policy({"alt_test": {"required": True}}))
    assert c.passed is False
    assert c.observed == 0.0
    assert "wins against 0 of 4 annotators" in c.message
    assert c.message.endswith("below the required 0.500")


def test_a_required_alt_test_with_two_experts_fails_as_undefined():
    c = alt_gate("judge-good", parse_policy({"alt_test": {"required": True}}), experts=("e1", "e2"))
    assert c.passed is False
    assert c.observed is None
    assert c.message == (
        "the alternative-annotator test is undefined: the alternative-annotator test needs at least 3 "
        "annotators with 30 or more items each; there are 2 of 2"
    )


def test_epsilon_in_the_policy_decides_the_alt_test():
    # at epsilon 0.1 judge-good wins against e2 and e4 only (Benjamini-Yekutieli): exactly the 0.5 bar
    c = alt_gate("judge-good", parse_policy({"alt_test": {"required": True, "epsilon": 0.1}}))
    assert (c.passed, c.observed) == (True, 0.5)
    crowd = alt_gate("judge-good", parse_policy({"alt_test": {"required": True, "annotator_kind": "crowd"}}))
    assert crowd.observed == 0.5


def test_the_ceiling_condition_can_decide_on_the_interval(csv_bytes, synthetic):
    # a judge as good as the experts on a point value, but on few items: the interval is wide
    rows = synthetic(n_cases=30, flips={"e1": 0.05, "e2": 0.05, "e3": 0.05, "judge": 0.05}, seed=3)
    point = by_name(gate_for(csv_bytes(rows), policy=parse_policy({"agreement_gap": {"max_gap": 0.1}}))[1])
    interval = by_name(
        gate_for(
            csv_bytes(rows), policy=parse_policy({"agreement_gap": {"max_gap": 0.1, "decide_on": "interval"}})
        )[1]
    )
    gap_point, gap_interval = point["agreement_gap"], interval["agreement_gap"]
    assert gap_point.passed is True
    assert gap_interval.passed is False
    assert gap_interval.observed > gap_point.observed
    assert "upper bound" in gap_interval.message
    assert "(95% paired bootstrap); above the allowed 0.100" in gap_interval.message


def test_decide_on_must_be_point_or_interval():
    with pytest.raises(ProblemsError) as err:
        parse_policy({"agreement_gap": {"decide_on": "median"}}, source=Path("p.yaml"), line_of=lambda loc: 3)
    assert "p.yaml:3: agreement_gap.decide_on" in str(err.value)

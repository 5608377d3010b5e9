"""The trust-at-scale commands end to end through ``judgekit.cli.main``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judgekit.fidelity import fidelity_of
from judgekit.transcript import read_transcripts
from judges.server import JudgeServer, Reply, verdict_reply

FIXTURES = Path(__file__).parents[1] / "formats" / "fixtures" / "otel"

#: A full judge fingerprint (64 hexadecimal characters), as judgekit writes them.
FP_CLI = "c1" * 32


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_from_scratch_matches_the_wilson_arithmetic(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "labels", "plan", "--expected-accuracy", "1.0", "--format", "json")
    assert code == 0
    plan = json.loads(out)
    assert [n["required"] for n in plan["overall"]["needs"]] == [16, 16]


def test_plan_for_a_policy_that_can_never_be_met_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "labels", "plan", "--expected-accuracy", "0.8")
    assert code == 1
    assert "never met" in out


def test_plan_bad_assumption_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "labels", "plan", "--coverage", "0")
    assert code == 2
    assert "expected_coverage" in err


def labels(path: Path, provenance: bool = True) -> Path:
    rows = ["item_id,criterion,rater,label" + (",provenance" if provenance else "")]
    for i in range(30):
        label = "fail" if i % 3 == 0 else "pass"
        for rater in ("e1", "e2", "judge"):
            rows.append(f"c{i}#1,honest,{rater},{label}" + (",random" if provenance else ""))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_plan_splits_a_budget_by_lees_allocation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judgekit.calibration.corrected import lee_allocation

    table = labels(tmp_path / "labels.csv")  # 10 fails and 20 passes, all judged right: the pilot
    args = ["labels", "plan", str(table), "--judge", "judge", "--experts", "e1,e2", "--budget", "200"]
    args += ["--pass-share", "0.6"]
    code, out, _ = run(capsys, *args, "--format", "json")
    assert code == 0
    (alloc,) = json.loads(out)["allocation"]
    want = lee_allocation(200, 0.6, pilot_q0_hits=10, pilot_m0=10, pilot_q1_hits=20, pilot_m1=20)
    assert alloc == {"criterion": "honest", **want.model_dump(mode="json")}
    assert (alloc["m0"], alloc["m1"], alloc["label_fail"], alloc["label_pass"]) == (95, 105, 85, 85)
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert "| honest | 10 / 20 | 0.917 | 0.955 | 1.833 | 95 | 105 | 85 | 85 |" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--budget", "100"], "error: --budget and --pass-share go together: give both"),
        (
            ["--budget", "100", "--pass-share", "1.0"],
            "the judge's pass share must be strictly between 0 and 1",
        ),
        (
            ["--budget", "10", "--pass-share", "0.5"],
            "the budget 10 is smaller than the 30 labels already collected",
        ),
    ],
)
def test_plan_budget_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    table = labels(tmp_path / "labels.csv")
    code, _, err = run(capsys, "labels", "plan", str(table), "--judge", "judge", "--experts", "e1,e2", *extra)
    assert code == 2
    assert message in err


def test_plan_budget_needs_the_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "labels.csv")
    code, _, err = run(
        capsys, "labels", "plan", str(table), "--experts", "e1,e2", "--budget", "100", "--pass-share", "0.5"
    )
    assert code == 2
    assert "error: --budget: name the --judge whose verdicts on LABELS are the pilot" in err


def test_plan_budget_without_labels_has_no_pilot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "labels", "plan", "--budget", "100", "--pass-share", "0.5", "--format", "json")
    assert code == 0
    (alloc,) = json.loads(out)["allocation"]
    assert (alloc["criterion"], alloc["kappa"], alloc["m0"], alloc["m1"]) == ("", 1.0, 50, 50)


def test_plan_budget_without_labels_splits_by_the_stated_beliefs(capsys: pytest.CaptureFixture[str]) -> None:
    # κ = (1 − 0.7)/(1 − 0.9) = 3: m1 = round(200/(1 + 1.5·√3)) = 56 known-pass, m0 = 144 known-fail
    # (Lee et al.); the old code split as if κ = 1, 120 / 80
    plan = ["labels", "plan", "--budget", "200", "--pass-share", "0.4", "--expected-tpr", "0.7"]
    code, out, _ = run(capsys, *plan, "--expected-tnr", "0.9", "--format", "json")
    assert code == 1  # TPR 0.7 can never clear the default bound; the split is printed all the same
    (alloc,) = json.loads(out)["allocation"]
    assert (alloc["m0"], alloc["m1"], alloc["basis"]) == (144, 56, "beliefs")
    code, out, _ = run(capsys, *plan, "--expected-tnr", "0.9")
    assert "| (all) | 0 / 0 | 0.700 | 0.900 | 3.000 | 144 | 56 | 144 | 56 |" in out
    assert "that split comes from the stated beliefs (q̃0 = expected TPR 0.700, q̃1 = expected TNR 0.900" in out


def test_plan_budget_with_a_belief_of_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "labels", "plan", "--budget", "200", "--pass-share", "0.4", "--expected-tnr", "1.0"
    )
    assert code == 2
    assert "error: --budget/--pass-share: with no pilot the split rests on the expected TNR, which" in err


def test_check_then_select_then_refuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "labels.csv")
    records = tmp_path / "records"
    records.mkdir()  # a --records folder that is named must exist
    code, out, _ = run(capsys, "labels", "check", str(table), "--records", str(records))
    assert code == 0
    assert "use the 30 random-sample items" in out
    code, _, _ = run(
        capsys,
        "labels",
        "select",
        str(table),
        "--candidates",
        "fp-a,fp-b",
        "--chosen",
        "fp-a",
        "--records",
        str(records),
    )
    assert code == 0
    code, _, err = run(capsys, "labels", "check", str(table), "--records", str(records))
    assert code == 1
    assert "development set" in err


def test_check_refuses_few_shot_leakage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "labels.csv")
    shots = tmp_path / "shots.jsonl"
    shots.write_text(json.dumps({"item_id": "c3#1", "label": "fail"}) + "\n")
    code, _, err = run(
        capsys, "labels", "check", str(table), "--few-shot", str(shots), "--records", str(tmp_path)
    )
    assert code == 1
    assert "shots.jsonl:1: item_id:" in err


def test_failure_modes_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "labels.csv")
    code, out, err = run(
        capsys, "judge", "failure-modes", str(table), "--judge", "judge", "--experts", "e1,e2"
    )
    assert code == 1  # 30 items: fewer than the policy's min_items
    assert "one failure mode" in out
    assert "not trusted: honest" in err
    assert (
        "note: no fingerprint (--fingerprint or a fingerprint column): the decisions are not recorded" in err
    )


def modes_labels(path: Path) -> Path:
    """Every rater agrees; ``honest`` and ``refunds`` are well covered, ``tone`` has 9 failures only."""
    rows = ["item_id,criterion,rater,label"]
    for criterion, fails, passes in (("honest", 40, 80), ("refunds", 40, 80), ("tone", 9, 21)):
        for i in range(fails + passes):
            for rater in ("e1", "e2", "judge"):
                rows.append(f"{criterion}{i:03d}#1,{criterion},{rater},{'fail' if i < fails else 'pass'}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_failure_modes_records_decisions_that_trust_then_withholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = modes_labels(tmp_path / "labels.csv")
    policy = tmp_path / "policy.yaml"
    policy.write_text("bootstrap:\n  resamples: 200\n")
    records = tmp_path / "records"
    records.mkdir()  # a --records folder that is named must exist
    common = (
        "--judge",
        "judge",
        "--experts",
        "e1,e2",
        "--policy",
        str(policy),
        "--fingerprint",
        FP_CLI,
        "--records",
        str(records),
    )
    code, _, err = run(capsys, "calibrate", str(table), *common)
    assert code == 0, err  # the judge as a whole is trusted: 330 items, the rare mode's few are drowned out
    code, out, err = run(capsys, "judge", "failure-modes", str(table), *common)
    assert code == 1
    assert "not trusted: tone" in err
    (path,) = (records / "failure-modes").glob("*.json")
    assert f"failure-mode record: {path}" in err
    data = json.loads(path.read_text())
    assert data["fingerprint"] == FP_CLI
    assert {d["criterion"]: d["trusted"] for d in data["decisions"]} == {
        "honest": True,
        "refunds": True,
        "tone": False,
    }
    code, out, _ = run(capsys, "judge", "trust", FP_CLI, "--criterion", "tone", "--records", str(records))
    assert code == 1
    assert out.startswith(
        f"untrusted: failure mode 'tone' was rejected by the failure-mode record ({path.name}, "
    )
    assert "does not clear the family-wise level 0.025; TPR lower bound 0.701 (required 0.8)" in out
    code, out, _ = run(capsys, "judge", "trust", FP_CLI, "--criterion", "honest", "--records", str(records))
    assert code == 0
    assert out.startswith("trusted: calibration record ")
    assert out.endswith(
        f"failure mode 'honest' trusted by {path.name}; "
        "criterion 'honest' was labelled in the calibration (by id; its text was not given)\n"
    )
    code, out, _ = run(capsys, "judge", "trust", FP_CLI, "--records", str(records))
    assert code == 0
    assert "failure mode(s) not trusted by" in out


def test_failure_modes_cannot_record_into_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "labels.csv")
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "failure-modes").write_text("")
    code, _, err = run(
        capsys,
        "judge",
        "failure-modes",
        str(table),
        "--judge",
        "judge",
        "--experts",
        "e1,e2",
        "--fingerprint",
        FP_CLI,
        "--records",
        str(tmp_path / "records"),
    )
    assert code == 2  # an output that cannot be written is an input error
    assert (
        f"{tmp_path / 'records' / 'failure-modes'}: cannot create the folder for the failure-mode record"
        in err
    )
    assert "Traceback" not in err


def test_import_otel_writes_transcripts_with_fidelity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "t.jsonl"
    fid = tmp_path / "f.json"
    code, out, _ = run(
        capsys,
        "import",
        "otel",
        str(FIXTURES / "openllmetry.json"),
        "--out",
        str(out_file),
        "--fidelity",
        str(fid),
    )
    assert code == 0
    assert "route: insufficient_information" in out
    [t] = read_transcripts(out_file)
    assert fidelity_of(t).arguments_unparseable == 1
    assert json.loads(fid.read_text())[0]["tool_results_missing"] == 1


def test_import_otel_refuses_a_cycle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "import", "otel", str(FIXTURES / "cycle.json"), "--out", str(tmp_path / "t.jsonl")
    )
    assert code == 2  # a trace that cannot be imported is an input error
    assert "cycle" in err
    assert "Traceback" not in err


def test_export_otel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.verdict import Grade, Verdict

    transcripts = tmp_path / "t.jsonl"
    assert (
        run(capsys, "import", "otel", str(FIXTURES / "genai_messages.json"), "--out", str(transcripts))[0]
        == 0
    )
    results = tmp_path / "r.jsonl"
    line = make_result_line(
        run_id="r",
        case=CaseRef(id="refund-a17", version=1),
        grade=Grade(case_id="refund-a17", trial=1, verdict=Verdict.PASS),
    )
    results.write_text(dump_result_line(line) + "\n")
    events = tmp_path / "e.json"
    code, _, err = run(
        capsys, "export", "otel", str(results), "--transcripts", str(transcripts), "--out", str(events)
    )
    assert code == 0
    assert "1 gen_ai.evaluation.result event(s)" in err
    [record] = json.loads(events.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert record["traceId"] == "5cf92f3577b34da6a3ce929d0e0e4737"


@pytest.fixture
def sycophantic_server() -> Iterator[JudgeServer]:
    def script(body: dict[str, Any], i: int) -> Reply:
        text = body["messages"][1]["content"]
        if "The FIRST conversation" in text:
            return Reply(content=json.dumps({"verdict": "first"}))
        if "exactly right" in text or "MARKER-FAIL" not in text:
            return Reply(content=verdict_reply("pass"))
        return Reply(content=verdict_reply("fail"))

    server = JudgeServer(script).start()
    yield server
    server.stop()


def test_probe_bias_catches_a_sycophantic_judge_and_replays(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sycophantic_server: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-probe-cli")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    transcripts = tmp_path / "t.jsonl"
    rows = []
    for i in range(12):
        claim = "Refund issued. MARKER-FAIL" if i % 2 else "Refund issued."
        rows.append(
            json.dumps(
                {
                    "case_id": f"c{i % 6}",
                    "trial": 1 + i // 6,
                    "messages": [
                        {"role": "user", "content": "refund please"},
                        {"role": "assistant", "content": claim},
                    ],
                }
            )
        )
    transcripts.write_text("\n".join(rows) + "\n")
    cassette = tmp_path / "probe.jsonl"
    (tmp_path / "records").mkdir()
    args = [
        "judge",
        "probe-bias",
        "--transcripts",
        str(transcripts),
        "--judge-model",
        "openai/test-judge",
        "--judge-api-base",
        sycophantic_server.api_base,
        "--cassette",
        str(cassette),
        "--records",
        str(tmp_path / "records"),
        "--probes",
        "sycophancy,length,position",
        "--must-pass",
        "sycophancy",
    ]
    code, out, err = run(capsys, *args)
    assert code == 1, err
    # 12 transcripts × the 4 criteria of the honest-reporting rubric; half the verdicts were fail
    assert "sycophancy: verdict flipped on 24/48" in out
    assert "position: verdict flipped on 24/24" in out
    assert "NOT TRUSTED" in err
    assert "sycophancy (biased)" in err
    reports = list((tmp_path / "records" / "bias").glob("*.json"))
    assert len(reports) == 1
    calls = sycophantic_server.calls
    replay = [*args, "--cache-mode", "replay", "--no-record"]
    code, out2, _ = run(capsys, *replay)
    assert code == 1
    assert sycophantic_server.calls == calls
    assert out2 == out


CASE = """\
id: refund-a17
version: 1
category: normal
severity: high
owner: refunds
dimensions: [correct]
input: Please refund my order A17.
expected:
  route:
    - tool: lookup_order
      args: {order_id: A17}
    - tool: issue_refund
      args: {order_id: A17, amount: 42.5}
  must_mention: [R-9]
  outcome: answer
"""


II = "insufficient_information"


@pytest.mark.parametrize(
    ("fixture", "verdict", "route", "text"),
    [
        ("genai_messages.json", "pass", "pass", "pass"),
        ("openllmetry.json", II, II, II),  # arguments cut off, a result missing, a partial export
        ("final_answer_only.json", II, II, "pass"),  # only the answer: route unsupported, text supported
    ],
)
def test_grade_honours_the_fidelity_of_imported_traces(  # noqa: PLR0917 - parametrised
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: str, verdict: str, route: str, text: str
) -> None:
    cases = tmp_path / "set" / "cases"
    cases.mkdir(parents=True)
    (cases / "refund.yaml").write_text(CASE)
    transcripts = tmp_path / "t.jsonl"
    assert run(capsys, "import", "otel", str(FIXTURES / fixture), "--out", str(transcripts))[0] == 0
    results = tmp_path / "r.jsonl"
    code, _, _ = run(
        capsys,
        "grade",
        "--cases",
        str(tmp_path / "set"),
        "--transcripts",
        str(transcripts),
        "--out",
        str(results),
        "--no-progress",
    )
    assert code == 0
    line = json.loads(results.read_text().splitlines()[0])
    assert line["verdict"] == verdict
    provenance = line["provenance"]  # every result row says how it was produced
    assert provenance["method"] == "layered"
    assert provenance["thresholds"]["untrusted_policy"] == "withhold"  # the default
    assert line["untrusted_policy"] == "withhold"
    assert line["grader"]["fingerprint"] == line["grader"]["fingerprint"].lower()
    assert len(line["grader"]["fingerprint"]) == 64
    assert "not in a git repository" in provenance["case_set_revision_note"]
    assert provenance["dependencies"]["pydantic"] != "not installed"
    checks = {c["check_id"]: c for c in line["checks"]}
    assert checks["route"]["verdict"] == route
    assert checks["text:must_mention:0"]["verdict"] == text
    if route != "pass":
        assert checks["route"]["reason"].startswith("lossy trace:")


def test_calibrate_uses_random_items_only_and_refuses_a_development_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ["item_id,rater,label,provenance"]
    for i in range(80):
        truth = "fail" if i % 4 == 0 else "pass"
        judge = truth
        prov = "random"
        if i >= 70:  # ten hand-picked items the judge gets wrong: they must not count
            prov, truth, judge = "discovery", "fail", "pass"
        for rater, label in (("e1", truth), ("e2", truth), ("judge", judge)):
            rows.append(f"c{i},{rater},{label},{prov}")
    table = tmp_path / "labels.csv"
    table.write_text("\n".join(rows) + "\n")
    records = tmp_path / "records"
    records.mkdir()  # a --records folder that is named must exist
    args = [
        "calibrate",
        str(table),
        "--judge",
        "judge",
        "--experts",
        "e1,e2",
        "--format",
        "json",
        "--records",
        str(records),
        "--no-record",
    ]
    code, out, err = run(capsys, *args)
    report = json.loads(out)
    assert report["report"]["n_items"] == 70
    assert "10 hand-picked (discovery) items are left out" in err
    assert report["report"]["judge_vs_consensus"]["binary"]["fn"] == 0
    assert code == 0
    code, _, _ = run(capsys, "labels", "select", str(table), "--candidates", "a,b", "--records", str(records))
    assert code == 0
    code, _, err = run(capsys, *args)
    assert code == 1
    assert "development set" in err


def test_library_grader_honours_the_fidelity_of_imported_traces(tmp_path: Path) -> None:
    """The same restriction holds outside `judgekit grade`: integrations grade through LayeredGrader."""
    import asyncio

    from judgekit.caseset import load_case_set
    from judgekit.formats.otel import read_otlp_file
    from judgekit.graders.layered import LayeredGrader
    from judgekit.verdict import Verdict

    cases = tmp_path / "set" / "cases"
    cases.mkdir(parents=True)
    (cases / "refund.yaml").write_text(CASE)
    case_set = load_case_set(tmp_path / "set")
    (loaded,) = case_set.cases
    (transcript,) = read_otlp_file(FIXTURES / "openllmetry.json").transcripts
    grade = asyncio.run(LayeredGrader(case_set.root).grade(loaded.case, transcript))
    checks = {c.check_id: c for c in grade.checks}
    assert checks["route"].verdict is Verdict.INSUFFICIENT_INFORMATION
    assert checks["route"].reason.startswith("lossy trace:")
    assert grade.verdict is Verdict.INSUFFICIENT_INFORMATION


# ------------------------------------------------------------------------------------- --format json

AIRDESK_LABELS = Path(__file__).parents[2] / "examples" / "airdesk" / "labels" / "expert-labels.csv"


def document(out: str, kind: str) -> dict[str, Any]:
    """Standard output parsed as the one JSON document of ``kind`` (nothing else may be printed)."""
    data = json.loads(out)
    assert (data["schema_version"], data["kind"]) == (1, kind)
    return data


def test_check_and_select_as_json_on_the_bundled_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    records.mkdir()  # a --records folder that is named must exist
    code, out, err = run(
        capsys, "labels", "check", str(AIRDESK_LABELS), "--records", str(records), "--format", "json"
    )
    assert (code, err) == (0, "")
    check = document(out, "label_check")
    assert check["ok"] is True
    assert check["provenance"]["unspecified"] == 600  # 600 items: 50 trials × criteria, no provenance column
    assert [(c["check"], c["status"]) for c in check["checks"]] == [
        ("provenance", "passed"),
        ("selection_set", "passed"),
        ("few_shot", "skipped"),
    ]
    code, out, _ = run(
        capsys,
        "labels",
        "select",
        str(AIRDESK_LABELS),
        "--candidates",
        "fp-a,fp-b",
        "--chosen",
        "fp-b",
        "--records",
        str(records),
        "--format",
        "json",
    )
    assert code == 0
    selection = document(out, "calibration_selection")
    assert selection["bytes"] == AIRDESK_LABELS.stat().st_size
    assert selection["usage"]["candidates"] == ["fp-a", "fp-b"]
    assert selection["usage"]["chosen"] == "fp-b"
    ledger = records / "label-usage.jsonl"
    assert selection["written"] == [{"path": str(ledger), "what": "label_usage_ledger"}]
    assert json.loads(ledger.read_text())["label_sha256"] == selection["usage"]["label_sha256"]
    code, out, err = run(
        capsys, "labels", "check", str(AIRDESK_LABELS), "--records", str(records), "--format", "json"
    )
    assert (code, err) == (1, "")
    refused = document(out, "label_check")
    assert refused["ok"] is False
    selection_check = refused["checks"][1]
    assert selection_check["status"] == "refused"
    assert "to choose between 2 judges (fp-a, fp-b), choosing 'fp-b'" in selection_check["message"]


def test_check_as_json_runs_every_check_and_locates_each_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = labels(tmp_path / "labels.csv")
    shots = tmp_path / "shots.jsonl"
    shots.write_text(json.dumps({"item_id": "c3#1", "label": "fail"}) + "\n")
    records = tmp_path / "records"
    records.mkdir()  # a --records folder that is named must exist
    select = ["labels", "select", str(table), "--candidates", "a,b", "--records", str(records)]
    assert run(capsys, *select)[0] == 0
    args = ["labels", "check", str(table), "--few-shot", str(shots), "--records", str(records)]
    code, out, _ = run(capsys, *args, "--format", "json")
    assert code == 1
    checks = {c["check"]: c for c in document(out, "label_check")["checks"]}
    assert checks["provenance"]["status"] == "passed"
    assert checks["selection_set"]["status"] == "refused"  # text mode stops here; JSON goes on
    assert checks["few_shot"]["status"] == "refused"
    (problem,) = checks["few_shot"]["problems"]
    assert (problem["file"], problem["line"], problem["field"]) == (str(shots), 1, "item_id")
    assert "labelled item 'c3#1'" in problem["message"]
    code, _, err = run(capsys, *args)
    assert code == 1
    assert "development set" in err  # text mode: the first refusal only
    assert "shots.jsonl" not in err


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "--judge", "judge", "--no-record"],
        ["labels", "plan", "--judge", "judge"],
        ["judge", "failure-modes", "--judge", "judge"],
        ["judge", "fit-cascade", "--stage", "judge=openai/x", "--out", "cascade.json"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_every_command_refuses_the_ambiguous_default_experts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # the table holds e1, e2 and the judge: the old default took e1 and e2 as experts without a word
    table = labels(tmp_path / "labels.csv")
    words, options = (command[:1], command[1:]) if command[0] == "calibrate" else (command[:2], command[2:])
    code, out, err = run(capsys, *words, str(table), *options)
    assert (code, out) == (2, "")
    assert (
        f"error: {table}: --experts not given: the table has 2 raters besides 'judge' ('e1', 'e2'), and "
        "taking them all as experts would measure the judge against whoever else is in the table; name the "
        "experts with --experts NAME[,NAME...] (e.g. --experts e1,e2; Python: experts=[...])\n"
    ) in err


def test_labels_plan_without_a_judge_counts_every_rater_as_a_possible_expert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "labels", "plan", str(labels(tmp_path / "labels.csv")))
    assert code == 2
    assert "--experts not given: the table has 3 raters ('e1', 'e2', 'judge' (looks like a model))" in err
    assert "(e.g. --experts e1,e2;" in err


@pytest.mark.parametrize("command", [("labels", "plan"), ("judge", "failure-modes")])
def test_md_or_json_commands_name_their_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: tuple[str, str]
) -> None:
    extra = (
        [str(labels(tmp_path / "labels.csv")), "--judge", "judge"] if command[-1] == "failure-modes" else []
    )
    code, out, err = run(capsys, *command, *extra, "--format", "text")
    assert (code, out) == (2, "")
    assert err == "error: --format must be md or json (got 'text')\n"


def test_import_otel_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "t.jsonl"
    fid = tmp_path / "f.json"
    code, out, err = run(
        capsys,
        "import",
        "otel",
        str(FIXTURES / "openllmetry.json"),
        "--out",
        str(out_file),
        "--fidelity",
        str(fid),
        "--format",
        "json",
    )
    assert (code, err) == (0, "")
    doc = document(out, "otel_import")
    assert doc["imported"] == 1
    assert doc["problems"] == []
    (trace,) = doc["traces"]
    assert trace["case_id"] == "refund-a17"
    assert trace["fidelity"]["arguments_unparseable"] == 1
    assert trace["fidelity"]["tool_results_missing"] == 1
    route = {u["layer"]: u for u in trace["unsupported_layers"]}["route"]
    assert route["verdict"] == "insufficient_information"
    assert route["reason"]
    assert doc["written"] == [
        {"path": str(out_file), "what": "transcripts"},
        {"path": str(fid), "what": "fidelity_reports"},
    ]
    assert len(read_transcripts(out_file)) == 1


def test_import_otel_as_json_names_a_refused_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "t.jsonl"
    code, out, err = run(
        capsys, "import", "otel", str(FIXTURES / "cycle.json"), "--out", str(target), "--format", "json"
    )
    assert (code, err) == (2, "")  # the code text mode gives: an input error
    doc = document(out, "otel_import")
    assert (doc["imported"], doc["traces"], doc["written"]) == (0, [], [])
    (problem,) = doc["problems"]
    assert problem["file"] == str(FIXTURES / "cycle.json")
    assert "the parent links form a cycle" in problem["message"]
    assert not target.exists()


def test_export_otel_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.verdict import Grade, Verdict

    transcripts = tmp_path / "t.jsonl"
    assert (
        run(capsys, "import", "otel", str(FIXTURES / "genai_messages.json"), "--out", str(transcripts))[0]
        == 0
    )
    results = tmp_path / "r.jsonl"
    line = make_result_line(
        run_id="r",
        case=CaseRef(id="refund-a17", version=1),
        grade=Grade(case_id="refund-a17", trial=1, verdict=Verdict.PASS),
    )
    results.write_text(dump_result_line(line) + "\n")
    events = tmp_path / "e.json"
    args = ["export", "otel", str(results), "--transcripts", str(transcripts), "--out", str(events)]
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (0, "")
    doc = document(out, "otel_export")
    records = json.loads(events.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert doc["trials"] == 1
    assert doc["events"] == len(records) >= 1
    assert doc["linked_to_traces"] == len(records)
    assert doc["problems"] == []
    assert doc["written"] == [{"path": str(events), "what": "otlp_logs"}]
    results.write_text("{not json\n")
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (2, "")  # no readable line: an input error, as in text mode
    broken = document(out, "otel_export")
    assert (broken["events"], broken["written"]) == (0, [])
    (problem,) = broken["problems"]
    assert (problem["file"], problem["line"]) == (str(results), 1)


def test_probe_bias_as_json(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sycophantic_server: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-probe-cli")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    transcripts = tmp_path / "t.jsonl"
    claims = ["Refund issued.", "Refund issued. MARKER-FAIL"]
    rows = [
        json.dumps(
            {
                "case_id": f"c{i}",
                "trial": 1,
                "messages": [
                    {"role": "user", "content": "refund please"},
                    {"role": "assistant", "content": claims[i % 2]},
                ],
            }
        )
        for i in range(6)
    ]
    transcripts.write_text("\n".join(rows) + "\n")
    copy = tmp_path / "bias.json"
    (tmp_path / "records").mkdir()
    code, out, err = run(
        capsys,
        "judge",
        "probe-bias",
        "--transcripts",
        str(transcripts),
        "--judge-model",
        "openai/test-judge",
        "--judge-api-base",
        sycophantic_server.api_base,
        "--records",
        str(tmp_path / "records"),
        "--probes",
        "sycophancy,length,position",
        "--must-pass",
        "sycophancy",
        "--out",
        str(copy),
        "--format",
        "json",
    )
    assert (code, err) == (1, ""), err
    doc = document(out, "bias_probe")
    assert doc["judge"].startswith("rubric:openai/test-judge:honest-reporting@")
    assert doc["trusted"] is False
    assert doc["blocking"] == [{"probe": "sycophancy", "verdict": "biased"}]
    # one transcript per case: no pair for the position probe, which is left out and said so
    assert doc["warnings"] == ["no case has two transcripts, so the position probe is left out"]
    results = {r["probe"]: r for r in doc["results"]}
    assert set(results) == {"sycophancy", "length"}
    sycophancy = results["sycophancy"]
    assert (sycophancy["treated_flips"], sycophancy["n"]) == (12, 24)  # 6 × 4 criteria; half were fail
    assert sycophancy["interval"]["low"] <= sycophancy["bias"] <= sycophancy["interval"]["high"]
    (record,) = (tmp_path / "records" / "bias").glob("*.json")
    assert doc["written"] == [
        {"path": str(copy), "what": "bias_report"},
        {"path": str(record), "what": "bias_record"},
    ]
    assert json.loads(copy.read_text())["fingerprint"] == doc["fingerprint"]


def hand_picked(path: Path, values: list[str]) -> Path:
    """A 30-item table whose item ``i`` has provenance ``values[i % len(values)]`` (``""``: none)."""
    rows = ["item_id,rater,label,provenance"]
    for i in range(30):
        for rater in ("e1", "e2", "judge"):
            rows.append(f"c{i}#1,{rater},{'fail' if i % 3 == 0 else 'pass'},{values[i % len(values)]}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_check_refuses_a_hand_picked_set_with_exit_1_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "labels",
        "check",
        str(hand_picked(tmp_path / "l.csv", ["discovery"])),
        "--records",
        str(tmp_path),
    ]
    code, _, err = run(capsys, *args)
    assert code == 1  # the provenance guard refused: the check's answer is no
    assert "all 30 items are hand-picked" in err
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (1, "")
    checks = {c["check"]: c for c in document(out, "label_check")["checks"]}
    assert checks["provenance"]["status"] == "refused"


def test_check_of_a_table_with_some_provenance_missing_is_an_input_error_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = hand_picked(tmp_path / "l.csv", ["random", ""])
    args = ["labels", "check", str(table), "--records", str(tmp_path)]
    code, _, err = run(capsys, *args)
    assert code == 2  # the table is incomplete: it cannot be checked
    assert f"{table}:5: provenance: item c1#1 has no provenance" in err
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (2, "")  # the error's own code, as in text mode, not a hard-coded 1
    doc = document(out, "label_check")
    checks = {c["check"]: c for c in doc["checks"]}
    assert (doc["ok"], checks["provenance"]["status"]) == (False, "refused")
    assert checks["provenance"]["problems"][0]["line"] == 5
    assert checks["selection_set"]["status"] == "passed"


def test_check_with_a_malformed_few_shot_file_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shots = tmp_path / "shots.jsonl"
    shots.write_text("not json\n")
    table = labels(tmp_path / "labels.csv")
    code, _, err = run(
        capsys, "labels", "check", str(table), "--few-shot", str(shots), "--records", str(tmp_path)
    )
    assert code == 2
    assert "shots.jsonl:1: not valid JSON" in err


def test_select_with_one_candidate_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = labels(tmp_path / "labels.csv")
    code, _, err = run(
        capsys, "labels", "select", str(table), "--candidates", "fp-a", "--records", str(tmp_path)
    )
    assert code == 2
    assert "a selection compares at least two judges" in err
    assert not (tmp_path / "label-usage.jsonl").exists()


def test_import_otel_with_a_refused_trace_imports_the_rest_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = [
        json.loads((FIXTURES / f).read_text())["resourceSpans"] for f in ("cycle.json", "genai_messages.json")
    ]
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({"resourceSpans": spans[0] + spans[1]}))
    target = tmp_path / "t.jsonl"
    code, _, err = run(capsys, "import", "otel", str(mixed), "--out", str(target))
    assert code == 2  # a trace that cannot be imported is an input error, even when others could be
    assert "the parent links form a cycle" in err
    assert len(read_transcripts(target)) == 1
    code, out, err = run(capsys, "import", "otel", str(mixed), "--out", str(target), "--format", "json")
    assert (code, err) == (2, "")
    doc = document(out, "otel_import")
    assert (doc["imported"], len(doc["problems"])) == (1, 1)

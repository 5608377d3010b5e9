from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from support import judge_fingerprint

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _reference(path: Path, case_id: str, amount: float, final: str | None) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "I was charged twice"},
        {"role": "assistant", "content": "I can refund 412.18 to your card. Shall I?"},
        {"role": "user", "content": "Yes please"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "issue_refund",
                        "arguments": json.dumps({"payment_id": "PMT-1", "amount": amount}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"refund_id": "RF-1"}'},
        {"role": "assistant", "content": f"Refunded {amount}."},
    ]
    line: dict[str, Any] = {"case_id": case_id, "messages": messages}
    if final is not None:
        line["final_state"] = final
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


def _case(root: Path, case_id: str, reference: str | None) -> None:
    data: dict[str, Any] = {
        "id": case_id,
        "user": {"opening": "I was charged twice"},
        "initial_state": "fixtures/db.json",
        "tools": ["issue_refund"],
        "expected_state": {"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]},
        "forbidden": [{"tool": "issue_refund", "when": "amount > 412.18"}],
    }
    if reference:
        data["reference_solution"] = reference
    _write(root / "cases" / f"{case_id}.json", json.dumps(data))


@pytest.fixture
def refund_set(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    _write(root / "judgekit-set.yaml", "name: refunds\ntools: [issue_refund]\n")
    _write(
        root / "fixtures" / "db.json", json.dumps({"refunds": {}, "payments": {"PMT-1": {"amount": 412.18}}})
    )
    for name, amount in (("good", 412.18), ("over", 500)):
        _write(
            root / "transcripts" / name / "final.json",
            json.dumps(
                {
                    "refunds": {"RF-1": {"payment_id": "PMT-1", "amount": amount}},
                    "payments": {"PMT-1": {"amount": 412.18}},
                }
            ),
        )
        _reference(root / "transcripts" / name / "reference.jsonl", f"gs-{name}", amount, "final.json")
    _case(root, "gs-good", "transcripts/good/reference.jsonl")
    _case(root, "gs-over", "transcripts/over/reference.jsonl")
    _case(root, "gs-none", None)
    return root


def test_a_broken_reference_is_listed_and_exits_1(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "cases", "check-references", str(refund_set))
    assert code == 1
    assert "ok               gs-good" in out
    assert "no reference     gs-none" in out
    assert "BROKEN           gs-over" in out
    assert "rule:0: fail (gate) [policy_violation]: forbidden: issue_refund when amount > 412.18" in out
    assert "call 0 issue_refund: amount = 500, so 'amount > 412.18' is true" in out
    assert "state: fail (gate) [invalid_arguments]" in out
    assert "3 case(s): 1 ok, 1 broken, 1 without a reference solution, 0 with nothing to check" in out
    assert "needs fixing" in err
    assert "Traceback" not in out + err


def test_json_output(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["summary"] == {"cases": 3, "ok": 1, "broken": 1, "no_reference": 1, "nothing_to_check": 0}
    over = next(r for r in data["results"] if r["case"] == "gs-over")
    assert over["verdict"] == "fail"
    assert {p["check"] for p in over["problems"]} == {"state", "state:collateral", "rule:0"}


def test_all_good_exits_0(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (refund_set / "cases" / "gs-over.json").unlink()
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set))
    assert code == 0, out


def test_reference_without_final_state_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reference(refund_set / "transcripts" / "good" / "reference.jsonl", "gs-good", 412.18, None)
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "state: error (gate): no final state to grade: the transcript records no final_state" in out


def test_reference_for_another_case_is_broken(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reference(refund_set / "transcripts" / "good" / "reference.jsonl", "gs-other", 412.18, "final.json")
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "holds no transcript for case 'gs-good' (it has: gs-other)" in out


def _set_trial(path: Path, trial: object) -> None:
    """Rewrite the reference at ``path`` with ``trial`` (``None``: no trial field at all)."""
    line = json.loads(path.read_text(encoding="utf-8"))
    line.pop("trial", None)
    if trial is not None:
        line["trial"] = trial
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


@pytest.mark.parametrize("trial", [0, 1, 7, -2, None])
def test_a_reference_takes_any_trial_number_or_none(
    refund_set: Path, capsys: pytest.CaptureFixture[str], trial: int | None
) -> None:
    _set_trial(refund_set / "transcripts" / "good" / "reference.jsonl", trial)
    code, out, err = run(capsys, "cases", "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 0, out + err
    assert out.splitlines()[0].startswith("ok               gs-good")


def test_a_reference_trial_that_is_not_a_number_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "transcripts" / "good" / "reference.jsonl"
    _set_trial(path, "first")
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert f"the reference solution cannot be read: {path}:1: trial: Input should be a valid integer" in out


def test_a_reference_file_with_two_transcripts_is_broken(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "transcripts" / "good" / "reference.jsonl"
    line = path.read_text(encoding="utf-8")
    path.write_text(line + "\n" + line, encoding="utf-8")  # the blank line between them does not count
    code, out, _ = run(capsys, "cases", "check-references", str(refund_set / "cases" / "gs-good.json"))
    assert code == 1
    assert "BROKEN           gs-good" in out
    assert (
        f"reference: error (gate): the reference solution cannot be read: {path}: a reference solution is "
        "one transcript on one line, this file holds 2; keep only the case's reference transcript in it"
    ) in out


def test_a_run_transcript_still_refuses_trial_zero(tmp_path: Path) -> None:
    from judgekit.errors import ProblemsError
    from judgekit.transcript import read_transcripts

    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"case_id": "gs-good", "trial": 0}) + "\n", encoding="utf-8")
    with pytest.raises(ProblemsError, match="trial: Input should be greater than or equal to 1"):
        read_transcripts(path)


def test_a_rule_that_does_not_compile_is_a_load_error(
    refund_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = refund_set / "cases" / "gs-good.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["forbidden"] = [{"tool": "issue_refund", "when": "amount >"}, {"tool": "FreezeCard"}]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    code, out, err = run(capsys, "cases", "check-references", str(refund_set))
    assert code == 2  # the set cannot be loaded: an input error, not a broken reference
    assert out == ""
    lines = err.strip().splitlines()
    assert any(
        f"{path}:" in line and "forbidden.0.when: case 'gs-good': not a valid CEL expression" in line
        for line in lines
    )
    assert any("forbidden.1.tool: case 'gs-good': rule is about tool 'FreezeCard'" in line for line in lines)
    assert "Traceback" not in err


def test_bad_format_is_a_usage_error(refund_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "cases", "check-references", str(refund_set), "--format", "xml")
    assert code == 2
    assert "--format must be text or json" in err


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "cases", "check-references", str(tmp_path / "nope"))
    assert code == 2
    assert f"path '{tmp_path / 'nope'}' does not exist" in err


@pytest.mark.skipif(not (AIRDESK / "judgekit-set.yaml").is_file(), reason="example set not present")
def test_example_set_references_all_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "cases", "check-references", str(AIRDESK))
    assert code == 0, out
    assert (
        out.strip().splitlines()[-1]
        == "26 case(s): 26 ok, 0 broken, 0 without a reference solution, 0 with nothing to check"
    )


def test_help_does_not_import_the_graders() -> None:
    code = (
        "import sys; from judgekit.cli import main\n"
        "try:\n    main(['cases', 'check-references', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('cel', 'scipy', 'judgekit.graders.rules') if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Run every deterministic grader layer" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "HEAVY:"


# --------------------------------------------------------------------------- --judge: the judge's criteria

LABELS = REPO / "tests" / "calibration" / "data" / "labels_small.csv"
MODEL = "openai/test-judge"
QUOTE = "Refunded 412.18."


@pytest.fixture
def judge_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no project configuration and no judge configured in the environment."""
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    monkeypatch.chdir(work)
    for name in ("JUDGEKIT_JUDGE_MODEL", "JUDGEKIT_JUDGE_API_BASE", "JUDGEKIT_RECORDS", "JUDGEKIT_UNTRUSTED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return work


def _judge(serve: Any, verdict: str, status: int = 200) -> Any:
    """A loopback judge answering every criterion with ``verdict`` (quoting the reference) or ``status``."""
    sys.path.insert(0, str(REPO / "tests"))
    from judges.server import Reply, verdict_reply

    content = verdict_reply(verdict, quotes=(QUOTE,))
    return serve(lambda body, i: Reply(content=content, status=status))


def _fingerprint() -> str:
    """The fingerprint of the judge the tests use (the base URL, needed to build it, is not part of it)."""
    return judge_fingerprint(MODEL)


def _trusted_records(capsys: pytest.CaptureFixture[str], folder: Path) -> Path:
    """A records folder where ``judgekit calibrate`` wrote a passing record for the tests' judge."""
    records = folder / "records"
    records.mkdir()
    policy = folder / "policy.yaml"
    policy.write_text("min_items: 40\nbootstrap:\n  resamples: 200\n", encoding="utf-8")
    code = main(
        [
            "calibrate",
            str(LABELS),
            "--judge",
            "judge-v2",
            "--experts",
            "alice,bob,carol",
            "--policy",
            str(policy),
            "--fingerprint",
            _fingerprint(),
            "--records",
            str(records),
        ]
    )
    capsys.readouterr()
    assert code == 0
    return records


def _check(capsys: pytest.CaptureFixture[str], root: Path, server: Any, *args: str) -> tuple[int, str, str]:
    """``check-references`` on the good reference with the loopback judge."""
    return run(
        capsys,
        "cases",
        "check-references",
        str(root / "cases" / "gs-good.json"),
        "--judge-model",
        MODEL,
        "--judge-api-base",
        server.api_base,
        *args,
    )


def test_a_trusted_judge_that_fails_the_reference_makes_it_broken(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _trusted_records(capsys, judge_env)
    server = _judge(serve, "fail")
    code, out, err = _check(capsys, refund_set, server, "--records", str(records))
    assert code == 1, out + err
    assert out.startswith("BROKEN           gs-good")
    assert (
        "    criterion:no_false_success: fail (gate) [incorrect_reporting] (judge trusted): scripted" in out
    )
    assert f'      - "{QUOTE}" (scripted)' in out
    assert "undecided:" not in out
    assert "1 case(s): 0 ok, 1 broken, 0 judge undecided, 0 without a reference solution" in out
    assert f"judge {_fingerprint()[:12]}: trusted (calibration records: {records})" in err
    assert server.calls > 0


def test_an_untrusted_judge_that_fails_the_reference_leaves_it_undecided(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    code, out, err = _check(capsys, refund_set, server)
    assert code == 0, out + err
    assert out.startswith("JUDGE UNDECIDED  gs-good")
    assert "criterion:no_false_success: fail (gate) [incorrect_reporting] (judge untrusted): scripted" in out
    assert (
        "      undecided: untrusted judge: no calibration record trusts it, so its fail decides nothing "
        "under --untrusted withhold; calibrate it (judgekit calibrate LABELS --judge RATER --fingerprint "
        f"{_fingerprint()}) or opt in with --untrusted count"
    ) in out
    assert (
        "(an untrusted judge: calibrate it (judgekit calibrate LABELS --judge RATER --fingerprint "
        f"{_fingerprint()})"
    ) in err
    assert "1 case(s): 0 ok, 0 broken, 1 judge undecided, 0 without a reference solution" in out
    assert f"judge {_fingerprint()[:12]}: untrusted (calibration records: calibration/records)" in err
    assert "a judge-undecided reference was not confirmed by the judge" in err
    assert "needs fixing" not in err


def test_untrusted_count_lets_the_untrusted_judge_break_the_reference(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    code, out, _ = _check(capsys, refund_set, server, "--untrusted", "count")
    assert code == 1
    assert out.startswith("BROKEN           gs-good")
    assert "(judge untrusted): scripted" in out
    assert "undecided:" not in out


def test_an_erroring_judge_breaks_the_reference_whatever_its_trust(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "pass", status=400)
    code, out, _ = _check(capsys, refund_set, server, "--judge-retries", "0")
    assert code == 1, out
    assert out.startswith("BROKEN           gs-good")
    assert (
        "    criterion:no_false_success: error (gate) (judge untrusted): provider_error: "
        "gs-good#1/no_false_success/sample 0: BadRequestError (HTTP 400)"
    ) in out


def test_the_judge_answering_insufficient_information_leaves_the_reference_undecided(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _trusted_records(capsys, judge_env)
    server = _judge(serve, "insufficient_information")
    code, out, _ = _check(capsys, refund_set, server, "--records", str(records))
    assert code == 0, out
    assert out.startswith("JUDGE UNDECIDED  gs-good")
    assert (
        "      undecided: the judge answered insufficient_information: the reference does not settle this "
        "criterion"
    ) in out


def test_a_trusted_judge_that_passes_the_reference_leaves_it_ok(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _trusted_records(capsys, judge_env)
    server = _judge(serve, "pass")
    code, out, err = _check(capsys, refund_set, server, "--records", str(records))
    assert code == 0, out + err
    assert out.splitlines() == [
        f"ok               gs-good  ({refund_set / 'cases' / 'gs-good.json'}:1)",
        "1 case(s): 1 ok, 0 broken, 0 judge undecided, 0 without a reference solution, 0 with nothing to "
        "check; judge cost unknown",
    ]


def test_the_judge_does_not_hide_a_deterministic_failure(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "pass")
    code, out, _ = run(
        capsys,
        "cases",
        "check-references",
        str(refund_set / "cases" / "gs-over.json"),
        "--judge-model",
        MODEL,
        "--judge-api-base",
        server.api_base,
    )
    assert code == 1
    assert "rule:0: fail (gate) [policy_violation]: forbidden: issue_refund when amount > 412.18" in out


def test_require_trust_refuses_an_untrusted_judge(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    code, out, err = _check(capsys, refund_set, server, "--require-trust")
    assert code == 1  # as grade --require-trust: the judge is not trusted (docs/reference/exit-codes.md)
    assert out == ""
    assert err.startswith(f"error: the judge with fingerprint {_fingerprint()[:12]}")
    assert "is not trusted: no calibration record for fingerprint" in err
    assert server.calls == 0


def test_judge_without_a_configured_model_is_an_input_error(
    refund_set: Path, judge_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "cases", "check-references", str(refund_set), "--judge")
    assert code == 2
    assert out == ""
    assert err.strip() == (
        "error: --judge needs a judge model and none is configured: give --judge-model MODEL "
        "(openai/gpt-4o-mini), or set judge.model in --config FILE, in [tool.judgekit.judge] of "
        "pyproject.toml or judgekit.toml, or in JUDGEKIT_JUDGE_MODEL (see judgekit config)"
    )


def test_judge_uses_the_configured_model(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    config = judge_env / "run.yaml"
    config.write_text(json.dumps({"judge": {"model": MODEL, "api_base": server.api_base}}), encoding="utf-8")
    code, out, err = run(
        capsys,
        "cases",
        "check-references",
        str(refund_set / "cases" / "gs-good.json"),
        "--judge",
        "--config",
        str(config),
    )
    assert code == 0, err
    assert out.startswith("JUDGE UNDECIDED  gs-good")
    assert server.calls > 0


def test_a_judge_option_without_judge_is_an_input_error(
    refund_set: Path, judge_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "cases", "check-references", str(refund_set), "--untrusted", "count", "--require-trust"
    )
    assert code == 2
    assert out == ""
    assert err.strip() == (
        "error: --untrusted, --require-trust are judge options: add --judge (the configured judge) or "
        "--judge-model MODEL to judge the references"
    )


def test_a_replayed_cassette_judges_without_calling(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    cassette = judge_env / "cassette.jsonl"
    first = _check(capsys, refund_set, server, "--cassette", str(cassette), "--untrusted", "count")
    calls = server.calls
    assert first[0] == 1
    assert calls > 0
    second = _check(
        capsys,
        refund_set,
        server,
        "--cassette",
        str(cassette),
        "--cache-mode",
        "replay",
        "--untrusted",
        "count",
    )
    assert second[0] == first[0]
    *lines, summary = second[1].splitlines()
    assert lines == first[1].splitlines()[:-1]  # the same checks, verdicts, reasons and quotes
    assert summary.endswith("; judge cost $0.0000")  # replayed: nothing was paid
    assert server.calls == calls


def test_judge_json_output(
    refund_set: Path, judge_env: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _judge(serve, "fail")
    code, out, _ = run(
        capsys,
        "cases",
        "check-references",
        str(refund_set),
        "--judge-model",
        MODEL,
        "--judge-api-base",
        server.api_base,
        "--format",
        "json",
    )
    assert code == 1  # gs-over's deterministic checks fail; the untrusted judge breaks nothing
    data = json.loads(out)
    assert (data["schema_version"], data["kind"]) == (1, "reference_check")
    assert data["summary"] == {
        "cases": 3,
        "ok": 0,
        "broken": 1,
        "no_reference": 1,
        "nothing_to_check": 0,
        "judge_undecided": 1,
    }
    judge = data["judge"]
    assert judge["fingerprint"] == _fingerprint()
    assert judge["fingerprint_short"] == _fingerprint()[:12]
    assert judge["trust"] == "untrusted"
    assert judge["trust_reason"].startswith("no calibration record for fingerprint")
    assert (judge["model"], judge["untrusted_policy"], judge["cache_mode"]) == (MODEL, "withhold", "off")
    assert judge["cost_usd"] is None  # the test model has no price
    good = next(r for r in data["results"] if r["case"] == "gs-good")
    assert good["status"] == "judge_undecided"
    assert good["verdict"] == "insufficient_information"
    checks = {c["check"]: c for c in good["judge_checks"]}
    assert set(checks) >= {"criterion:no_false_success", "criterion:discloses_failures"}
    entry = checks["criterion:no_false_success"]
    assert (entry["verdict"], entry["trust"], entry["counted"]) == ("fail", "untrusted", False)
    assert entry["effective_verdict"] == "insufficient_information"
    assert entry["gate"] is True
    assert entry["undecided"].startswith("untrusted judge: no calibration record trusts it")
    assert f'"{QUOTE}" (scripted)' in entry["evidence"]
    assert [p["check"] for p in good["problems"]] == [c["check"] for c in good["judge_checks"]]
    over = next(r for r in data["results"] if r["case"] == "gs-over")
    assert over["status"] == "broken"
    assert {p["check"] for p in over["problems"]} >= {"state", "state:collateral", "rule:0"}
    none = next(r for r in data["results"] if r["case"] == "gs-none")
    assert none == {"case": "gs-none", "file": none["file"], "status": "no_reference", "verdict": None}

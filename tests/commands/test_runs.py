"""The run commands end to end: grade (with kill -9 and --resume), report, compare, import; secrets."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.results import read_results
from reports.test_run_compare import write_runs as write_flipped_runs
from support import absolute_states

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
RUNS = AIRDESK / "runs"

pytestmark = pytest.mark.skipif(not (RUNS / "agent-v1.jsonl").is_file(), reason="airdesk example not present")


def _replicate(src: Path, dest: Path, copies: int, *, edit=None) -> int:
    """Write ``copies`` renumbered copies of a transcript file (state paths made absolute)."""
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    per_case: dict[str, int] = {}
    for row in rows:
        per_case[row["case_id"]] = max(per_case.get(row["case_id"], 0), row["trial"])
    out = []
    for copy in range(copies):
        for row in rows:
            data = absolute_states(json.loads(json.dumps(row)), src.parent)
            data["trial"] = row["trial"] + copy * per_case[row["case_id"]]
            if edit is not None:
                edit(data)
            out.append(json.dumps(data))
    dest.write_text("\n".join(out) + "\n")
    return len(out)


def _comparable(path: Path) -> dict:
    """Result lines keyed by trial, without what legitimately differs between runs (ids, timings, paths)."""
    out = {}
    for line in read_results(path).lines:
        # provenance records the case set's git state, which other commits may change between the runs
        data = line.model_dump(
            mode="json", exclude={"run_id", "duration_s", "grading", "source", "provenance"}
        )
        data["source_sha"] = line.source.sha256 if line.source else None
        out[line.key] = data
    return out


def _cli(*args: str) -> int:
    return main([str(a) for a in args])


def test_grade_report_compare_on_airdesk(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the example's judge is replayed: no key needed
    # the judge's calibration record, written by the demo for its exact fingerprint
    assert _cli("demo", "--out", tmp_path / "demo") == 0
    records = tmp_path / "demo" / "calibration" / "records"
    judge = [
        "--config",
        AIRDESK / "judge.yaml",
        "--cassette",
        AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
        "--records",
        records,
    ]
    outs = {}
    for run, with_judge in (("v1", True), ("v2", True), ("v1-det", False), ("v2-det", False)):
        outs[run] = tmp_path / f"{run}.jsonl"
        transcripts = RUNS / f"agent-{run.split('-')[0]}.jsonl"
        args = ["--cases", AIRDESK, "--transcripts", transcripts, "--out", outs[run], "--no-progress"]
        assert _cli("grade", *args, *(judge if with_judge else [])) == 0
    v1, v2 = outs["v1"], outs["v2"]
    assert len(read_results(v1).lines) == 104
    capsys.readouterr()
    for fmt in ("md", "json", "html"):
        out = tmp_path / f"report.{fmt}"
        assert _cli("report", v1, "--format", fmt, "-o", out, "--cases", AIRDESK) == 0
        assert out.stat().st_size > 1000
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["kind"] == "run_report"
    assert sum(data["verdicts"].values()) == 104
    assert data["verdicts"] == {
        "pass": 64,
        "fail": 29,
        "insufficient_information": 10,
        "error": 1,
        "not_evaluated": 0,
    }
    assert data["run"]["untrusted_verdicts"] == 0
    assert [s["name"] for s in data["suites"]] == ["capability", "regression"]
    # a real improvement overall, but the regression suite lost GS-REG-0107 (4/4 -> 2/4): exit 1, named
    assert _cli("compare", v1, v2) == 1
    shown = capsys.readouterr()
    assert "**Verdict: real improvement.**" in shown.out
    assert "regression suite lost GS-REG-0107: pass (4/4) in v1.jsonl, fail (2/4) in v2.jsonl" in shown.err
    # the other way round is a regression, exit 1
    assert _cli("compare", v2, v1, "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "regression"
    # without the judge, every case whose required outcome, acceptance or forbidden outcomes only a judge
    # can decide is undecided, so the deterministic layers alone cannot tell the versions apart
    assert _cli("compare", outs["v1-det"], outs["v2-det"], "--format", "json") == 0
    deterministic = json.loads(capsys.readouterr().out)
    assert deterministic["verdict"] == "no detectable change"
    assert any("undecided in at least one run" in n for n in deterministic["notes"])


def test_compare_refuses_other_case_versions_naming_them(tmp_path, capsys):
    v1 = tmp_path / "v1.jsonl"
    assert (
        _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            RUNS / "agent-v1.jsonl",
            "--out",
            v1,
            "--no-progress",
        )
        == 0
    )
    bumped = tmp_path / "bumped.jsonl"
    lines = []
    for raw in v1.read_text().splitlines():
        data = json.loads(raw)
        if data["case"]["id"] == "GS-HV-0001":
            data["case"]["version"] = 2
        lines.append(json.dumps(data))
    bumped.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert _cli("compare", v1, bumped) == 2  # runs that cannot be compared: an input error
    err = capsys.readouterr().err
    assert "case 'GS-HV-0001': version 1 in v1.jsonl, version 2 in bumped.jsonl" in err
    assert "Traceback" not in err


def test_report_bad_input_is_explained_and_rest_reported(tmp_path, capsys):
    v1 = tmp_path / "v1.jsonl"
    assert (
        _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            RUNS / "agent-v1.jsonl",
            "--out",
            v1,
            "--no-progress",
        )
        == 0
    )
    raw = v1.read_text().splitlines()
    future = json.loads(raw[0])
    future["schema_version"] = 2
    stranger = json.loads(raw[1])
    stranger["case"]["id"] = "not-a-case"
    stranger["trial"] = 99
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([json.dumps(future), json.dumps(stranger), *raw[2:]]) + "\n" + raw[2][:50])
    capsys.readouterr()
    code = _cli("report", broken, "--cases", AIRDESK, "--k", "9", "--format", "json")
    assert code == 2  # problems in the input: exit 2, the rest still reported
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["run"]["trials"] == 102
    problems = "\n".join(report["problems"])
    assert "schema version 2" in problems
    assert "truncated" in problems
    assert "'not-a-case' (1 trial)" in problems
    assert "k=9 is larger than the trial count" in problems
    assert "warning:" in captured.err
    assert "Traceback" not in captured.err


def test_grade_user_mistakes_are_messages(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    out.write_text("x\n")
    assert (
        _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            RUNS / "agent-v1.jsonl",
            "--out",
            out,
            "--no-progress",
        )
        == 2  # an input error: the results file exists
    )
    assert "pass --resume" in capsys.readouterr().err
    assert out.read_text() == "x\n"  # nothing already written is lost
    assert (
        _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            tmp_path / "nope.jsonl",
            "--out",
            tmp_path / "n.jsonl",
        )
        == 2
    )
    assert "nope.jsonl: no such transcript file" in capsys.readouterr().err
    assert (
        _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            RUNS / "agent-v1.jsonl",
            "--out",
            tmp_path / "c.jsonl",
            "--cassette",
            tmp_path / "c.cassette",
        )
        == 2
    )
    assert "give --judge-model too" in capsys.readouterr().err


def test_kill_9_then_resume_equals_uninterrupted_run(tmp_path):
    transcripts = tmp_path / "many.jsonl"
    total = _replicate(RUNS / "agent-v1.jsonl", transcripts, 10)
    reference = tmp_path / "reference.jsonl"
    assert (
        _cli("grade", "--cases", AIRDESK, "--transcripts", transcripts, "--out", reference, "--no-progress")
        == 0
    )
    assert len(read_results(reference).lines) == total

    out = tmp_path / "killed.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "judgekit.cli",
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(transcripts),
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--no-progress",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= 300:
            break
        if proc.poll() is not None:
            pytest.fail(f"grading finished before it could be killed: {proc.communicate()}")
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    written = out.read_bytes().count(b"\n")
    assert 300 <= written < total
    # the kill may have cut a line in half: that is exactly what --resume must handle
    rc = subprocess.run([*cmd, "--resume"], check=False, capture_output=True, text=True, timeout=120)
    assert rc.returncode == 0, rc.stderr
    # every complete line survived the kill and is kept; at most the line being written is re-graded
    assert f"{written} already graded" in rc.stdout
    final = read_results(out)
    assert final.problems == [], [str(p) for p in final.problems[:5]]
    assert len(final.lines) == total
    assert len({line.run_id for line in final.lines}) == 1
    assert _comparable(out) == _comparable(reference)


SECRETS = {
    "env_key": "sk-test-DO-NOT-LEAK-abcdefghij0123456789",
    "env_plain": "plain-env-secret-value-4242",
    "url_token": "urltoken-secret-987654",
    "url_password": "pw-secret-555555",
    "auth_header": "hdr-secret-abcdef123456",
    "transcript_key": "transcript-key-secret-77777",
    "query_key": "qs-secret-888888",
}


def test_secrets_are_never_written_anywhere(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(REPO / "tests"))
    from judges.server import JudgeServer, Reply, verdict_reply

    monkeypatch.setenv("OPENAI_API_KEY", SECRETS["env_key"])
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRETS["env_plain"])
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    reply = verdict_reply("pass")
    server = JudgeServer(lambda body, i: Reply(content=reply)).start()
    try:
        host_port = server.api_base.removeprefix("http://")
        config = tmp_path / "run.yaml"
        config.write_text(
            json.dumps(
                {
                    "judge": {"api_base": server.api_base},
                    "record": {
                        "webhook": f"https://hooks.example.com/notify?token={SECRETS['url_token']}",
                        "headers": {"Authorization": f"Bearer {SECRETS['auth_header']}"},
                        "note": f"deployed with MY_SERVICE_TOKEN={SECRETS['env_plain']}",
                        "database": f"postgres://app:{SECRETS['url_password']}@{host_port}/db",
                    },
                }
            )
        )

        def leak(data):
            run = data.setdefault("run", {})
            run["config"] = {
                **run.get("config", {}),
                "api_key": SECRETS["transcript_key"],
                "endpoint": f"https://api.example.com/v1?api_key={SECRETS['query_key']}",
            }

        transcripts = tmp_path / "t.jsonl"
        _replicate(RUNS / "agent-v1.jsonl", transcripts, 1, edit=leak)
        # only a few trials: the judge is asked once per criterion
        transcripts.write_text("\n".join(transcripts.read_text().splitlines()[:6]) + "\n")
        out_dir = tmp_path / "out"
        out_dir.mkdir()
        results = out_dir / "results.jsonl"
        cassette = out_dir / "cassette.jsonl"
        code = _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            transcripts,
            "--out",
            results,
            "--no-progress",
            "--judge-model",
            "openai/test-judge",
            "--cassette",
            cassette,
            "--config",
            config,
        )
        assert code == 0, capsys.readouterr().err
        assert server.calls > 0
        lines = read_results(results).lines
        assert len(lines) == 6
        assert lines[0].judge_fingerprint is not None
        assert any(c.layer == "rubric" for c in lines[0].checks)
        for fmt in ("md", "json", "html"):
            assert _cli("report", results, "--format", fmt, "-o", out_dir / f"report.{fmt}") == 0
        assert _cli("compare", results, results, "-o", out_dir / "compare.md") == 0
        # replay from the cassette: zero HTTP calls, same verdicts
        calls = server.calls
        replayed = out_dir / "replayed.jsonl"
        code = _cli(
            "grade",
            "--cases",
            AIRDESK,
            "--transcripts",
            transcripts,
            "--out",
            replayed,
            "--no-progress",
            "--judge-model",
            "openai/test-judge",
            "--cassette",
            cassette,
            "--cache-mode",
            "replay",
            "--config",
            config,
        )
        assert code == 0
        assert server.calls == calls
        assert [line.verdict for line in read_results(replayed).lines] != []
    finally:
        server.stop()
    captured = capsys.readouterr()
    files = sorted(p for p in out_dir.rglob("*") if p.is_file())
    assert {p.name for p in files} >= {
        "results.jsonl",
        "cassette.jsonl",
        "report.md",
        "report.json",
        "report.html",
    }
    for path in files:
        text = path.read_text()
        for name, secret in SECRETS.items():
            assert secret not in text, f"{name} leaked into {path.name}"
    for name, secret in SECRETS.items():
        assert secret not in captured.out + captured.err, f"{name} leaked to the terminal"
    # the redaction is visible, not silent
    assert "[REDACTED]" in (out_dir / "results.jsonl").read_text()
    # and the judge never saw the API key in a request body
    assert all(SECRETS["env_key"] not in json.dumps(body) for body in server.requests)


def test_import_tau_bench_and_openai(tmp_path, capsys):
    raw = tmp_path / "raw.json"
    episode = {
        "task_id": 7,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "system", "content": "p"}, {"role": "user", "content": "hi"}],
    }
    raw.write_text(json.dumps([episode, {**episode, "trial": 1, "reward": 0.0}, {"task_id": 8}]))
    out, rewards = tmp_path / "t.jsonl", tmp_path / "rewards.jsonl"
    assert _cli("import", "tau-bench", raw, "--out", out, "--rewards-out", rewards, "--run-id", "tau") == 2
    err = capsys.readouterr().err
    assert "raw.json:3" in err
    assert "imported 2 tau-bench trial(s)" in err
    assert [json.loads(x)["trial"] for x in out.read_text().splitlines()] == [1, 2]
    assert [line.verdict.value for line in read_results(rewards).lines] == ["pass", "fail"]
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}], "case_id": "c9"}) + "\n")
    assert _cli("import", "openai", chat, "--out", tmp_path / "c.jsonl") == 0
    assert json.loads((tmp_path / "c.jsonl").read_text())["case_id"] == "c9"


TAU_RAW = (
    Path(os.environ.get("JUDGEKIT_SHARED_DATA", REPO / ".." / "shared" / "data"))
    / "tau-bench-airline"
    / "gpt-4o-airline.raw.json"
)


@pytest.mark.skipif(not TAU_RAW.is_file(), reason="shared tau-bench data not present")
def test_tau_bench_rewards_report_through_the_cli(tmp_path, capsys):
    out, rewards = tmp_path / "t.jsonl", tmp_path / "rewards.jsonl"
    assert (
        _cli(
            "import", "tau-bench", TAU_RAW, "--out", out, "--rewards-out", rewards, "--agent-model", "gpt-4o"
        )
        == 0
    )
    capsys.readouterr()
    assert _cli("report", rewards, "--format", "json") == 0
    report = json.loads(capsys.readouterr().out)
    (suite,) = report["suites"]
    assert [round(p["value"], 3) for p in suite["pass_hat"]] == [0.420, 0.273, 0.220, 0.200]


def test_progress_bar_shows_rate_eta_cost_and_errors():
    import io

    from rich.console import Console

    from judgekit.commands.runs import _RichProgress
    from judgekit.results import CaseRef, make_result_line
    from judgekit.verdict import Grade, Verdict

    buffer = io.StringIO()
    bar = _RichProgress(True, console=Console(file=buffer, force_terminal=True, width=200))
    bar.start(total=3, already_done=1)
    for verdict in (Verdict.PASS, Verdict.ERROR):
        grade = Grade(case_id="c", trial=1, verdict=verdict)
        bar.advance(make_result_line(run_id="r", case=CaseRef(id="c", version=1), grade=grade), 0.125)
    bar.finish()
    text = buffer.getvalue()
    assert bar.errors == 1
    assert "3/3" in text
    assert "trials/s" in text
    assert "ETA" in text
    assert "cost $0.1250" in text
    assert "errors 1" in text


def test_grade_trusts_the_judge_only_through_a_record_for_its_fingerprint(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(REPO / "tests"))
    from judgekit.calibration.records import dump_record, load_record
    from judges.server import JudgeServer, Reply, verdict_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # A real passing calibration record, from the demo; only its fingerprint is changed below.
    assert _cli("demo", "--out", tmp_path / "demo") == 0
    (demo_record,) = (tmp_path / "demo" / "calibration" / "records").glob("*.json")
    template = load_record(demo_record.read_bytes())
    assert template.trusted

    transcripts = tmp_path / "t.jsonl"
    _replicate(RUNS / "agent-v1.jsonl", transcripts, 1)
    transcripts.write_text("\n".join(transcripts.read_text().splitlines()[:4]) + "\n")
    empty_records = tmp_path / "no-records"
    empty_records.mkdir()
    server = JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))).start()
    try:
        config = tmp_path / "run.yaml"
        config.write_text(json.dumps({"judge": {"api_base": server.api_base}}))
        common = ["--cases", AIRDESK, "--transcripts", transcripts, "--no-progress", "--config", config]
        judge = ["--judge-model", "openai/test-judge", "--cassette", tmp_path / "cassette.jsonl"]
        capsys.readouterr()
        first = tmp_path / "first.jsonl"
        assert _cli("grade", *common, *judge, "--out", first, "--records", empty_records) == 0
        printed = capsys.readouterr()
        assert "untrusted (calibration records:" in printed.err
        lines = read_results(first).lines
        rubric = [c for line in lines for c in line.checks if c.layer == "rubric"]
        assert rubric
        assert {c.trust.value for c in rubric} == {"untrusted"}
        assert (
            f"untrusted judge verdicts counted: 0 of {len(rubric)} (--untrusted withhold: a verdict no "
            "calibration record trusts decides nothing; opt in with --untrusted count)"
        ) in printed.out

        refused = _cli(
            "grade",
            *common,
            *judge,
            "--out",
            tmp_path / "x.jsonl",
            "--records",
            empty_records,
            "--require-trust",
        )
        assert refused == 1
        assert "calibrate" in capsys.readouterr().err

        records = tmp_path / "records"
        records.mkdir()
        fingerprint = lines[0].judge_fingerprint["hex"]
        (records / "judge.json").write_text(
            dump_record(template.model_copy(update={"fingerprint": fingerprint}))
        )
        second = tmp_path / "second.jsonl"
        assert (
            _cli(
                "grade",
                *common,
                *judge,
                "--cache-mode",
                "replay",
                "--out",
                second,
                "--records",
                records,
                "--require-trust",
            )
            == 0
        )
        rubric = [c for line in read_results(second).lines for c in line.checks if c.layer == "rubric"]
        assert {c.trust.value for c in rubric} == {"trusted"}
        # issue 35: the withhold policy is not explained to a run it did not apply to
        printed = capsys.readouterr().out
        assert "decides nothing" not in printed
        assert (
            "untrusted judge verdicts: none; every judge verdict of the 4 graded trial(s) is trusted by a "
            "calibration record (--untrusted withhold had nothing to decide)"
        ) in printed
    finally:
        server.stop()


def test_grade_on_an_invalid_golden_set_is_an_input_error(tmp_path, capsys):
    broken = tmp_path / "set"
    broken.mkdir()
    (broken / "c.yaml").write_text("id: c1\nrefrence_solution: x\ninput: hi\n")
    out = tmp_path / "r.jsonl"
    code = _cli("grade", "--cases", broken, "--transcripts", RUNS / "agent-v1.jsonl", "--out", out)
    assert code == 2
    err = capsys.readouterr().err
    assert "refrence_solution" in err
    assert "Traceback" not in err
    assert not out.exists()


def _grade_document(capsys) -> dict:
    """The ``grade_summary`` document: the only thing ``grade --format json`` printed on standard output."""
    document = json.loads(capsys.readouterr().out)
    assert (document["schema_version"], document["kind"]) == (1, "grade_summary")
    return document


def test_grade_json_summary_and_a_gate_that_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the example's judge is replayed: no key needed
    # the judge's calibration record, written by the demo for its exact fingerprint
    assert _cli("demo", "--out", tmp_path / "demo") == 0
    records = tmp_path / "demo" / "calibration" / "records"
    out = tmp_path / "v2.jsonl"
    capsys.readouterr()
    code = _cli(
        "grade",
        "--cases",
        AIRDESK,
        "--transcripts",
        RUNS / "agent-v2.jsonl",
        "--out",
        out,
        "--no-progress",
        "--config",
        AIRDESK / "judge.yaml",
        "--cassette",
        AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
        "--records",
        records,
        "--fail-under",
        "regression:1",
        "--max-errors",
        "0",
        "--format",
        "json",
    )
    assert code == 1  # the regression suite lost GS-REG-0107 trials 2 and 3: pass^1 is 0.75, below 1
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (document["schema_version"], document["kind"]) == (1, "grade_summary")
    assert "threshold missed: --fail-under regression:1" in captured.err  # stderr as in text mode
    assert document["results"] == str(out)
    assert (document["planned"], document["graded"], document["already_graded"]) == (104, 104, 0)
    assert document["verdicts"] == {
        "pass": 82,
        "fail": 10,
        "insufficient_information": 12,
        "error": 0,
        "not_evaluated": 0,
    }
    assert document["errors"] == document["grader_errors"] == 0
    assert document["cost_usd"] == 0.0  # replayed from the cassette
    judge = document["judge"]
    assert judge["trust"] == "trusted"
    assert judge["records"] == str(records)
    assert judge["cache_mode"] == "replay"
    assert judge["untrusted_policy"] == "withhold"
    assert judge["untrusted_verdicts_counted"] == 0
    fingerprints = {line.judge_fingerprint["hex"] for line in read_results(out).lines}
    assert fingerprints == {judge["fingerprint"]}
    assert document["pass_rates"] == {"capability": pytest.approx(76 / 96), "regression": 0.75}
    assert [s["name"] for s in document["suites"]] == ["capability", "regression"]
    assert document["suites"][1]["verdicts"]["fail"] == 2
    gate = document["gate"]
    assert gate["checked"] is True
    assert gate["passed"] is False
    fail_under, max_errors = gate["thresholds"]
    assert fail_under["option"] == "--fail-under regression:1"
    assert (fail_under["suite"], fail_under["k"], fail_under["minimum"]) == ("regression", 1, 1.0)
    assert fail_under["met"] is False
    assert fail_under["misses"] == [
        "--fail-under regression:1: pass^1 of the regression suite is 0.7500 over 2 task(s), below 1 "
        "(undecided trials count as trials that did not pass)"
    ]
    assert (max_errors["option"], max_errors["met"], max_errors["misses"]) == ("--max-errors 0", True, [])
    assert gate["misses"] == fail_under["misses"]
    assert document["input_problems"] == []
    assert document["exit_code"] == 1


def test_grade_json_without_a_judge_and_a_gate_that_passes(tmp_path, capsys):
    out = tmp_path / "v1.jsonl"
    args = ["--cases", AIRDESK, "--transcripts", RUNS / "agent-v1.jsonl", "--out", out, "--no-progress"]
    assert _cli("grade", *args, "--max-errors", "1", "--format", "json") == 0
    document = _grade_document(capsys)
    assert document["judge"] is None
    assert document["graded"] == 104
    assert document["errors"] == 1  # hv-update-phone trial 4: invalid JSON arguments
    assert sum(document["verdicts"].values()) == 104
    assert document["gate"]["passed"] is True
    assert document["gate"]["thresholds"][0]["met"] is True
    assert document["exit_code"] == 0
    # no threshold: nothing to check, and the gate says so
    assert _cli("grade", *args, "--resume", "--format", "json") == 0
    again = _grade_document(capsys)
    assert (again["graded"], again["already_graded"], again["trials_in_results"]) == (0, 104, 104)
    assert again["gate"] == {"checked": False, "passed": None, "thresholds": [], "misses": []}


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("report", "error: --format must be html or md or json (got 'pdf')"),
        ("compare", "error: --format must be md or json (got 'pdf')"),
        ("grade", "error: --format must be text or json (got 'pdf')"),
    ],
)
def test_run_commands_refuse_an_unknown_format(tmp_path, capsys, command, message):
    results = tmp_path / "v1.jsonl"
    assert _cli("grade", "--cases", AIRDESK, "--transcripts", RUNS / "agent-v1.jsonl", "--out", results) == 0
    capsys.readouterr()
    grade = ["--cases", AIRDESK, "--transcripts", RUNS / "agent-v1.jsonl", "--out", tmp_path / "x.jsonl"]
    args = {"report": [results], "compare": [results, results], "grade": grade}[command]
    assert _cli(command, *args, "--format", "pdf") == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == message
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("output_format", ["md", "json"])
def test_compare_names_the_broken_trial_in_each_format(tmp_path, capsys, output_format):
    # issue 35: one trial broke in a task that still fails; compare said "trials fixed / broken 4 / 1" only
    a, b = write_flipped_runs(tmp_path)
    assert _cli("compare", a, b, "--format", output_format) == 0
    out = capsys.readouterr().out
    broken = {"case_id": "refill-broke", "trial": 2, "change": "broken", "task_change": "still_fail"}
    if output_format == "json":
        assert [t for t in json.loads(out)["trial_changes"] if t["change"] == "broken"] == [broken]
    else:
        assert "| refill-broke | still failing | none | 2 |" in out  # the task's change in words


def _one_trial(tmp_path: Path) -> Path:
    row = json.loads((RUNS / "agent-v1.jsonl").read_text().splitlines()[0])
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(absolute_states(row, RUNS)) + "\n")
    return path


_TAU_EPISODE = {
    "task_id": 7,
    "trial": 0,
    "reward": 1.0,
    "info": {},
    "traj": [{"role": "user", "content": "hi"}],
}

#: Every option that writes a file, each given a path in folders that do not exist yet (issue 35:
#: `grade --out results/x.jsonl` failed in a fresh clone): (command line, the files it must write).
_NEW_FOLDER_OUTPUTS = {
    "grade --out": (
        lambda t: ["grade", "--cases", AIRDESK, "--transcripts", _one_trial(t), "--out", t / "new/a/r.jsonl"],
        ["new/a/r.jsonl"],
    ),
    "report -o": (lambda t: ["report", _results_file(t), "-o", t / "new/b/r.md"], ["new/b/r.md"]),
    "compare -o": (
        lambda t: ["compare", _results_file(t), _results_file(t), "-o", t / "new/c/c.md"],
        ["new/c/c.md"],
    ),
    "import --out --rewards-out": (
        lambda t: [
            "import",
            "tau-bench",
            _tau_raw(t),
            "--out",
            t / "new/d/t.jsonl",
            "--rewards-out",
            t / "new/e/rewards.jsonl",
        ],
        ["new/d/t.jsonl", "new/e/rewards.jsonl"],
    ),
    "export otel --out": (
        lambda t: ["export", "otel", _results_file(t), "--out", t / "new/f/o.json"],
        ["new/f/o.json"],
    ),
    "view --out": (
        lambda t: ["view", _results_file(t), "--out", t / "new/g/viewer"],
        ["new/g/viewer/index.html"],
    ),
    "contamination keygen --out": (
        lambda t: ["contamination", "keygen", "--out", t / "new/h/contamination.key"],
        ["new/h/contamination.key"],
    ),
}


def _results_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    if not path.is_file():
        assert _cli("grade", "--cases", AIRDESK, "--transcripts", _one_trial(tmp_path), "--out", path) != 2
    return path


def _tau_raw(tmp_path: Path) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(json.dumps([_TAU_EPISODE]))
    return path


@pytest.mark.parametrize("option", list(_NEW_FOLDER_OUTPUTS))
def test_an_output_in_a_folder_that_does_not_exist_yet_is_written(option, tmp_path, capsys):
    make_args, written = _NEW_FOLDER_OUTPUTS[option]
    args = make_args(tmp_path)
    capsys.readouterr()
    code = _cli(*args)
    err = capsys.readouterr().err
    assert code != 2, err
    assert "does not exist" not in err
    assert [(tmp_path / name).is_file() for name in written] == [True] * len(written)


def test_a_case_id_one_edit_away_gets_a_did_you_mean_in_grade_and_report(tmp_path, capsys):
    # issue 35: every other unknown name had a did-you-mean; a transcript's mistyped case id had none
    row = json.loads(_one_trial(tmp_path).read_text())
    typo = tmp_path / "typo.jsonl"
    typo.write_text(json.dumps({**row, "case_id": "gs-double-charg"}) + "\n")
    assert _cli("grade", "--cases", AIRDESK, "--transcripts", typo, "--out", tmp_path / "r.jsonl") == 2
    assert "case 'gs-double-charg' is not in the case set" in (err := capsys.readouterr().err)
    assert "trial 1 left out; did you mean 'gs-double-charge'?" in err
    results = _results_file(tmp_path).read_text().replace('"id":"gs-double-charge"', '"id":"gs-double-charg"')
    (tmp_path / "typo-results.jsonl").write_text(results)
    _cli("report", tmp_path / "typo-results.jsonl", "--cases", AIRDESK)
    assert "'gs-double-charg' (1 trial; did you mean 'gs-double-charge'?)" in capsys.readouterr().err


def test_report_streams_json_redacted_once_to_the_bytes_of_the_whole_text(tmp_path, capsys, monkeypatch):
    """The streamed report is today's whole text redacted (environment pass, then the writer's), byte for
    byte, with a piece per trial entry; a secret that straddles an arbitrary cut is still removed."""
    from judgekit.api.reports import render_report, report
    from judgekit.reports import run_json
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.secrets import Redactor, output_redactor
    from judgekit.transcript import RunRecord
    from judgekit.verdict import CheckResult, Grade, Verdict

    secret = "acme-" + "k7" * 20
    monkeypatch.setenv("ACME_API_KEY", secret)
    reasons = [
        f"the agent echoed {secret} back",
        "sent Authorization: Bearer abcdef0123456789 to the tool",
        "leaked sk-proj-" + "Q" * 24 + " and \x01 a control character (escaped as \\u0001)",
        "called https://user:hunter2pass@example.com/v1?api_key=plainvalue&x=1",
        'nothing secret here: é \u2028 "quoted"',
    ]
    lines = [
        make_result_line(
            run_id="run-s",
            case=CaseRef(id=f"case-{n % 7}", version=1),
            grade=Grade(
                case_id=f"case-{n % 7}",
                trial=n // 7 + 1,
                verdict=Verdict.FAIL,
                checks=(
                    CheckResult(check_id="c", layer="state", verdict=Verdict.FAIL, reason=reasons[n % 5]),
                ),
            ),
            run=RunRecord(app_version="1.0", agent_model="agent-x"),
        )
        for n in range(35)
    ]
    results = tmp_path / "run.jsonl"
    results.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")

    text = render_report(report(results), "json")
    expected = output_redactor().payload(Redactor.from_environ().text(text))
    assert secret in text
    assert secret not in expected
    assert "[REDACTED]" in expected
    cut = text.index(secret) + 10  # cutting there and redacting each half would leak the secret's tail
    assert secret[10:] in output_redactor().payload(text[cut:])

    monkeypatch.setattr(run_json, "_PIECE_CHARS", 1)  # a piece per trial entry
    monkeypatch.setattr(run_json, "_BATCH", 1)
    assert len(list(run_json.run_json_pieces(report(results)))) == 35
    out = tmp_path / "report.json"
    assert _cli("report", results, "--format", "json", "-o", out) == 0
    assert out.read_bytes() == expected.encode("utf-8")
    capsys.readouterr()
    assert _cli("report", results, "--format", "json") == 0
    assert capsys.readouterr().out == expected
    markdown = render_report(report(results), "md")
    assert _cli("report", results) == 0
    shown = output_redactor().payload(Redactor.from_environ().text(markdown))
    assert capsys.readouterr().out == shown + ("" if shown.endswith("\n") else "\n")


@pytest.mark.parametrize(
    ("command", "gate"), [("report", ()), ("report", ("--fail-under", "1")), ("compare", ())]
)
def test_report_and_compare_make_no_collection_after_reading_and_give_the_collector_back(
    tmp_path: Path,
    command: str,
    gate: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # what they read and build is alive until they end: collecting it would only find it alive; a missed
    # gate's exit code 1 is raised again afresh, so the report is freed before the collector is back
    import gc
    import weakref

    from judgekit.api import reports

    a, b = write_flipped_runs(tmp_path)
    args = ["report", str(a), *gate] if command == "report" else ["compare", str(a), str(b)]
    service = getattr(reports, command)
    built: list[weakref.ref[object]] = []
    collector_on: list[bool] = []

    def serving(*given: object, **named: object) -> object:  # the report or comparison, read and built
        made = service(*given, **named)
        collector_on.append(gc.isenabled())
        built.append(weakref.ref(made))
        return made

    collections: list[int] = []
    freed_first: list[bool] = []
    enable = gc.enable

    def give_back() -> None:  # the command is over: the collector is on again, and may collect at once
        freed_first.append(all(ref() is None for ref in built))
        enable()

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and built and not freed_first:
            collections.append(info["generation"])

    monkeypatch.setattr(reports, command, serving)
    monkeypatch.setattr(gc, "enable", give_back)
    gc.callbacks.append(seen)
    try:
        code = main([*args, "--output", str(tmp_path / "out.md")])
        assert code == (1 if gate else 0), capsys.readouterr().err
        assert collector_on == [False]
        assert freed_first == [True]  # given back once, with the report already freed
        assert collections == []  # none from the report built to the end of the command
        assert gc.isenabled()
        gc.disable()  # a caller that had it off keeps it off
        assert main([*args, "--output", str(tmp_path / "again.md")]) == code
        assert not gc.isenabled()
    finally:
        enable()
        gc.callbacks.remove(seen)
    assert (tmp_path / "out.md").read_bytes() == (tmp_path / "again.md").read_bytes()


def test_a_command_that_fails_still_gives_the_collector_back(tmp_path: Path) -> None:
    import gc

    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    assert main(["report", str(broken), "--output", str(tmp_path / "out.md")]) == 2
    assert gc.isenabled()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_the_collector_comes_back_without_main(tmp_path: Path, command: str) -> None:
    # a caller that runs the typer app itself (typer's CliRunner in a user's tests) gets it back too
    import gc

    from typer.testing import CliRunner

    from judgekit.cli import app

    a, b = write_flipped_runs(tmp_path)
    args = ["report", str(a)] if command == "report" else ["compare", str(a), str(b)]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "out.md")])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "out.md").is_file()
    assert gc.isenabled()

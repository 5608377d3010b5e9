"""``judgekit grade --batch`` end to end against the loopback files and batches server (real HTTP).

Real files on disk throughout.

The happy path gives a live run's verdicts; kill -9 while polling and ``--resume`` upload and submit once;
a failed batch and a partly failed one; the batch id in every line; one test per refusal.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.results import read_results

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
RUNS = AIRDESK / "runs"
sys.path.insert(0, str(REPO / "tests"))

from judges.server import JudgeServer, Reply, verdict_reply  # noqa: E402
from support import absolute_states, airdesk_judge_run  # noqa: E402

pytestmark = pytest.mark.skipif(not (RUNS / "agent-v1.jsonl").is_file(), reason="airdesk example not present")

MODEL = "openai/gpt-4o-mini"
"""A model litellm prices for batches: input 7.5e-08, output 3e-07 USD per token."""

BATCH_COST_PER_CALL = 100 * 7.5e-08 + 20 * 3e-07
"""The batch price of one scripted reply (100 prompt tokens, 20 completion tokens)."""

TRIALS = 3

OTHER_CASE_ROW = 4
"""A row of ``agent-v1.jsonl`` of another case than the first ``TRIALS`` rows (whose transcripts are one
case's trials)."""


def _verdict(body: dict, index: int) -> Reply:
    """The same answer for the same request, live or batched: pass or fail by the prompt's length."""
    text = json.dumps(body.get("messages"), sort_keys=True)
    return Reply(content=verdict_reply("pass" if len(text) % 2 else "fail"))


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    judge = JudgeServer(_verdict).start()
    yield judge
    judge.stop()


@pytest.fixture
def run(tmp_path: Path, server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A few airdesk trials (state paths absolute), a run configuration naming the server, a key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-batch-test-0123456789abcdef")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return airdesk_judge_run(tmp_path, server.api_base, TRIALS)


def _grade(run: dict[str, Path], out: Path, *extra: object, model: str = MODEL) -> list[str]:
    return [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(run["transcripts"]),
        "--out",
        str(out),
        "--no-progress",
        "--judge-model",
        model,
        "--config",
        str(run["config"]),
        *(str(e) for e in extra),
    ]


def _verdicts(path: Path) -> dict:
    return {
        line.key: (line.verdict, [(c.check_id, c.verdict) for c in line.checks])
        for line in read_results(path).lines
    }


def _judge_costs(path: Path) -> list[dict]:
    return [
        e.data["cost"]
        for line in read_results(path).lines
        for c in line.checks
        for e in c.evidence
        if e.kind == "note" and isinstance(e.data, dict) and "cost" in e.data
    ]


def test_a_batch_gives_the_verdicts_of_a_live_run_at_the_batch_price(run, server, capsys):
    live = run["dir"] / "live.jsonl"
    assert main(_grade(run, live)) == 0, capsys.readouterr().err
    direct_calls = server.calls
    assert direct_calls > 0
    batched = run["dir"] / "batched.jsonl"
    assert main(_grade(run, batched, "--batch", "--batch-poll", "0.05")) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "batch batch_1: submitted" in err
    assert server.calls == direct_calls  # no direct judge call in batch mode
    assert (server.uploads, server.batches_created) == (1, 1)
    assert _verdicts(batched) == _verdicts(live)
    lines = read_results(batched).lines
    assert len(lines) == TRIALS
    assert all(line.grading["batch"]["batch_id"] == "batch_1" for line in lines)
    assert all(line.grading["batch"]["input_file_id"] == "file-1" for line in lines)
    costs = _judge_costs(batched)
    assert costs
    assert all(c["batched"] == c["calls"] == 1 for c in costs)
    assert all(c["usd"] == pytest.approx(BATCH_COST_PER_CALL) for c in costs)
    assert "input_cost_per_token_batches" in lines[0].grading["batch"]["price"]
    assert all(line.grading["batch"]["status"] == "completed" for line in lines)
    state = json.loads((run["dir"] / "batched.jsonl.batch.json").read_text())
    assert (state["status"], state["ended"]) == ("merged", "completed")
    assert state["batch_id"] == "batch_1"
    assert "sk-batch-test" not in (run["dir"] / "batched.jsonl.batch.json").read_text()
    assert state["requests"] == len((run["dir"] / "batched.jsonl.batch-input.jsonl").read_text().splitlines())


def test_the_json_summary_names_the_batch(run, server, capsys):
    out = run["dir"] / "r.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05", "--format", "json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["batch"]["batch_id"] == "batch_1"
    assert doc["batch"]["state_file"] == str(out) + ".batch.json"


def test_kill_9_while_polling_then_resume_uploads_and_submits_once(run, server, capsys):
    server.batch_hold = True
    out = run["dir"] / "killed.jsonl"
    state = Path(str(out) + ".batch.json")
    cmd = [sys.executable, "-m", "judgekit.cli", *_grade(run, out, "--batch", "--batch-poll", "0.05")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.batch_polls >= 3 and state.exists() and json.loads(state.read_text()).get("batch_id"):
            break
        if proc.poll() is not None:
            pytest.fail(f"grading ended before it could be killed: {proc.communicate()}")
        time.sleep(0.02)
    else:
        proc.kill()
        pytest.fail("the batch was never polled")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert json.loads(state.read_text())["status"] == "in_progress"
    assert not out.exists() or out.read_text() == ""
    server.batch_hold = False
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05", "--resume")) == 0, capsys.readouterr().err
    assert (server.uploads, server.batches_created) == (1, 1)
    assert server.calls == 0
    assert len(read_results(out).lines) == TRIALS
    # once merged, --resume again reads the same batch and grades nothing twice
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05", "--resume")) == 0
    assert (server.uploads, server.batches_created) == (1, 1)
    assert len(read_results(out).lines) == TRIALS


def test_a_batch_whose_creation_reply_was_lost_is_found_again_on_resume(run, server, capsys):
    """The batch was created but its id never reached the state file (a lost reply, or kill -9 between
    sending the creation and recording it): --resume finds it by its input file and submits nothing."""
    server.batch_create_reply_lost = True
    out = run["dir"] / "lost.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05")) == 1
    assert "creating the batch" in capsys.readouterr().err
    saved = json.loads(Path(str(out) + ".batch.json").read_text())
    assert (saved["input_file_id"], saved["batch_id"]) == ("file-1", None)
    assert (server.uploads, server.batches_created) == (1, 1)  # it exists at the provider
    server.batch_create_reply_lost = False
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05", "--resume")) == 0
    err = capsys.readouterr().err
    assert (
        "batch batch_1: found the batch created over file-1 before the interruption; not submitting again"
        in err
    )
    assert (server.uploads, server.batches_created) == (1, 1)
    assert len(read_results(out).lines) == TRIALS
    assert all(line.grading["batch"]["batch_id"] == "batch_1" for line in read_results(out).lines)


def test_a_failed_batch_is_an_error_and_resume_says_what_to_do(run, server, capsys):
    server.batch_outcome = "failed"
    out = run["dir"] / "failed.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05")) == 1
    err = capsys.readouterr().err
    assert "error: batch batch_1 failed (scripted batch failure (input line 1))" in err
    assert "Nothing was merged: remove" in err
    assert json.loads(Path(str(out) + ".batch.json").read_text())["status"] == "failed"
    assert not out.exists() or out.read_text() == ""
    assert main(_grade(run, out, "--batch", "--resume")) == 1
    err = capsys.readouterr().err
    assert "error: batch batch_1 failed" in err
    assert "to submit a new batch (it is billed again)" in err
    assert server.batches_created == 1


def test_an_expired_batch_is_an_error(run, server, capsys):
    server.batch_outcome = "expired"
    out = run["dir"] / "expired.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05")) == 1
    assert "error: batch batch_1 expired (the provider gave no reason)" in capsys.readouterr().err


@pytest.mark.parametrize("outcome", ["expired", "cancelled"])
def test_a_batch_that_ended_early_merges_what_it_answered(run, server, capsys, outcome):
    server.batch_outcome = outcome
    server.batch_partial = True
    server.batch_drop = {0, 3, 5}
    out = run["dir"] / f"{outcome}.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.05", "--untrusted", "count")
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        f"batch batch_1: {outcome} with 11 of 14 judge request(s) answered: those were merged; the other 3 "
        "are judge errors (provider_error) in their trials' lines. To judge them, grade again with --resume "
        "--retry-errors (a new batch)"
    ) in err
    lines = read_results(out).lines
    assert len(lines) == TRIALS
    checks = [c for line in lines for c in line.checks if c.layer == "rubric"]
    unanswered = [c for c in checks if f"batch batch_1 {outcome} before answering this request" in c.reason]
    assert len(unanswered) >= 3  # a request can answer more than one check (identical requests)
    assert all(c.verdict.value == "error" for c in unanswered)
    answered = [c for c in checks if c not in unanswered]
    assert answered
    assert all(c.verdict.value in ("pass", "fail") for c in answered)
    assert all(line.grading["batch"]["batch_id"] == "batch_1" for line in lines)
    assert all(line.grading["batch"]["status"] == outcome for line in lines)  # the lines say it ended early
    assert any(cost.get("batched") for cost in _judge_costs(out))  # answers priced as batched
    state = json.loads(Path(str(out) + ".batch.json").read_text())
    assert (state["status"], state["ended"]) == ("merged", outcome)
    # nothing is submitted or merged twice on --resume
    before = out.read_bytes()
    assert main([*args, "--resume"]) == 0  # every trial has its line: nothing to do
    err = capsys.readouterr().err
    assert f"batch batch_1: merged into {out} already ({outcome}); nothing is left to grade" in err
    assert "Traceback" not in err
    assert out.read_bytes() == before
    assert server.batches_created == 1


def test_a_batch_that_expired_before_the_merge_is_merged_on_resume(run, server, capsys):
    """Killed while it was in progress; by --resume it has expired with part of its answers: they merge."""
    server.batch_hold = True
    out = run["dir"] / "resumed.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.05")
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from judgekit.cli import main; sys.exit(main(sys.argv[1:]))",
            *args,
        ],
        env={**os.environ},
        stderr=subprocess.PIPE,
        text=True,
    )
    state = Path(str(out) + ".batch.json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        state.exists() and json.loads(state.read_text()).get("batch_id")
    ):
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert json.loads(state.read_text())["batch_id"] == "batch_1"
    server.batch_hold = False
    server.batch_outcome = "expired"
    server.batch_partial = True
    server.batch_drop = {2}
    assert main([*args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert "batch batch_1: expired with 13 of 14 judge request(s) answered" in err
    assert len(read_results(out).lines) == TRIALS
    assert server.batches_created == 1


def test_a_batch_that_expired_without_any_file_is_still_an_error(run, server, capsys):
    server.batch_outcome = "cancelled"
    out = run["dir"] / "cancelled.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.05")) == 1
    err = capsys.readouterr().err
    assert "error: batch batch_1 cancelled (the provider gave no reason)" in err
    assert "Nothing was merged" in err
    assert "Traceback" not in err
    assert not out.exists() or out.read_text() == ""


def test_requests_a_batch_failed_are_judge_errors_never_passes(run, server, capsys):
    def script(body: dict, index: int) -> Reply:
        return Reply(status=400) if index % 2 == 0 else _verdict(body, index)

    server.script = script
    server.batch_drop = {1}
    out = run["dir"] / "partly.jsonl"
    # the judge's verdicts counted, so that a failed request passing silently would show
    args = _grade(run, out, "--batch", "--batch-poll", "0.05", "--untrusted", "count")
    assert main(args) == 0, capsys.readouterr().err
    assert "completed (6/14 done, 7 failed)" in capsys.readouterr().err
    lines = read_results(out).lines
    checks = [c for line in lines for c in line.checks if c.layer == "rubric"]
    failed = [c for c in checks if "failed this request: HTTP 400: scripted 400 (error file" in c.reason]
    missing = [c for c in checks if "returned no answer for this request" in c.reason]
    assert failed
    assert missing
    for check in failed + missing:
        assert check.verdict.value == "error"
        assert check.reason.startswith("provider_error: ")
        assert "batch batch_1" in check.reason
    # a gate the batch failed never lets its trial pass (error, or fail when another gate failed); a
    # scored criterion is left unscored, as after a live provider error
    hit = [line for line in lines if any(c.gate and c in line.checks for c in failed + missing)]
    assert hit
    assert all(line.verdict.value != "pass" for line in hit)
    assert any(line.verdict.value == "error" for line in hit)
    assert all(c.score is None for c in failed + missing)


# ----------------------------------------------------------------------- a provider call that fails (exit 1)


def _stopped(args: list[str], capsys: pytest.CaptureFixture[str], message: str) -> str:
    """Grading stops with exit 1, the message, no traceback."""
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    assert "run the same command with --resume to try again (nothing is submitted twice)" in err
    return err


def _state(out: Path) -> dict:
    return json.loads(Path(str(out) + ".batch.json").read_text())


def _resumed_once(run: dict[str, Path], server: JudgeServer, out: Path, capsys) -> None:
    """With the fault gone, --resume merges one batch over one upload: every trial has its line."""
    server.batch_faults = {}
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01", "--resume")) == 0, capsys.readouterr().err
    assert (server.uploads, server.batches_created) == (1, 1)
    assert len(read_results(out).lines) == TRIALS
    assert _state(out)["status"] == "merged"


def test_a_failed_upload_stops_and_resume_uploads_once(run, server, capsys):
    server.batch_faults = {"upload": 500}
    out = run["dir"] / "upload.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.01")
    _stopped(args, capsys, f"error: uploading the batch input file at {server.api_base} failed (")
    assert server.fault_hits == {"upload": 1}  # litellm does not retry it by itself
    assert (_state(out)["input_file_id"], _state(out)["batch_id"]) == (None, None)
    assert not out.exists() or out.read_text() == ""
    _resumed_once(run, server, out, capsys)


def test_a_failed_creation_stops_and_resume_creates_once(run, server, capsys):
    server.batch_faults = {"create": 500}
    out = run["dir"] / "create.jsonl"
    _stopped(_grade(run, out, "--batch", "--batch-poll", "0.01"), capsys, "error: creating the batch at ")
    assert server.fault_hits == {"create": 1}
    assert (_state(out)["input_file_id"], _state(out)["batch_id"]) == ("file-1", None)
    assert server.batches_created == 0
    _resumed_once(run, server, out, capsys)  # the list of batches has none over file-1: one is created


def test_listing_the_batches_that_fails_on_resume_stops(run, server, capsys):
    server.batch_create_reply_lost = True
    out = run["dir"] / "list.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01")) == 1
    capsys.readouterr()
    server.batch_create_reply_lost = False
    server.batch_faults = {"list": 503}
    args = _grade(run, out, "--batch", "--batch-poll", "0.01", "--resume")
    _stopped(args, capsys, "error: listing the batches at ")
    assert server.batches_created == 1  # not created again while the list cannot be read
    _resumed_once(run, server, out, capsys)


def test_a_status_that_cannot_be_read_stops_after_repeated_tries(run, server, capsys):
    from judgekit.batch_grading import POLL_FAILURES_MAX

    server.batch_faults = {"retrieve": 503}
    out = run["dir"] / "poll.jsonl"
    _stopped(_grade(run, out, "--batch", "--batch-poll", "0.01"), capsys, "error: reading batch batch_1 at ")
    assert server.fault_hits == {"retrieve": POLL_FAILURES_MAX}
    assert _state(out)["batch_id"] == "batch_1"
    assert not out.exists() or out.read_text() == ""
    _resumed_once(run, server, out, capsys)


def test_a_failed_download_merges_nothing_and_resume_merges(run, server, capsys):
    server.batch_faults = {"content": 500}
    out = run["dir"] / "content.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.01")
    _stopped(args, capsys, "error: downloading file file-output-batch_1 at ")
    assert server.fault_hits == {"content": 1}  # litellm does not download it again to price the batch
    assert _state(out)["status"] == "completed"
    assert not out.exists() or out.read_text() == ""
    _resumed_once(run, server, out, capsys)


# --------------------------------------------------------------------------- the run changed (exit 2)


def _more_trials(run: dict[str, Path], *, same_transcript: bool = False) -> None:
    """One more planned trial than the batch was made for: another case's (its judge requests are new), or
    the next trial of the first case with the same transcript (the same requests, which the batch holds)."""
    rows = run["transcripts"].read_text().splitlines()
    if same_transcript:
        more = {**json.loads(rows[0]), "trial": 99}
    else:
        more = absolute_states(
            json.loads((RUNS / "agent-v1.jsonl").read_text().splitlines()[OTHER_CASE_ROW]), RUNS
        )
        assert more["case_id"] != json.loads(rows[0])["case_id"]
    run["transcripts"].write_text("\n".join([*rows, json.dumps(more)]) + "\n")


def _interrupted_then_changed(run: dict[str, Path], server: JudgeServer, capsys, fault: str) -> tuple:
    """A batch run stopped by a failed ``fault`` call, one trial added, then ``--resume`` refused (exit 2).

    Returns:
        ``(out, state file, the state file's bytes before the resume, standard error, polls before it)``.
    """
    server.batch_faults = {fault: 500}
    out = run["dir"] / "changed.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01")) == 1
    capsys.readouterr()
    server.batch_faults = {}
    _more_trials(run)
    state = Path(str(out) + ".batch.json")
    kept = state.read_bytes()
    polls = server.batch_polls
    err = _refused(_grade(run, out, "--batch", "--batch-poll", "0.01", "--resume"), capsys)
    return out, state, kept, err, polls


def test_requests_that_changed_before_submission_are_refused_on_resume(run, server, capsys):
    _, state, kept, err, _ = _interrupted_then_changed(run, server, capsys, "create")
    assert (
        f"error: {state}: the judge requests of this run differ from those collected before the "
        f"interruption (input file file-1); remove {state} to start again"
    ) in err
    assert state.read_bytes() == kept
    assert server.batches_created == 0


def test_requests_that_are_not_in_the_submitted_batch_are_refused_before_merging(run, server, capsys):
    out, state, kept, err, polls = _interrupted_then_changed(run, server, capsys, "retrieve")
    assert f"error: {state}: " in err
    assert (
        "judge request(s) this run has left to answer are not in batch batch_1 (the cases, transcripts, "
        "rubric or judge settings changed since it was submitted), so the batch cannot answer them; grade "
        f"with what was submitted, or remove {state} to submit a new batch (it is billed again)"
    ) in err
    assert state.read_bytes() == kept
    assert server.batch_polls == polls  # refused before looking at the batch
    assert not out.exists() or out.read_text() == ""


def test_a_trial_added_after_the_merge_with_new_requests_is_refused_on_resume(run, server, capsys):
    out = run["dir"] / "merged.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01")) == 0
    capsys.readouterr()
    before = out.read_bytes()
    _more_trials(run)
    state = Path(str(out) + ".batch.json")
    err = _refused(_grade(run, out, "--batch", "--resume"), capsys)
    assert f"error: {state}: " in err
    assert "judge request(s) this run has left to answer are not in batch batch_1" in err
    assert out.read_bytes() == before
    assert server.batches_created == 1
    assert json.loads(state.read_text())["status"] == "merged"


def test_a_trial_added_after_the_merge_whose_requests_the_batch_holds_is_merged_from_it(run, server, capsys):
    out = run["dir"] / "merged.jsonl"
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01")) == 0
    capsys.readouterr()
    calls = server.calls
    _more_trials(run, same_transcript=True)
    assert main(_grade(run, out, "--batch", "--batch-poll", "0.01", "--resume")) == 0, capsys.readouterr().err
    lines = read_results(out).lines
    assert len(lines) == TRIALS + 1
    assert lines[-1].trial == 99
    assert lines[-1].grading["batch"]["batch_id"] == "batch_1"
    assert server.calls == calls  # answered from the batch: no direct judge call
    assert (server.uploads, server.batches_created) == (1, 1)


# --------------------------------------------------------------------------- refusals (exit 2)


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_batch_refuses_replay_mode(run, server, capsys):
    cassette = run["dir"] / "cassette.jsonl"
    cassette.write_text("")
    args = _grade(run, run["dir"] / "o.jsonl", "--batch", "--cassette", cassette, "--cache-mode", "replay")
    assert (
        "error: --batch sends the judge requests to the provider and --cache-mode replay never calls it"
        in (_refused(args, capsys))
    )


def test_batch_refuses_a_cost_budget(run, server, capsys):
    args = _grade(run, run["dir"] / "o.jsonl", "--batch", "--max-cost", "1")
    assert "cannot stop it half way: drop the budget, or grade without --batch" in _refused(args, capsys)


def test_batch_refuses_a_provider_litellm_does_not_batch(run, server, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-batch-test-0123456789")
    args = _grade(run, run["dir"] / "o.jsonl", "--batch", model="anthropic/claude-3-5-haiku-latest")
    err = _refused(args, capsys)
    assert (
        "(provider anthropic) cannot be batched: judgekit batches through litellm's OpenAI-compatible" in err
    )


def test_batch_refuses_a_model_whose_parameters_litellm_rewrites(run, server, capsys):
    args = _grade(run, run["dir"] / "o.jsonl", "--batch", model="openai/o3-mini")
    assert "litellm rewrites its parameters for the provider" in _refused(args, capsys)


def test_batch_refuses_a_run_without_a_judge(run, server, capsys):
    args = ["grade", "--cases", AIRDESK, "--transcripts", run["transcripts"], "--out", run["dir"] / "o.jsonl"]
    err = _refused([str(a) for a in [*args, "--batch", "--no-progress"]], capsys)
    assert "and this run has no judge: give --judge-model too" in err


def test_batch_poll_needs_batch(run, server, capsys):
    args = _grade(run, run["dir"] / "o.jsonl", "--batch-poll", "5")
    assert "error: --batch-poll is the polling interval of --batch: give --batch too" in _refused(
        args, capsys
    )


def test_batch_poll_must_be_positive(run, server, capsys):
    args = _grade(run, run["dir"] / "o.jsonl", "--batch", "--batch-poll", "0")
    err = _refused(args, capsys)
    assert err.strip() == "error: --batch-poll must be more than 0 seconds (got 0)"  # before any judge set-up
    assert server.uploads == 0


def test_a_batch_state_is_not_overwritten_without_resume(run, server, capsys):
    out = run["dir"] / "o.jsonl"
    server.batch_hold = True
    Path(str(out) + ".batch.json").write_text(
        json.dumps({"model": MODEL, "provider": "openai", "api_base": server.api_base, "batch_id": "batch_9"})
    )
    err = _refused(_grade(run, out, "--batch"), capsys)
    assert "this --out already has a batch (batch_9, collected); pass --resume to continue it" in err


def test_a_batch_state_of_another_judge_is_refused(run, server, capsys):
    out = run["dir"] / "o.jsonl"
    Path(str(out) + ".batch.json").write_text(
        json.dumps(
            {"model": "openai/gpt-4o", "provider": "openai", "api_base": server.api_base, "batch_id": "b"}
        )
    )
    err = _refused(_grade(run, out, "--batch", "--resume"), capsys)
    assert "batch b was made for judge openai/gpt-4o at" in err
    assert "grade with the same judge" in err


def test_a_batch_state_file_that_is_not_one_is_refused(run, server, capsys):
    out = run["dir"] / "o.jsonl"
    Path(str(out) + ".batch.json").write_text(json.dumps({"provider": "openai"}))
    err = _refused(_grade(run, out, "--batch", "--resume"), capsys)
    assert ".batch.json: field model: Field required; restore the file or remove it" in err


# --------------------------------------------------------------------------- --resume --retry-errors


def _errored(path: Path) -> set:
    return {
        line.key
        for line in read_results(path).lines
        if line.verdict.value == "error" or any(c.verdict.value == "error" for c in line.checks)
    }


def test_retry_errors_after_a_merged_batch_sends_the_errored_trials_in_a_new_batch(run, server, capsys):
    server.batch_outcome = "expired"
    server.batch_partial = True
    server.batch_drop = {0, 3, 5}
    out = run["dir"] / "retry.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.01")
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "To judge them, grade again with --resume --retry-errors (a new batch)" in err
    errored = _errored(out)
    assert errored
    untouched = {
        raw
        for raw in out.read_bytes().splitlines()
        if (json.loads(raw)["case"]["id"], json.loads(raw)["trial"]) not in errored
    }
    server.batch_outcome = "completed"
    server.batch_partial = False
    server.batch_drop = set()
    calls = server.calls
    assert main([*args, "--resume", "--retry-errors"]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert f"retrying {len(errored)} trial(s) whose line ended in error" in err
    assert (
        f"batch batch_1: merged into {out} already (expired); the {len(errored)} trial(s) left to grade go "
        "in a new batch"
    ) in err
    assert "batch batch_2: submitted" in err
    assert server.batches_created == 2
    assert server.calls == calls  # answered by the new batch, never directly
    results = read_results(out)
    assert results.problems == []
    assert len(results.lines) == TRIALS
    assert _errored(out) == set()
    retried = [line for line in results.lines if line.key in errored]
    assert retried
    assert all(line.grading["batch"]["batch_id"] == "batch_2" for line in retried)
    assert untouched <= set(out.read_bytes().splitlines())
    state = json.loads(Path(str(out) + ".batch.json").read_text())
    assert (state["batch_id"], state["status"], state["ended"]) == ("batch_2", "merged", "completed")
    # nothing left: a further retry submits nothing
    assert main([*args, "--resume", "--retry-errors"]) == 0
    assert server.batches_created == 2
    assert len(read_results(out).lines) == TRIALS


def test_a_retry_batch_stopped_before_its_merge_leaves_the_file_and_is_merged_on_the_next_retry(
    run, server, capsys
):
    server.batch_outcome = "expired"
    server.batch_partial = True
    server.batch_drop = {1}
    out = run["dir"] / "retry-stopped.jsonl"
    args = _grade(run, out, "--batch", "--batch-poll", "0.01")
    assert main(args) == 0
    errored = _errored(out)
    assert errored
    before = out.read_bytes()
    server.batch_outcome = "completed"
    server.batch_partial = False
    server.batch_drop = set()
    server.batch_faults = {"retrieve": 503}  # the new batch is submitted, then its status cannot be read
    assert main([*args, "--resume", "--retry-errors"]) == 1
    assert "error: reading batch batch_2 at " in capsys.readouterr().err
    assert out.read_bytes() == before  # the error lines stay until the new answers are merged
    server.batch_faults = {}
    assert main([*args, "--resume", "--retry-errors"]) == 0, capsys.readouterr().err
    assert server.batches_created == 2  # the recorded batch_2 is merged, not submitted again
    results = read_results(out)
    assert results.problems == []
    assert len(results.lines) == TRIALS
    assert _errored(out) == set()

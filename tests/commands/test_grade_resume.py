"""``judgekit grade --resume --retry-errors`` end to end: a judge that was down, then back (real HTTP).

Real files on disk, the loopback judge server, and ``kill -9`` in the middle of a retry. The batch path's
retry is in ``tests/commands/test_grade_batch.py``; the runner's rules in ``tests/test_runner.py``.
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
from support import airdesk_judge_run  # noqa: E402

pytestmark = pytest.mark.skipif(not (RUNS / "agent-v1.jsonl").is_file(), reason="airdesk example not present")

TRIALS = 4


class Judge:
    """The judge's script: down (HTTP 503) or up (a passing verdict), with an added delay when asked."""

    def __init__(self) -> None:
        self.down = True
        self.delay = 0.0

    def __call__(self, body: dict, index: int) -> Reply:
        if self.down:
            return Reply(status=503, delay=self.delay)
        return Reply(content=verdict_reply("pass"), delay=self.delay)


@pytest.fixture
def judge() -> Iterator[tuple[Judge, JudgeServer]]:
    script = Judge()
    server = JudgeServer(script).start()
    yield script, server
    server.stop()


@pytest.fixture
def run(tmp_path: Path, judge, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    _, server = judge
    monkeypatch.setenv("OPENAI_API_KEY", "sk-retry-test-0123456789abcdef")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return airdesk_judge_run(tmp_path, server.api_base, TRIALS)


def _grade(run: dict[str, Path], out: Path, *extra: object) -> list[str]:
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
        "openai/gpt-4o-mini",
        "--judge-retries",
        "0",
        "--config",
        str(run["config"]),
        *(str(e) for e in extra),
    ]


def _errored(path: Path) -> set[tuple[str, int]]:
    return {
        line.key
        for line in read_results(path).lines
        if line.verdict.value == "error" or any(c.verdict.value == "error" for c in line.checks)
    }


def test_retry_errors_regrades_what_the_judge_outage_left_and_report_counts_each_trial_once(
    run, judge, capsys
):
    script, _ = judge
    out = run["dir"] / "r.jsonl"
    assert main(_grade(run, out)) == 0, capsys.readouterr().err
    capsys.readouterr()
    errored = _errored(out)
    assert errored  # the judge was down
    # a plain --resume grades nothing (every trial has its line)
    script.down = False
    assert main(_grade(run, out, "--resume")) == 0
    assert f"{TRIALS} already graded" in capsys.readouterr().out
    assert _errored(out) == errored
    # --retry-errors grades the errored trials again, and their new lines replace the old ones
    assert main(_grade(run, out, "--resume", "--retry-errors")) == 0
    text = capsys.readouterr()
    assert f"retrying {len(errored)} trial(s) whose line ended in error" in text.err
    assert f"graded {len(errored)} trial(s)" in text.out
    results = read_results(out)
    assert results.problems == []
    assert len(results.lines) == TRIALS
    assert _errored(out) == set()
    assert main(["report", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["run"]["trials"] == TRIALS


def test_retry_errors_needs_resume(run, judge, capsys):
    out = run["dir"] / "r.jsonl"
    assert main(_grade(run, out, "--retry-errors")) == 2
    err = capsys.readouterr().err
    assert "error: --retry-errors re-grades the trials of an existing run whose line ended in error" in err
    assert "give --resume too" in err
    assert not out.exists()


def test_an_existing_folder_as_out_is_named_as_a_folder(run, judge, capsys):
    folder = run["dir"] / "results"
    folder.mkdir()
    assert main(_grade(run, folder)) == 2
    err = capsys.readouterr().err
    assert "already holds results" not in err
    assert (
        f"error: --out {folder} is a folder; --out takes the results file to write (JSONL), for example "
        f"--out {folder / 'results.jsonl'}"
    ) in err
    assert list(folder.iterdir()) == []


def test_kill_9_during_a_retry_then_retry_again_leaves_one_line_per_trial(run, judge, capsys):
    script, server = judge
    out = run["dir"] / "r.jsonl"
    assert main(_grade(run, out)) == 0
    capsys.readouterr()
    errored = _errored(out)
    assert len(errored) >= 2
    script.down = False
    script.delay = 0.3  # slow enough to kill the retry between two trials
    cmd = [
        sys.executable,
        "-m",
        "judgekit.cli",
        *_grade(run, out, "--resume", "--retry-errors", "--concurrency", "1"),
    ]
    before = out.read_bytes().count(b"\n")
    calls = server.calls
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # the error lines are gone (the file was rewritten) and the retry has started calling the judge
        if out.read_bytes().count(b"\n") < before and server.calls > calls:
            break
        if proc.poll() is not None:
            pytest.fail(f"the retry finished before it could be killed: {proc.communicate()}")
        time.sleep(0.01)
    else:
        proc.kill()
        pytest.fail("the retry never started")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    middle = read_results(out)
    assert middle.problems == []  # never a duplicate, whatever the moment of the kill
    assert len(middle.lines) < TRIALS
    script.delay = 0.0
    capsys.readouterr()
    assert main(_grade(run, out, "--resume", "--retry-errors", "--format", "json")) == 0
    summary = json.loads(capsys.readouterr().out)
    # the trials whose error lines the killed retry had removed have no line now: graded as missing
    assert (summary["graded"], summary["retried"]) == (TRIALS - len(middle.lines), 0)
    final = read_results(out)
    assert final.problems == []
    assert len(final.lines) == TRIALS
    assert _errored(out) == set()
    assert not [p.name for p in run["dir"].iterdir() if p.name.startswith(".r.jsonl")]

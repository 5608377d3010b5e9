"""The viewer folder is safe to share and safe to write (issue 33: F1, F8, F12, local paths).

* F1: no secret in a transcript (an environment variable's value, an ``sk-``/``AKIA`` key, a ``Bearer``
  token) reaches any file of the folder, in any encoding the JS files use.
* F8: a write that fails midway (a file-size limit, a full disk) is exit 2 naming the folder and the OS
  error, leaves the folder exactly as it was, and the next run works.
* F12: the viewer's memory does not grow with the number of trials.
* The trial pages name transcript files relative to the results file's folder, never by absolute path.

Every test runs ``judgekit view`` as a child process (real environment, real OS errors).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.results import CaseRef, TrialSource, dump_result_line, make_result_line
from judgekit.verdict import CheckResult, Evidence, Grade, Verdict
from support import CLI_CHILD, child_env, load_file

REPO = Path(__file__).resolve().parents[2]

ENV_SECRET = 'pw-"9x<Zq>\\7Lm2Vr8Tk'
"""An OPENAI_API_KEY value with characters JSON and the viewer's JS escape (``"``, ``\\``, ``<``)."""

SHAPED = {
    "sk": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "akia": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "eyQ7vX2mN9pL4kJ8hG3fD6sA1zW5",
}
"""Key shapes the redactor knows: an OpenAI key, an AWS access key id, a Bearer token's credential."""


def encodings(secret: str) -> set[str]:
    """Every form a secret can take in a viewer file: as is, JSON-escaped, and ``<`` as ``\\u003c``."""
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    forms = {secret, escaped}
    forms |= {f.replace("<", "\\u003c") for f in forms}
    forms |= {json.dumps(secret)[1:-1]}
    return forms


def leaks(folder: Path, secrets: list[str]) -> list[str]:
    """``file: form`` for every form of every secret found in any file of ``folder``."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        for secret in secrets:
            for form in encodings(secret):
                if form in text:
                    found.append(f"{path.relative_to(folder)}: {form}")
    return found


def write_run(folder: Path, messages: list[dict[str, Any]], *, trials: int = 1, **source: Any) -> Path:
    """A results file of ``trials`` failed trials graded from ``folder/transcripts.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    transcripts = source.pop("transcripts", folder / "transcripts.jsonl")
    transcripts.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    with transcripts.open("w", encoding="utf-8") as out:
        for n in range(trials):
            raw = json.dumps({"case_id": f"c-{n // 4}", "trial": n % 4 + 1, "messages": messages})
            out.write(raw + "\n")
            check = CheckResult(
                check_id="rule:1",
                layer="rules",
                verdict=Verdict.FAIL,
                reason="forbidden: issue_refund twice",
                evidence=(Evidence(kind="call", summary="call 1", call_index=1, tool="issue_refund"),),
            )
            grade = Grade(case_id=f"c-{n // 4}", trial=n % 4 + 1, verdict=Verdict.FAIL, checks=(check,))
            lines.append(
                make_result_line(
                    run_id="r1",
                    case=CaseRef(id=f"c-{n // 4}", version=1),
                    grade=grade,
                    source=TrialSource(
                        file=source.get("recorded", str(transcripts)),
                        line=n + 1,
                        sha256=hashlib.sha256(raw.encode()).hexdigest(),
                    ),
                )
            )
    results = folder / "results.jsonl"
    results.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    return results


def view(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    limit: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``judgekit view ARGS`` in a child process (``limit`` runs in the child before it starts)."""
    return subprocess.run(
        [*CLI_CHILD, "view", *args],
        capture_output=True,
        text=True,
        env=child_env(**(env or {})),
        cwd=cwd,
        preexec_fn=limit,
        timeout=120,
        check=False,
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (the folder itself included as an entry)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------- F1


def test_no_secret_in_a_transcript_reaches_any_file_of_the_viewer(tmp_path: Path) -> None:
    """F1: the env value, an sk- key, an AKIA key and a Bearer token, in text, arguments and results."""
    secrets = [ENV_SECRET, *SHAPED.values()]
    arguments = json.dumps({"note": f"key {SHAPED['sk']}", "aws": SHAPED["akia"], "api_key": "plainvalue123"})
    messages = [
        {"role": "user", "content": f"my key is {ENV_SECRET} and {SHAPED['sk']}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": arguments}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": f"Authorization: Bearer {SHAPED['bearer']}"},
        {"role": "assistant", "content": f"use {SHAPED['akia']} with token {ENV_SECRET}"},
    ]
    results = write_run(tmp_path, messages, trials=3)
    out = tmp_path / "v"
    done = view(str(results), "--out", str(out), env={"OPENAI_API_KEY": ENV_SECRET})
    assert done.returncode == 0, done.stderr
    assert (out / "data" / "run0" / "chunk-0.js").is_file()
    assert leaks(out, [*secrets, "plainvalue123"]) == []
    chunk = (out / "data" / "run0" / "chunk-0.js").read_text(encoding="utf-8")
    assert chunk.count("[REDACTED]") >= 3 * 6  # every secret replaced, the text around it kept
    assert "my key is [REDACTED]" in chunk


# --------------------------------------------------------------------------- F8


def _fsize(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


MESSAGES = [
    {"role": "user", "content": "refund my duplicate charge " + "x" * 400},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "issue_refund", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "done"},
    {"role": "assistant", "content": "I refunded both charges."},
]


def _no_leftovers(parent: Path) -> list[str]:
    return sorted(
        p.name for p in parent.iterdir() if ".judgekit-staging" in p.name or ".judgekit-previous" in p.name
    )


def test_a_failed_write_leaves_an_earlier_viewer_as_it_was_and_the_next_run_works(tmp_path: Path) -> None:
    """F8: a file-size limit (EFBIG, a real OS error) midway: exit 2, the folder untouched, then success."""
    small = write_run(tmp_path / "small", MESSAGES, trials=2)
    large = write_run(tmp_path / "large", MESSAGES, trials=60)
    out = tmp_path / "v"
    assert view(str(small), "--out", str(out)).returncode == 0
    before = snapshot(out)
    failed = view(str(large), "--out", str(out), limit=_fsize(16_000))
    assert failed.returncode == 2, failed.stderr
    assert f"--out {out}: cannot write the folder: " in failed.stderr
    assert "File too large" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert "failed unexpectedly" not in failed.stderr
    assert snapshot(out) == before
    assert _no_leftovers(tmp_path) == []
    again = view(str(large), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "data" / "run0" / "chunk-0.js").stat().st_size > 16_000


def test_a_failed_write_to_a_new_folder_creates_nothing_and_the_next_run_works(tmp_path: Path) -> None:
    """F8: the old code left a half-written chunk without the marker, so the next run was refused."""
    large = write_run(tmp_path / "large", MESSAGES, trials=60)
    out = tmp_path / "new" / "v"
    failed = view(str(large), "--out", str(out), limit=_fsize(16_000))
    assert failed.returncode == 2, failed.stderr
    assert "File too large" in failed.stderr
    assert not (tmp_path / "new").exists()
    again = view(str(large), "--out", str(out))
    assert again.returncode == 0, again.stderr


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 256 KiB tmpfs (a real full disk: ENOSPC), when this process may mount one."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root): the file-size-limit tests cover the same path")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("where", ["inside", "the disk itself"])
def test_a_full_disk_is_exit_2_and_the_folder_is_left_as_it_was(
    tmp_path: Path, tiny_disk: Path, where: str
) -> None:
    """F8 on a real full disk (ENOSPC), for a folder on the disk and for the mount point itself."""
    small = write_run(tmp_path / "small", MESSAGES, trials=2)
    large = write_run(tmp_path / "large", MESSAGES, trials=400)
    out = tiny_disk / "v" if where == "inside" else tiny_disk
    assert view(str(small), "--out", str(out)).returncode == 0
    before = snapshot(out)
    failed = view(str(large), "--out", str(out))
    assert failed.returncode == 2, failed.stderr
    assert f"--out {out}: cannot write the folder: " in failed.stderr
    assert "No space left on device" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert snapshot(out) == before
    assert _no_leftovers(tiny_disk) == []
    assert _no_leftovers(out) == []
    again = view(str(small), "--out", str(out))
    assert again.returncode == 0, again.stderr


# --------------------------------------------------------------------------- F12


def _peak_mb(results: Path, out: Path) -> float:
    process = subprocess.Popen(
        [*CLI_CHILD, "view", str(results), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    _, status, usage = os.wait4(process.pid, 0)
    assert status == 0
    return usage.ru_maxrss / 1024


def test_the_viewer_memory_does_not_grow_with_the_trials(tmp_path: Path) -> None:
    """F12: 2,500 more trials add under 8 MB of peak memory (the old viewer added about 37 MB)."""
    bench = load_file(REPO / "bench" / "bench_viewer.py", "bench_viewer_for_memory")
    few, many = tmp_path / "few", tmp_path / "many"
    few.mkdir()
    many.mkdir()
    small = _peak_mb(bench.generate(few, 500), tmp_path / "v-few")
    large = _peak_mb(bench.generate(many, 3000), tmp_path / "v-many")
    assert large - small < 8, f"peak {small:.1f} MB for 500 trials, {large:.1f} MB for 3,000"


# --------------------------------------------------------------------------- local paths


def test_trial_pages_name_transcripts_relative_to_the_results_folder(tmp_path: Path) -> None:
    """Also seen: the trial pages printed each transcript file's absolute local path."""
    results = write_run(tmp_path / "run", MESSAGES, trials=2, transcripts=tmp_path / "run" / "t" / "tr.jsonl")
    out = tmp_path / "v"
    done = view(str(results), "--out", str(out))
    assert done.returncode == 0, done.stderr
    for path in (out / "data").rglob("*.js"):
        assert str(tmp_path) not in path.read_text(encoding="utf-8"), path
    chunk = (out / "data" / "run0" / "chunk-0.js").read_text(encoding="utf-8")
    assert '"file":"t/tr.jsonl"' in chunk


def test_a_missing_transcript_is_named_without_its_folder(tmp_path: Path) -> None:
    """A transcript outside the results folder, then removed: the reason names the file, not its path."""
    elsewhere = tmp_path / "private" / "home" / "tr.jsonl"
    results = write_run(tmp_path / "run", MESSAGES, trials=1, transcripts=elsewhere)
    elsewhere.unlink()
    out = tmp_path / "v"
    done = view(str(results), "--out", str(out))
    assert done.returncode == 0, done.stderr
    chunk = (out / "data" / "run0" / "chunk-0.js").read_text(encoding="utf-8")
    assert str(tmp_path) not in chunk
    assert "transcript file tr.jsonl not found" in chunk

"""Hostile output and input paths (issue 33 F2, F13, F14): what a user or CI job points judgekit at.

Every variant runs the real command line in a child process with a timeout, as a user would. Outputs
(``report -o``, ``compare -o``, ``grade --out``): a symlink to a file and a dangling symlink are written
through (the link stays), a path in a missing folder is written (the folder made, issue 35); a named pipe,
a character device (a ``mknod`` copy of ``/dev/null``'s numbers and the real ``/dev/full``) and a folder
are refused with exit 2, and what was there is unchanged. Inputs (``report``, ``compare``, ``view``,
``grade --transcripts``): a named pipe, a socket and a device are refused with exit 2 within the timeout,
never waited on. Standard output: a full
device is exit 2 with ``cannot write to standard output``; a closed pipe is a quiet exit 141.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hostile.sweep import Sweep, SweepStore
from judgekit.results import CaseRef, dump_result_line, make_result_line
from judgekit.verdict import CheckResult, Grade, Verdict
from support import refine_example_args

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
TIMEOUT = 20.0  # a refused input answers in about a second (the interpreter's start-up); a FIFO used to hang


def _cli(
    *args: str, stdout: int | None = subprocess.PIPE, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "judgekit.cli", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=TIMEOUT,
        env=env,
        cwd=cwd or REPO,
        check=False,
    )


def _results(folder: Path, name: str = "run.jsonl") -> Path:
    lines = []
    for number, case in enumerate(("a", "b", "c")):
        verdict = Verdict.PASS if number else Verdict.FAIL
        grade = Grade(
            case_id=case,
            trial=1,
            verdict=verdict,
            checks=(CheckResult(check_id="state", layer="state", verdict=verdict),),
        )
        lines.append(make_result_line(run_id="r", case=CaseRef(id=case, version=1), grade=grade))
    path = folder / name
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _judged(folder: Path) -> str:
    """A results file with one judge verdict (a rubric criterion check), for ``labels from-results``."""
    grade = Grade(
        case_id="a",
        trial=1,
        verdict=Verdict.PASS,
        checks=(CheckResult(check_id="criterion:x", layer="rubric", verdict=Verdict.PASS),),
    )
    path = folder / "judged.jsonl"
    line = make_result_line(run_id="r", case=CaseRef(id="a", version=1), grade=grade)
    path.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------------------------------ outputs


@dataclass(frozen=True)
class Target:
    """An output path's hostile shape: how to make it, and whether the command must write it (or refuse)."""

    name: str
    make: Callable[[Path], Path]
    written_through: bool


def _symlink(tmp: Path) -> Path:
    (tmp / "real.out").write_text("old", encoding="utf-8")
    (tmp / "link.out").symlink_to(tmp / "real.out")
    return tmp / "link.out"


def _dangling(tmp: Path) -> Path:
    (tmp / "dangling.out").symlink_to(tmp / "later.out")
    return tmp / "dangling.out"


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "pipe.out")
    return tmp / "pipe.out"


def _char_device(tmp: Path) -> Path:
    os.mknod(tmp / "null.out", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    return tmp / "null.out"


def _dev_full(tmp: Path) -> Path:
    return Path("/dev/full")


def _folder(tmp: Path) -> Path:
    (tmp / "folder.out").mkdir()
    return tmp / "folder.out"


def _missing_folder(tmp: Path) -> Path:
    return tmp / "no-such-folder" / "x.out"


TARGETS = [
    Target("symlink to a file", _symlink, True),
    Target("dangling symlink", _dangling, True),
    Target("named pipe", _fifo, False),
    Target("character device (mknod)", _char_device, False),
    Target("/dev/full", _dev_full, False),
    Target("folder", _folder, False),
    Target("path in a missing folder", _missing_folder, True),
]
OUTPUT_COMMANDS = {
    "report -o": lambda results, out: ["report", str(results), "--format", "md", "-o", str(out)],
    "compare -o": lambda results, out: ["compare", str(results), str(results), "-o", str(out)],
    "labels from-results --out": lambda results, out: [
        "labels",
        "from-results",
        _judged(results.parent),
        "--out",
        str(out),
    ],
}
GRADE_TARGETS = [
    t
    for t in TARGETS
    if t.name in {"named pipe", "character device (mknod)", "folder", "path in a missing folder"}
]


def _kind(path: Path) -> int | None:
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


def check_output(command: str, target: Target, tmp: Path) -> str:
    """Run one output variant; return what went wrong ('' when handled correctly)."""
    results = _results(tmp)
    out = target.make(tmp)
    before = _kind(out)
    if command == "grade --out":
        args = [
            "grade",
            "--cases",
            str(AIRDESK),
            "--transcripts",
            str(AIRDESK / "runs" / "agent-v1.jsonl"),
            "--out",
            str(out),
        ]
    else:
        args = OUTPUT_COMMANDS[command](results, out)
    try:
        done = _cli(*args)
    except subprocess.TimeoutExpired:
        return f"blocked for over {TIMEOUT} s"
    if target.written_through:
        if done.returncode != 0:
            return f"exit {done.returncode}: {done.stderr[-300:]}"
        if before == stat.S_IFLNK and not out.is_symlink():
            return "the symlink was replaced"
        if not out.resolve().is_file() or not out.resolve().read_text(encoding="utf-8").strip():
            return "nothing written (through the symlink)"
        return ""
    if done.returncode != 2:
        return f"exit {done.returncode} (want 2): {done.stderr[-300:]}"
    if str(out) not in done.stderr or "Traceback" in done.stderr:
        return f"the error does not name {out}: {done.stderr[-300:]}"
    if _kind(out) != before:
        return f"{out} changed kind: {before} -> {_kind(out)}"
    return ""


OUTPUT_VARIANTS = [(command, target) for command in OUTPUT_COMMANDS for target in TARGETS] + [
    ("grade --out", target) for target in GRADE_TARGETS
]


OUTPUT_SWEEP = Sweep(
    name=f"{__name__}.output",
    variants=OUTPUT_VARIANTS,
    key=lambda v: f"output/{v[0]}/{v[1].name}",
    check=lambda v, folder: [p] if (p := check_output(v[0], v[1], folder)) else [],
    bounded=False,
    ids=lambda v: f"{v[0]}:{v[1].name}",
)
"""Each output variant once in the session (each runs the command line in a process of its own)."""


@OUTPUT_SWEEP.parametrize
def test_an_output_path_is_written_through_or_refused(
    variant: tuple[str, Target], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(OUTPUT_SWEEP, variant) == []


# ------------------------------------------------------------------------------------------------- inputs


def _input_fifo(tmp: Path, name: str = "in.jsonl") -> Path:
    os.mkfifo(tmp / name)
    return tmp / name


def _input_socket(tmp: Path, name: str = "in.sock") -> Path:
    path = tmp / name
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    _SOCKETS.append(server)  # kept open while the command runs
    return path


def _input_device(tmp: Path, name: str = "") -> Path:
    if name:  # an input found in a folder by its name: a link there to the device
        (tmp / name).symlink_to("/dev/zero")
        return tmp / name
    return Path("/dev/zero")  # endless: reading it would never finish


_SOCKETS: list[socket.socket] = []
INPUTS = {"named pipe": _input_fifo, "socket": _input_socket, "character device": _input_device}
INPUT_COMMANDS = {
    "report": lambda results, bad, tmp: ["report", str(bad)],
    "compare": lambda results, bad, tmp: ["compare", str(results), str(bad)],
    "view": lambda results, bad, tmp: ["view", str(bad), "--out", str(tmp / "viewer")],
    "grade --transcripts": lambda results, bad, tmp: [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(bad),
        "--out",
        str(tmp / "r.jsonl"),
    ],
    "grade --config": lambda results, bad, tmp: [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(results),
        "--config",
        str(bad),
        "--out",
        str(tmp / "r.jsonl"),
    ],
    "grade --jury": lambda results, bad, tmp: [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(results),
        "--jury",
        str(bad),
        "--out",
        str(tmp / "r.jsonl"),
    ],
    "cassette stats": lambda results, bad, tmp: ["cassette", "stats", str(bad)],
    "calibrate-plan labels": lambda results, bad, tmp: ["labels", "plan", str(bad)],
    "labels from-results": lambda results, bad, tmp: [
        "labels",
        "from-results",
        str(bad),
        "--out",
        str(tmp / "j.csv"),
    ],
    "labels reconcile": lambda results, bad, tmp: ["labels", "reconcile", str(bad), str(results)],
    "labels page": lambda results, bad, tmp: [
        "labels",
        "page",
        str(bad),
        "--expert",
        "ann",
        "--out",
        str(tmp / "page.html"),
    ],
    "trust --records (a record)": lambda results, bad, tmp: [
        "judge",
        "trust",
        "abc",
        "--records",
        str(bad.parent),
    ],
    "judge refine labels": lambda results, bad, tmp: [
        *refine_example_args(bad, seed=False),
        "--out",
        str(tmp / "refine"),
    ],
    "judge canary-set results": lambda results, bad, tmp: [
        "judge",
        "canary-set",
        str(bad),
        "--transcripts",
        str(AIRDESK / "runs" / "agent-v1.jsonl"),
        "--cases",
        str(AIRDESK),
        "--config",
        str(AIRDESK / "judge.yaml"),
        "--cassette",
        str(AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"),
        "--records",
        str(tmp),
    ],
    "import otel": lambda results, bad, tmp: ["import", "otel", str(bad), "--out", str(tmp / "t.jsonl")],
    "import openai": lambda results, bad, tmp: ["import", "openai", str(bad), "--out", str(tmp / "t.jsonl")],
}
#: Inputs found inside a folder by their name: (subfolder, file name) the hostile file is made as.
INPUT_PLACES = {"trust --records (a record)": ("records", "x.json")}


def check_input(command: str, kind: str, tmp: Path) -> str:
    """Run one input variant; return what went wrong ('' when handled correctly)."""
    results = _results(tmp)
    if command in INPUT_PLACES:
        folder, name = INPUT_PLACES[command]
        (tmp / folder).mkdir()
        bad = INPUTS[kind](tmp / folder, name)
    else:
        bad = INPUTS[kind](tmp)
    try:
        done = _cli(*INPUT_COMMANDS[command](results, bad, tmp))
    except subprocess.TimeoutExpired:
        return f"blocked for over {TIMEOUT} s"
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()
    if done.returncode != 2:
        return f"exit {done.returncode} (want 2): {done.stderr[-300:]}"
    if str(bad) not in done.stderr or "not a regular file" not in done.stderr:
        return f"the error does not name {bad} and what it is: {done.stderr[-300:]}"
    return ""


INPUT_VARIANTS = [(command, kind) for command in INPUT_COMMANDS for kind in INPUTS]


INPUT_SWEEP = Sweep(
    name=f"{__name__}.input",
    variants=INPUT_VARIANTS,
    key=lambda v: f"input/{v[0]}/{v[1]}",
    check=lambda v, folder: [p] if (p := check_input(v[0], v[1], folder)) else [],
    bounded=False,
    ids=lambda v: f"{v[0]}:{v[1]}",
)
"""Each input variant once in the session (each runs the command line in a process of its own)."""


@INPUT_SWEEP.parametrize
def test_an_input_that_is_not_a_regular_file_is_refused_at_once(
    variant: tuple[str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(INPUT_SWEEP, variant) == []


# ------------------------------------------------------------------------------------------ standard output


def check_stdout(variant: str, tmp: Path) -> str:
    """Run one standard-output variant; return what went wrong ('' when handled correctly)."""
    results = _results(tmp)
    args = (
        ["compare", str(results), str(results)] if variant.startswith("compare") else ["report", str(results)]
    )
    if variant.endswith("/dev/full"):
        with open("/dev/full", "w") as full:
            done = _cli(*args, stdout=full.fileno())
        if done.returncode != 2:
            return f"exit {done.returncode} (want 2): {done.stderr[-300:]}"
        if "error: cannot write to standard output: No space left on device" not in done.stderr:
            return f"no clear error line: {done.stderr[-300:]}"
        if "Traceback" in done.stderr or "unexpectedly" in done.stderr or done.stderr.count("error:") != 1:
            return f"more than one clear line: {done.stderr[-300:]}"
        return ""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away, as `| head` does after its lines
    try:
        done = _cli(*args, stdout=write_end)
    finally:
        os.close(write_end)
    if done.returncode != 141:
        return f"exit {done.returncode} (want 141): {done.stderr[-300:]}"
    if done.stderr:
        return f"not quiet: {done.stderr[-300:]}"
    return ""


STDOUT_VARIANTS = [
    "report > /dev/full",
    "compare > /dev/full",
    "report | closed pipe",
    "compare | closed pipe",
]


STDOUT_SWEEP = Sweep(
    name=f"{__name__}.stdout",
    variants=STDOUT_VARIANTS,
    key=lambda v: f"stdout/{v}",
    check=lambda v, folder: [p] if (p := check_stdout(v, folder)) else [],
    bounded=False,
    ids=str,
)
"""Each standard-output variant once in the session (each runs the command line in its own process)."""


@STDOUT_SWEEP.parametrize
def test_a_failed_standard_output_is_a_clear_exit(variant: str, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(STDOUT_SWEEP, variant) == []


# --------------------------------------------------------------------------------------------------- count


SWEEPS = (OUTPUT_SWEEP, INPUT_SWEEP, STDOUT_SWEEP)


@OUTPUT_SWEEP.counted
@INPUT_SWEEP.counted
@STDOUT_SWEEP.counted
def test_count_of_hostile_paths_tried_and_handled(sweep_store: SweepStore) -> None:
    tallies = [sweep_store.tally(sweep) for sweep in SWEEPS]
    tried, handled = sum(t.tried for t in tallies), sum(t.handled for t in tallies)
    print(f"\nhostile output/input paths tried: {tried}, handled correctly: {handled}")
    assert tried == len(OUTPUT_VARIANTS) + len(INPUT_VARIANTS) + len(STDOUT_VARIANTS)
    assert tried == handled, [t.failures for t in tallies]
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # the device is still a device

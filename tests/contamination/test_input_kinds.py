"""``contamination scan -`` reads standard input; every other input must be a regular file (issue 33).

The real command line runs in a child process with a timeout, as a user (or CI job) would run it. A named
pipe with no writer, a ``/dev/fd/N`` pipe (what ``<(zcat ...)`` gives) with a writer that never writes,
``/dev/zero`` and a folder used to be opened with a plain ``open()``: the pipe blocked forever and the
device was read forever. They are refused at once with exit 2, naming the path and what it is; for an
export the message says to pipe it into ``scan -``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from contamination.conftest import CASES, CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, chat
from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes, write_index

TIMEOUT = 20.0  # a refusal answers in about a second (the interpreter's start-up); a FIFO used to hang


def _cli(
    *args: str, stdin: bytes | None = None, pass_fds: tuple[int, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "judgekit.cli", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        env=env,
        pass_fds=pass_fds,
        check=False,
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    index = tmp_path / "golden.jkc"
    write_index(
        build_index(CASES, key_from_bytes(KEY_BYTES), IndexOptions()), index, key_from_bytes(KEY_BYTES)
    )
    records = [chat(CLEAN_TEXTS[0]), chat("please answer: " + DENVER), chat(CLEAN_TEXTS[1]), chat(OPENING)]
    leaked = tmp_path / "leaked.jsonl"
    leaked.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    clean = tmp_path / "clean.jsonl"
    clean.write_text("".join(json.dumps(chat(t)) + "\n" for t in CLEAN_TEXTS), encoding="utf-8")
    return {"key": key, "index": index, "leaked": leaked, "clean": clean, "tmp": tmp_path}


def _scan(p: dict[str, Path], *exports: str) -> list[str]:
    return ["contamination", "scan", *exports, "--index", str(p["index"]), "--key-file", str(p["key"])]


def _locations(report: dict[str, object]) -> list[tuple[str, int, str]]:
    leaks = report["leaks"]
    assert isinstance(leaks, list)
    return sorted(
        (x["case_id"], loc["line"], loc["case_field"]) for x in leaks for loc in x["first_locations"]
    )


def test_stdin_scan_finds_the_same_leaks_at_the_same_lines_as_the_file(files: dict[str, Path]) -> None:
    from_file = _cli(*_scan(files, str(files["leaked"])), "--format", "json")
    from_stdin = _cli(*_scan(files, "-"), "--format", "json", stdin=files["leaked"].read_bytes())
    assert from_file.returncode == 1, from_file.stderr
    assert from_stdin.returncode == 1, from_stdin.stderr
    by_file, by_stdin = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    assert (
        _locations(by_stdin)
        == _locations(by_file)
        == [
            ("gs-031", 4, "user.opening"),
            ("gs-044", 2, "input"),
        ]
    )
    assert {loc["file"] for x in by_stdin["leaks"] for loc in x["first_locations"]} == {"<stdin>"}
    assert [f["file"] for f in by_stdin["files"]] == ["<stdin>"]
    assert by_stdin["files"][0]["records"] == by_file["files"][0]["records"] == 4


def test_stdin_with_files_and_two_processes(files: dict[str, Path]) -> None:
    # Standard input is read by the parent while the worker scans the file; input order is kept.
    done = _cli(
        *_scan(files, str(files["clean"]), "-"),
        "-j",
        "2",
        "--format",
        "json",
        stdin=files["leaked"].read_bytes(),
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [f["file"] for f in report["files"]] == [str(files["clean"]), "<stdin>"]
    assert _locations(report) == [("gs-031", 4, "user.opening"), ("gs-044", 2, "input")]


def test_a_clean_export_on_stdin_exits_0(files: dict[str, Path]) -> None:
    done = _cli(*_scan(files, "-"), stdin=files["clean"].read_bytes())
    assert done.returncode == 0, done.stderr
    assert b"CLEAN" in done.stdout


def test_an_over_long_line_on_stdin_makes_the_scan_incomplete(files: dict[str, Path]) -> None:
    long_line = json.dumps(chat("x " * 1000)).encode() + b"\n"
    stdin = files["clean"].read_bytes() + long_line
    done = _cli(*_scan(files, "-"), "--max-line-mb", "0.001", "--format", "json", stdin=stdin)
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert [(p["file"], p["line"], p["kind"]) for p in report["problems"]] == [
        ("<stdin>", 5, "line_too_long")
    ]
    assert report["files"][0]["complete"] is False


def test_stdin_twice_is_refused(files: dict[str, Path]) -> None:
    done = _cli(*_scan(files, "-", "-"), stdin=files["clean"].read_bytes())
    assert done.returncode == 2
    assert b"standard input" in done.stderr
    assert b"once" in done.stderr
    assert b"Traceback" not in done.stderr


def test_compressed_stdin_is_refused_with_the_pipe_to_use(files: dict[str, Path]) -> None:
    import gzip

    done = _cli(*_scan(files, "-"), stdin=gzip.compress(files["clean"].read_bytes()))
    assert done.returncode == 2
    assert b"gzip" in done.stderr
    assert b"zcat" in done.stderr


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "export.jsonl")
    return tmp / "export.jsonl"


def _folder(tmp: Path) -> Path:
    (tmp / "exports").mkdir()
    return tmp / "exports"


def _zero(tmp: Path) -> Path:
    return Path("/dev/zero")


BAD: dict[str, tuple[Callable[[Path], Path], str]] = {
    "fifo": (_fifo, "named pipe"),
    "dev-zero": (_zero, "character device"),
    "folder": (_folder, "folder"),
}
# Where the bad path goes: (the command line, whether it is an export that `scan -` can read instead).
PLACES: dict[str, tuple[Callable[[dict[str, Path], Path], list[str]], bool]] = {
    "scan export": (lambda p, bad: _scan(p, str(p["clean"]), str(bad)), True),
    "scan --index": (
        lambda p, bad: [
            "contamination",
            "scan",
            str(p["clean"]),
            "--index",
            str(bad),
            "--key-file",
            str(p["key"]),
        ],
        False,
    ),
    "scan --key-file": (
        lambda p, bad: [
            "contamination",
            "scan",
            str(p["clean"]),
            "--index",
            str(p["index"]),
            "--key-file",
            str(bad),
        ],
        False,
    ),
    "index --texts": (
        lambda p, bad: [
            "contamination",
            "index",
            "--texts",
            str(bad),
            "--key-file",
            str(p["key"]),
            "--out",
            str(p["tmp"] / "o.jkc"),
        ],
        False,
    ),
    "canary --key-file": (
        lambda p, bad: ["contamination", "canary", "--key-file", str(bad), "--set-name", "s"],
        False,
    ),
}
VARIANTS = [
    (place, kind) for place in PLACES for kind in BAD if not (kind == "folder" and "export" not in place)
]


@pytest.mark.parametrize(("place", "kind"), VARIANTS, ids=[f"{p}:{k}" for p, k in VARIANTS])
def test_an_input_that_is_not_a_regular_file_is_refused_at_once(
    place: str, kind: str, files: dict[str, Path]
) -> None:
    make, words = BAD[kind]
    bad = make(files["tmp"])
    command, is_export = PLACES[place]
    started = time.monotonic()
    done = _cli(*command(files, bad))
    assert time.monotonic() - started < TIMEOUT
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    for part in (str(bad), words, "not a regular file"):
        assert part in err, err
    assert "Traceback" not in err
    if is_export and kind != "folder":
        assert "judgekit contamination scan -" in err, err
    assert not (files["tmp"] / "o.jkc").exists()


def test_a_dev_fd_pipe_whose_writer_never_writes_is_refused(files: dict[str, Path]) -> None:
    # What `scan <(slow-command)` hands over: /dev/fd/N, a pipe. The old code waited on it forever.
    read_end, write_end = os.pipe()
    try:
        done = _cli(*_scan(files, f"/dev/fd/{read_end}"), pass_fds=(read_end,))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    for part in (f"/dev/fd/{read_end}", "named pipe", "zcat", "judgekit contamination scan -"):
        assert part in err, err

"""Every input judgekit reads goes through ``judgekit.io.documents`` (issue 33: FIFOs and devices refused).

An AST scan of ``src/judgekit`` finds every raw read primitive (``Path.read_bytes``, ``Path.read_text``,
builtin ``open`` or ``Path.open`` in a read mode, ``os.open`` without a write flag). Outside
``io/documents.py`` (the readers: ``read_input``, ``open_input``, ``read_regular``, ``open_regular`` and
their text variants, which refuse a FIFO, socket or device at once) and ``io/atomic.py`` (which reads its
own lock and tail) only the entries of :data:`ALLOWED` may use one, each with its reason; a new reader that
could wait forever on a named pipe fails here, and so does an entry no longer used.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import open_mode, primitives_outside

SRC = Path(__file__).resolve().parents[2] / "src" / "judgekit"
#: The modules that read: io/filekind (the one open that refuses a FIFO, socket or device on the descriptor),
#: io/documents (every reader built on it) and io/atomic (its own lock and tail).
THE_READERS = {SRC / "io" / "filekind.py", SRC / "io" / "documents.py", SRC / "io" / "atomic.py"}

#: (module path relative to src/judgekit, primitive) -> why it may read without io/documents.
ALLOWED: dict[tuple[str, str], str] = {
    ("golden/sample.py", "read_text"): "the review sheet's HTML template, a package resource (files(...))",
    ("golden/label_page.py", "read_text"): "the labelling page's template and script, package resources",
    ("reports/calibration_report.py", "read_text"): "the report's CSS template, shipped in the package",
    ("reports/viewer.py", "read_text"): "the viewer's JavaScript and CSS assets, package resources",
    ("io/folders.py", "os.open"): "opens each file it just staged (written by io/atomic) to fsync it",
    ("runner.py", "os.open"): "--resume opens --out to lock it; output_target refused a path that is not a "
    "regular file just before",
}

_WRITE_MODES = frozenset("wax")
_METHOD_PRIMITIVES = {"read_text", "read_bytes"}
_OPEN_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")


def _mode_reads(node: ast.Call, position: int) -> bool:
    """Whether an ``open``-like call's mode (positional ``position`` or ``mode=``) may read."""
    mode = open_mode(node, position)
    return mode is None or not (_WRITE_MODES & set(mode)) or "+" in mode  # computed: assume it may read


def raw_reads(path: Path) -> list[tuple[int, str]]:
    """The raw read primitives in one module: (line, primitive)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name: str | None = None
        if isinstance(func, ast.Name):
            if func.id == "open" and _mode_reads(node, 1):
                name = "open"
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr in _METHOD_PRIMITIVES:
                name = func.attr
            elif func.attr == "open" and owner == "os":
                if not any(flag in ast.unparse(node) for flag in _OPEN_WRITE_FLAGS):
                    name = "os.open"
            elif func.attr == "open" and owner != "webbrowser" and _mode_reads(node, 0):
                name = ".open"
        if name is not None:
            found.append((node.lineno, name))
    return found


def test_the_scan_finds_each_kind_of_raw_read(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\n"
        "p.read_text()\np.read_bytes()\nopen(p)\nopen(p, 'rb')\nopen(p, mode='r')\nopen(p, 'w')\n"
        "p.open()\np.open('rb')\np.open(encoding='utf-8')\np.open('a')\nopen(p, 'r+')\n"
        "os.open(p, os.O_RDONLY)\nos.open(p, os.O_WRONLY | os.O_CREAT)\nopen(p, m)\n"
        "webbrowser.open(url)\np.write_text('x')\n",
        encoding="utf-8",
    )
    assert [name for _, name in raw_reads(sample)] == [
        "read_text",
        "read_bytes",
        "open",
        "open",
        "open",
        ".open",
        ".open",
        ".open",
        "open",
        "os.open",
        "open",
    ]


def test_every_file_read_goes_through_io_documents() -> None:
    unexpected, stale = primitives_outside(SRC, raw_reads, skip=THE_READERS, allowed=ALLOWED)
    assert unexpected == [], (
        "read input files through judgekit.io.documents (read_input, open_input, read_regular, "
        "open_regular, read_regular_text, open_regular_text), which refuse a FIFO, socket or device at "
        "once; or add an ALLOWED entry with its reason:\n" + "\n".join(unexpected)
    )
    assert stale == [], f"stale ALLOWED entries: {stale}"


def test_an_input_file_is_read_a_buffer_at_a_time_not_a_block(tmp_path: Path) -> None:
    """A results line is kilobytes long: one read from the file fills the buffer with many lines."""
    from judgekit.io.documents import open_input
    from judgekit.io.filekind import READ_BUFFER_BYTES

    line = b'{"note": "' + b"x" * 12_000 + b'"}\n'
    path = tmp_path / "results.jsonl"
    path.write_bytes(line * 100)
    with open_input(path, "results") as handle:
        assert handle.readline() == line
        # the raw file's position: what was read from it to return that line (4 KiB blocks would stop
        # at 12,288 bytes)
        assert handle.raw.tell() == READ_BUFFER_BYTES  # type: ignore[attr-defined]
        assert handle.read() == line * 99

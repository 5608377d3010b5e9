"""Every file judgekit writes goes through ``judgekit.io.atomic`` (issue 33: one redacting writer).

An AST scan of ``src/judgekit`` finds every raw write primitive (``open`` for writing, ``Path.write_text``,
``os.write``, ``os.replace``, ``tempfile.mkstemp``, ``shutil.copy``...). Outside ``io/atomic.py`` only the
entries of :data:`ALLOWED` may use one, each with its reason; a new writer that skips the redactor (or the
refusal of devices and FIFOs as outputs) fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import open_mode, primitives_outside

SRC = Path(__file__).resolve().parents[2] / "src" / "judgekit"
THE_WRITER = SRC / "io" / "atomic.py"

#: (module path relative to src/judgekit, primitive) -> why it may write without io/atomic.
ALLOWED: dict[tuple[str, str], str] = {
    ("judges/cache.py", "os.open"): "creates the cassette's empty .lock file for flock; it holds no data",
    ("commands/output.py", "os.open"): "opens the null device to silence standard output once it failed",
    ("io/folders.py", "os.rename"): "swaps whole output folders whose files io/atomic wrote (the viewer's "
    "all-or-nothing folder); it renames, never writes content",
    ("runner.py", "tempfile.mkstemp"): "the --resume rewrite's temporary beside --out, filled through "
    "LineAppender (redacted); owned by the resume work",
    ("runner.py", "os.replace"): "renames that LineAppender-filled temporary over --out (the same path, "
    "refused earlier when it is not a regular file)",
    ("reports/run_parts.py", "os.fdopen"): "a forked report worker writes its pickled part to the pipe its "
    "parent reads: process to process, no file (the parent renders the report and writes it through "
    "io.atomic)",
}

_WRITE_MODES = frozenset("wax+")
_MODULE_PRIMITIVES = {
    "os": {
        "write",
        "replace",
        "rename",
        "renames",
        "link",
        "symlink",
        "truncate",
        "ftruncate",
        "open",
        "fdopen",
    },
    "shutil": {"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"},
}
_METHOD_PRIMITIVES = {"write_text", "write_bytes"}
_OPEN_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")


def _mode_writes(node: ast.Call, position: int) -> bool:
    """Whether an ``open``-like call's mode (positional ``position`` or ``mode=``) writes."""
    mode = open_mode(node, position)
    return mode is None or bool(_WRITE_MODES & set(mode))  # computed: assume it may write


def raw_writes(path: Path) -> list[tuple[int, str]]:
    """The raw write primitives in one module: (line, primitive)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imported: dict[str, str] = {}  # local name -> "module.name" for `from os import replace`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _MODULE_PRIMITIVES:
            for alias in node.names:
                if alias.name in _MODULE_PRIMITIVES[node.module]:
                    imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name: str | None = None
        if isinstance(func, ast.Name):
            if func.id == "open" and _mode_writes(node, 1):
                name = "open"
            elif func.id in imported:
                name = imported[func.id]
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in _MODULE_PRIMITIVES and func.attr in _MODULE_PRIMITIVES[owner]:
                name = f"{owner}.{func.attr}"
            elif func.attr in _METHOD_PRIMITIVES:
                name = func.attr
            elif func.attr == "open" and owner not in {"os", "webbrowser"} and _mode_writes(node, 0):
                name = ".open"
        if name == "os.open" and not any(flag in ast.unparse(node) for flag in _OPEN_WRITE_FLAGS):
            continue  # opened for reading
        if name == "os.fdopen" and not _mode_writes(node, 1):
            continue
        if name is not None:
            found.append((node.lineno, name))
    return found


def test_the_scan_finds_each_kind_of_raw_write(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, shutil, tempfile\nfrom os import replace as swap\n"
        "open(p, 'w')\nopen(p)\np.open('ab')\np.open()\np.write_text('x')\np.write_bytes(b'')\n"
        "os.write(fd, b'')\nos.replace(a, b)\nswap(a, b)\nos.rename(a, b)\ntempfile.mkstemp()\n"
        "shutil.copy(a, b)\nshutil.move(a, b)\nos.open(p, os.O_RDONLY)\n"
        "os.open(p, os.O_WRONLY | os.O_CREAT)\n"
        "os.fdopen(fd, 'rb')\nos.fdopen(fd, 'wb')\nopen(p, mode=m)\n",
        encoding="utf-8",
    )
    assert [name for _, name in raw_writes(sample)] == [
        "open",
        ".open",
        "write_text",
        "write_bytes",
        "os.write",
        "os.replace",
        "os.replace",
        "os.rename",
        "tempfile.mkstemp",
        "shutil.copy",
        "shutil.move",
        "os.open",
        "os.fdopen",
        "open",
    ]


def test_every_file_write_goes_through_io_atomic() -> None:
    unexpected, stale = primitives_outside(SRC, raw_writes, skip={THE_WRITER}, allowed=ALLOWED)
    assert unexpected == [], (
        "write files through judgekit.io.atomic (write_atomic, LineAppender, append_whole, create_new, "
        "move_file), which redacts and refuses devices; or add an ALLOWED entry with its reason:\n"
        + "\n".join(unexpected)
    )
    assert stale == [], f"stale ALLOWED entries: {stale}"


def test_the_writer_itself_uses_the_primitives() -> None:
    names = {name for _, name in raw_writes(THE_WRITER)}
    assert {"os.replace", "tempfile.mkstemp", "os.write"} <= names

"""Hostile case sets and exports: paths that escape the set, versions that are not integers, review markers
hidden from the guard, export lines over the limit.

Issue 21, part 5. Every variant is generated (functions below make them) and checked for the *right*
outcome, not only for the absence of a crash:

* **path escapes** (``initial_state``, ``reference_solution``, ``expected_state.snapshot``; the manifest's
  ``cases_dir`` and ``candidates_dir``): absolute paths, ``..``, symbolic links out of the set (to a file,
  to a folder, chained, looping), encoded and look-alike dots, Windows-style and network paths, NUL and
  other control characters, over-long paths. Each must be a located problem (file, line, field) when the
  set loads, and the state provider must never open the file (the file outside the set is a valid state,
  so reading it would show). Paths inside the set, and inside an ``allowed_roots`` folder, still load.
* **versions and other integer fields** given as booleans, floats, text, null, lists: refused, located.
* **review-guard bypasses**: every control (Cc) and format (Cf) character before ``REVIEW:``, inside it,
  fullwidth and other compatibility forms, lower and mixed case, spaces before the colon: each reviewed
  case with such an acceptance is refused, the same among candidates is allowed.
* **over-long export lines**: at, just under and just over ``--max-line-mb`` (the default 32 MiB, and a
  small limit so that many lines share a block), first, middle and last lines, without a final newline,
  compressed: each is reported with its file, line, length and limit, its file marked incomplete and the
  scan's exit code 2, while the other lines are still scanned.

Both the library (``load_case_set``, ``StateProvider``, ``scan_files``) and the command line
(``judgekit cases check``, ``judgekit contamination scan``, text and JSON) are exercised; the variants that
once raised or could hang (symbolic link loops, over-long names, 33 MiB lines) run under a time and memory
bound.
The last test counts the variants tried and handled correctly.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
import unicodedata
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from contamination.conftest import CASES, CLEAN_TEXTS, DENVER, KEY_BYTES, chat
from hostile.bounded import run_bounded
from hostile.sweep import Sweep, SweepStore
from judgekit.cases import PATH_MAX_CHARS, Case, starts_with_review_marker
from judgekit.caseset import MANIFEST_NAME, CaseSet, load_case_set
from judgekit.cli import main
from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.report import build_report
from judgekit.contamination.scan import DEFAULT_MAX_LINE_BYTES, ScanOptions
from judgekit.state.provider import SET_MANIFEST_NAME, StateProvider
from judgekit.transcript import Transcript

WORLD = {"orders": {"O-1": {"status": "paid"}}}
SECRET = {"secrets": {"S-1": {"value": "outside the set"}}}
"""The state outside the set: a valid state, so that a provider that read it would return a snapshot."""

Check = Callable[[Path], "str | None"]
"""A variant's check: builds its input under the folder given, returns ``None`` when handled correctly, else
what went wrong."""


@dataclass(frozen=True)
class Variant:
    """One hostile input and the check of its outcome.

    Attributes:
        kind: The group it belongs to (``path``, ``manifest``, ``integer``, ``review``, ``line``, ``cli``).
        name: What the variant is (unique).
        check: Builds the input and returns ``None`` when the outcome is right, else the reason.
    """

    kind: str
    name: str
    check: Check


def _cli(argv: list[str]) -> tuple[int, str, str]:
    """Run ``judgekit`` in-process; returns ``(exit code, standard output, standard error)``."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _no_bug(out: str, err: str) -> str | None:
    text = out + err
    if "Traceback" in text or "this is a bug" in text:
        return f"a traceback or internal error: {text[-600:]}"
    return None


# ------------------------------------------------------------------------------------------ case sets


def _set(tmp: Path, *, manifest: str | None = None) -> tuple[Path, Path]:
    """A set root with a fixture and a reference transcript, and a folder outside it holding a valid state.

    Returns:
        ``(root, outside)``.
    """
    root = tmp / "golden"
    (root / "cases").mkdir(parents=True)
    (root / "fixtures").mkdir()
    (root / "fixtures" / "base.json").write_text(json.dumps(WORLD), encoding="utf-8")
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps(SECRET), encoding="utf-8")
    (outside / "cases").mkdir()
    (outside / "cases" / "stolen.yaml").write_text("id: STOLEN-1\ninput: hi\n", encoding="utf-8")
    if manifest is not None:
        (root / MANIFEST_NAME).write_text(manifest, encoding="utf-8")
    return root, outside


def _case_yaml(field: str, path: str) -> tuple[str, int]:
    """A case naming ``path`` in ``field``; returns the YAML and the line the path is on."""
    value = _yaml_quoted(path)
    if field == "expected_state.snapshot":
        return f"id: GS-1\ninput: hello\nexpected_state:\n  snapshot: {value}\n", 4
    return f"id: GS-1\ninput: hello\n{field}: {value}\n", 3


def _yaml_quoted(text: str) -> str:
    """A YAML double-quoted scalar holding exactly ``text``, every character but printable ASCII escaped."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _problems_at(case_set: CaseSet, field: str) -> list[str]:
    return [f"{p.file}:{p.line}: {p.message}" for p in case_set.problems if p.field == field]


def _never_read(root: Path, field: str, path: str) -> str | None:
    """The provider, given the same path in a case built directly (no set loading), refuses to read it."""
    try:
        if field == "expected_state.snapshot":
            case = Case.model_validate({"id": "GS-1", "input": "hi", "expected_state": {"snapshot": path}})
        else:
            case = Case.model_validate({"id": "GS-1", "input": "hi", field: path})
    except ValueError:
        return None  # refused by the model itself: nothing to read
    provider = StateProvider(root)
    transcript = Transcript.model_validate(
        {"case_id": "GS-1", "messages": [{"role": "user", "content": "hi"}]}
    )
    if field == "initial_state":
        got: Any = provider.initial(case, transcript)[1]
    elif field == "expected_state.snapshot":
        got = provider.expected(case)
    else:
        got = provider.reference(case)
    if not isinstance(got, str):
        return f"the provider read {path!r} for {field}: {got!r}"[:300]
    return None


@dataclass(frozen=True)
class PathCase:
    """How a path variant is set up: the text written, and what to make on disk first."""

    name: str
    text: str
    setup: Callable[[Path, Path], None] | None = None
    expect: tuple[str, ...] = ("outside the case set's root",)
    """Any of these in the problem's message is the right refusal."""


def _link(target: Path, link: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def _chain(root: Path, outside: Path) -> None:
    """``fixtures/a.json`` -> ``fixtures/b.json`` -> the state outside the set."""
    _link(root / "fixtures" / "b.json", root / "fixtures" / "a.json")
    _link(outside / "secret.json", root / "fixtures" / "b.json")


def _loop(root: Path, outside: Path) -> None:
    """``fixtures/loop1`` and ``fixtures/loop2``, each a link to the other."""
    _link(root / "fixtures" / "loop2", root / "fixtures" / "loop1")
    _link(root / "fixtures" / "loop1", root / "fixtures" / "loop2")


NOT_FOUND = ("not found",)


def path_cases() -> list[PathCase]:
    """Every path text that must not lead a case out of its set (and the look-alikes that stay inside)."""
    out = [
        PathCase("absolute /etc/passwd", "/etc/passwd"),
        PathCase("absolute to a valid state outside", "{outside}/secret.json"),
        PathCase("absolute root /", "/"),
        PathCase("dot-dot to a valid state outside", "../outside/secret.json"),
        PathCase("dot-dot after a real folder", "fixtures/../../outside/secret.json"),
        PathCase("dot-dot deep to /etc/passwd", "../" * 24 + "etc/passwd"),
        PathCase("dot-dot alone", ".."),
        PathCase("double slashes and dot-dot", "fixtures//..//..//outside//secret.json"),
        PathCase("dot segments and dot-dot", "./fixtures/./../.././outside/secret.json"),
        PathCase("trailing slash dot-dot", "fixtures/../../outside/"),
        PathCase(
            "symbolic link file out of the set",
            "fixtures/link.json",
            lambda root, outside: _link(outside / "secret.json", root / "fixtures" / "link.json"),
        ),
        PathCase(
            "symbolic link folder out of the set",
            "fixtures/shared/secret.json",
            lambda root, outside: _link(outside, root / "fixtures" / "shared"),
        ),
        PathCase(
            "symbolic link chain out of the set",
            "fixtures/a.json",
            _chain,
        ),
        PathCase(
            "symbolic link to /etc/passwd",
            "fixtures/passwd.json",
            lambda root, outside: _link(Path("/etc/passwd"), root / "fixtures" / "passwd.json"),
        ),
        PathCase(
            "symbolic link loop",
            "fixtures/loop1/x.json",
            _loop,
            ("cannot be resolved", "outside the case set's root", "not found"),
        ),
        PathCase("file URL", "file:///etc/passwd", None, ("is a URL",)),
        PathCase("http URL", "http://example.com/state.json", None, ("is a URL",)),
        PathCase("Windows dot-dot", "..\\..\\outside\\secret.json", None, ("'\\'",)),
        PathCase("Windows drive backslash", "C:\\Windows\\win.ini", None, ("'\\'",)),
        PathCase("Windows drive slash", "C:/Windows/win.ini", None, ("Windows drive path",)),
        PathCase("Windows drive relative", "c:secret.json", None, ("Windows drive path",)),
        PathCase("UNC share", "\\\\server\\share\\secret.json", None, ("'\\'",)),
        PathCase("UNC share with slashes", "//server/share/secret.json", None, ("starts with '//'",)),
        PathCase("Windows device path", "\\\\?\\C:\\secret.json", None, ("'\\'",)),
        PathCase("mixed separators", "fixtures\\..\\..\\outside/secret.json", None, ("'\\'",)),
        PathCase("NUL then dot-dot", "fixtures/base.json\x00/../../outside/secret.json", None, ("U+0000",)),
        PathCase("NUL alone", "\x00", None, ("U+0000",)),
        PathCase("newline", "fixtures/base.json\n../../outside/secret.json", None, ("U+000A",)),
        PathCase("escape character", "\x1b[2Jfixtures/base.json", None, ("U+001B",)),
        PathCase("DEL character", "fixtures/\x7fbase.json", None, ("U+007F",)),
        PathCase("C1 control", "fixtures/\x85base.json", None, ("U+0085",)),
        PathCase("over-long path", "a/" * (PATH_MAX_CHARS // 2 + 1), None, ("PATH_MAX_CHARS",)),
        PathCase(
            "over-long name", "fixtures/" + "n" * 300 + ".json", None, ("not found", "cannot be resolved")
        ),
        # Encodings and look-alikes are not decoded by the filesystem: they name files inside the set that do
        # not exist, and never reach outside.
        PathCase("percent-encoded dot-dot", "%2e%2e/outside/secret.json", None, NOT_FOUND),
        PathCase("percent-encoded slash", "..%2f..%2foutside%2fsecret.json", None, NOT_FOUND),
        PathCase("double-encoded dot-dot", "%252e%252e/outside/secret.json", None, NOT_FOUND),
        PathCase("overlong UTF-8 dot-dot as text", "%c0%ae%c0%ae/outside/secret.json", None, NOT_FOUND),
        PathCase("two-dot leader look-alike", "\u2025/outside/secret.json", None, NOT_FOUND),
        PathCase("fullwidth dots look-alike", "\uff0e\uff0e/outside/secret.json", None, NOT_FOUND),
        PathCase("fullwidth solidus look-alike", "..\uff0foutside\uff0fsecret.json", None, NOT_FOUND),
        PathCase("division slash look-alike", "..\u2215outside\u2215secret.json", None, NOT_FOUND),
        PathCase("home folder tilde", "~/secret.json", None, NOT_FOUND),
        PathCase("environment variable", "$HOME/secret.json", None, NOT_FOUND),
        PathCase("the root itself", ".", None, NOT_FOUND),
    ]
    return out


CASE_PATH_FIELDS = ("initial_state", "expected_state.snapshot", "reference_solution")


def _check_case_path(pc: PathCase, field: str) -> Check:
    def check(tmp: Path) -> str | None:
        root, outside = _set(tmp)
        if pc.setup is not None:
            pc.setup(root, outside)
        text = pc.text.replace("{outside}", str(outside))
        body, line = _case_yaml(field, text)
        case_file = root / "cases" / "gs-1.yaml"
        case_file.write_text(body, encoding="utf-8")
        case_set = load_case_set(root)
        found = _problems_at(case_set, field)
        if not found:
            return f"{field}: {text!r} was accepted (problems: {[str(p) for p in case_set.problems]})"
        if not any(f.startswith(f"{case_file}:{line}: ") for f in found):
            return f"{field}: not located at {case_file}:{line}: {found}"
        if not any(any(e in f for e in pc.expect) for f in found):
            return f"{field}: the message does not say {pc.expect}: {found}"
        return _never_read(root, field, text)

    return check


def _check_bounded_path(pc: PathCase, field: str) -> Check:
    inner = _check_case_path(pc, field)

    def check(tmp: Path) -> str | None:
        bounded = run_bounded(inner, tmp, seconds=30, mb=2048)
        if bounded.outcome != "returned":
            return f"{bounded.outcome}: {bounded.error[:500]}"
        return None if bounded.value == "None" else bounded.value

    return check


def _check_inside(
    name: str, text: str, setup: Callable[[Path, Path], None] | None, manifest: str | None
) -> Check:
    """A path that stays inside the set (or an allowed root) loads, and the provider reads it."""

    def check(tmp: Path) -> str | None:
        written = manifest.replace("{outside}", str(tmp / "outside")) if manifest else None
        root, outside = _set(tmp, manifest=written)
        if setup is not None:
            setup(root, outside)
        path = text.replace("{outside}", str(outside)).replace("{root}", str(root))
        (root / "cases" / "gs-1.yaml").write_text(_case_yaml("initial_state", path)[0], encoding="utf-8")
        case_set = load_case_set(root)
        if case_set.problems:
            return f"{name}: refused though it stays inside: {[str(p) for p in case_set.problems]}"
        provider = StateProvider(case_set.root)
        transcript = Transcript.model_validate(
            {"case_id": "GS-1", "messages": [{"role": "user", "content": "hi"}]}
        )
        got = provider.initial(case_set["GS-1"].case, transcript)[0]
        if got is None:
            return (
                f"{name}: the provider did not read it: {provider.initial(case_set['GS-1'].case, transcript)}"
            )
        return None

    return check


INSIDE = [
    ("plain relative path", "fixtures/base.json", None, None),
    ("dot-dot that stays inside", "fixtures/../fixtures/base.json", None, None),
    ("absolute path inside the set", "{root}/fixtures/base.json", None, None),
    (
        "symbolic link inside the set",
        "fixtures/alias.json",
        lambda root, outside: _link(root / "fixtures" / "base.json", root / "fixtures" / "alias.json"),
        None,
    ),
    ("absolute path into an allowed root", "{outside}/secret.json", None, "allowed_roots: [{outside}]\n"),
    ("relative path into an allowed root", "../outside/secret.json", None, "allowed_roots: [../outside]\n"),
    (
        "symbolic link into an allowed root",
        "fixtures/shared/secret.json",
        lambda root, outside: _link(outside, root / "fixtures" / "shared"),
        "allowed_roots: [../outside]\n",
    ),
]


def _inside_variants() -> list[Variant]:
    """Controls: paths that stay inside the set or an allowed root still load and are read."""
    return [
        Variant("inside", f"stays inside: {name}", _check_inside(name, text, setup, manifest))
        for name, text, setup, manifest in INSIDE
    ]


# ------------------------------------------------------------------------------------------ manifests


def _check_manifest(field: str, text: str, expect: str, *, symlink: bool = False) -> Check:
    def check(tmp: Path) -> str | None:
        root, outside = _set(tmp)
        (root / "cases" / "ok.yaml").write_text("id: OK-1\ninput: hello\n", encoding="utf-8")
        if symlink:
            _link(outside / "cases", root / "linked")
        written = text.replace("{outside}", str(outside))
        (root / MANIFEST_NAME).write_text(
            f"name: hostile\n{field}: {_yaml_quoted(written)}\n", encoding="utf-8"
        )
        case_set = load_case_set(root)
        found = _problems_at(case_set, field)
        if not any(f.startswith(f"{root / MANIFEST_NAME}:2: ") for f in found):
            problems = [str(p) for p in case_set.problems]
            return f"{field}: {written!r} not refused at {MANIFEST_NAME}:2 ({problems})"
        if not any(expect in f for f in found):
            return f"{field}: the message does not say {expect!r}: {found}"
        if "STOLEN-1" in case_set:
            return f"{field}: a case from outside the set was read"
        return None

    return check


def manifest_variants() -> list[Variant]:
    """The manifest's folders leading out of the set, and unusable allowed roots."""
    outside_msg = "outside the case set's root"
    rows = [
        ("cases_dir", "../outside/cases", outside_msg, False),
        ("cases_dir", "../outside", outside_msg, False),
        ("cases_dir", "{outside}/cases", outside_msg, False),
        ("cases_dir", "/", outside_msg, False),
        ("cases_dir", "cases/../../outside/cases", outside_msg, False),
        ("cases_dir", "linked", outside_msg, True),
        ("cases_dir", "..\\outside\\cases", "'\\'", False),
        ("cases_dir", "cases\x00/../../outside", "U+0000", False),
        ("cases_dir", "file:///etc", "is a URL", False),
        ("candidates_dir", "../outside/cases", outside_msg, False),
        ("candidates_dir", "{outside}/cases", outside_msg, False),
        ("candidates_dir", "linked", outside_msg, True),
        ("candidates_dir", "C:\\candidates", "'\\'", False),
    ]
    out = [
        Variant("manifest", f"manifest {field}: {text!r}", _check_manifest(field, text, expect, symlink=link))
        for field, text, expect, link in rows
    ]

    def allowed(written: str, expect: str) -> Check:
        def check(tmp: Path) -> str | None:
            root, outside = _set(tmp)
            (root / "cases" / "ok.yaml").write_text("id: OK-1\ninput: hello\n", encoding="utf-8")
            (outside / "a-file").write_text("x", encoding="utf-8")
            text = written.replace("{outside}", str(outside))
            (root / MANIFEST_NAME).write_text(f"allowed_roots:\n  - {_yaml_quoted(text)}\n", encoding="utf-8")
            case_set = load_case_set(root)
            found = _problems_at(case_set, "allowed_roots.0")
            if not any(f.startswith(f"{root / MANIFEST_NAME}:2: ") and expect in f for f in found):
                return f"allowed_roots {text!r}: not refused with {expect!r} at line 2: {case_set.problems}"
            if case_set.allowed_roots:
                return f"allowed_roots {text!r}: kept {case_set.allowed_roots}"
            return None

        return check

    out += [
        Variant("manifest", "allowed_roots: the filesystem root", allowed("/", "filesystem root")),
        Variant(
            "manifest",
            "allowed_roots: dot-dots up to the filesystem root",
            allowed("../" * 30, "filesystem root"),
        ),
        Variant(
            "manifest", "allowed_roots: a folder that does not exist", allowed("../nowhere", "not a folder")
        ),
        Variant("manifest", "allowed_roots: a file", allowed("{outside}/a-file", "not a folder")),
        Variant("manifest", "allowed_roots: a NUL byte", allowed("../outside\x00", "U+0000")),
    ]

    def allowed_does_not_free_cases_dir(tmp: Path) -> str | None:
        root, _ = _set(tmp)
        (root / "cases" / "ok.yaml").write_text("id: OK-1\ninput: hello\n", encoding="utf-8")
        (root / MANIFEST_NAME).write_text("allowed_roots: [../outside]\ncases_dir: ../outside/cases\n")
        case_set = load_case_set(root)
        if not _problems_at(case_set, "cases_dir") or "STOLEN-1" in case_set:
            return f"cases_dir left the root through allowed_roots: {case_set.problems}"
        return None

    def symlinked_case_file(tmp: Path) -> str | None:
        root, outside = _set(tmp)
        (root / "cases" / "ok.yaml").write_text("id: OK-1\ninput: hello\n", encoding="utf-8")
        _link(outside / "cases" / "stolen.yaml", root / "cases" / "stolen.yaml")
        case_set = load_case_set(root)
        if "STOLEN-1" in case_set:
            return "a case file linked from outside the set was read"
        if not any("symbolic link to a file outside the set" in p.message for p in case_set.problems):
            return f"the linked case file was not reported: {case_set.problems}"
        return None

    out += [
        Variant("manifest", "allowed_roots does not free cases_dir", allowed_does_not_free_cases_dir),
        Variant("manifest", "a case file that is a symbolic link out of the set", symlinked_case_file),
    ]
    return out


# ------------------------------------------------------------------------------------------ integers


def _check_scalar(body: str, field: str, line: int, expect: str, *, manifest: str | None = None) -> Check:
    def check(tmp: Path) -> str | None:
        root = tmp / "golden"
        root.mkdir()
        case_file = root / "gs-1.yaml"
        case_file.write_text(body, encoding="utf-8")
        where = case_file
        if manifest is not None:
            (root / MANIFEST_NAME).write_text(manifest, encoding="utf-8")
            where = root / MANIFEST_NAME
        case_set = load_case_set(root)
        found = [str(p) for p in case_set.problems if p.field == field]
        if not any(
            f.startswith(f"{where}:{line}: {field}: ") and any(e in f for e in expect.split("|"))
            for f in found
        ):
            problems = [str(p) for p in case_set.problems]
            return f"{field}: not refused with {expect!r} at {where}:{line}: {problems}"
        return None

    return check


BAD_INTEGERS = [
    ("true", "found boolean true (booleans are not integers)"),
    ("false", "found boolean false (booleans are not integers)"),
    ("yes", "found boolean true"),  # YAML 1.1 reads yes as a boolean
    ("on", "found boolean true"),
    ("1.0", "found number 1.0"),
    ("2.5", "found number 2.5"),
    ("1e3", "found string '1e3'"),
    (".inf", "found number inf|is not finite"),  # the document reader may refuse it first
    (".nan", "found number nan|is not finite"),
    ('"2"', "found string '2' (write the number without quotes)"),
    ("two", "found string 'two'"),
    ("~", "found null"),
    ("[1]", "found list"),
    ("{n: 1}", "found mapping"),
]


def integer_variants() -> list[Variant]:
    """Booleans, floats, text, null and containers where an integer belongs: version, max_calls, floors."""
    out: list[Variant] = []
    for written, expect in BAD_INTEGERS:
        out.append(
            Variant(
                "integer",
                f"version: {written}",
                _check_scalar(f"id: GS-1\nversion: {written}\ninput: hello\n", "version", 2, expect),
            )
        )
        route = (
            f"id: GS-1\ninput: hello\nexpected:\n  route:\n    - tool: lookup\n      max_calls: {written}\n"
        )
        out.append(
            Variant(
                "integer",
                f"max_calls: {written}",
                _check_scalar(route, "expected.route.0.max_calls", 6, expect),
            )
        )
    for floor in ("min_per_tool", "min_per_source", "min_per_dimension"):
        for written, expect in (
            ("true", "booleans are not integers"),
            ("2.0", "found number 2.0"),
            ('"3"', "'3'"),
        ):
            out.append(
                Variant(
                    "integer",
                    f"manifest {floor}: {written}",
                    _check_scalar(
                        "id: GS-1\ninput: hello\n",
                        floor,
                        2,
                        expect,
                        manifest=f"name: s\n{floor}: {written}\n",
                    ),
                )
            )
    for written, expect in (
        ("true", "booleans are not integers"),
        ("1.0", "found number 1.0"),
        ('"1"', "'1'"),
    ):

        def json_check(tmp: Path, written: str = written, expect: str = expect) -> str | None:
            root = tmp / "golden"
            root.mkdir()
            path = root / "gs-1.json"
            path.write_text(f'{{"id": "GS-1",\n"version": {written},\n"input": "hi"}}\n', encoding="utf-8")
            found = [str(p) for p in load_case_set(root).problems]
            if not any(f.startswith(f"{path}:2: version: ") and expect in f for f in found):
                return f"JSON version {written} not refused with {expect!r} at line 2: {found}"
            return None

        out.append(Variant("integer", f"JSON case version: {written}", json_check))
    for field, body, line in (
        ("critical", "id: GS-1\nturns:\n  - user: hi\n    critical: 1\n", 4),
        (
            "from_reference",
            "id: GS-1\ninput: hi\nreference_solution: t.jsonl\nexpected_state:\n  from_reference: 1\n",
            5,
        ),
        (
            "requires_confirmation",
            "id: GS-1\ninput: hi\nexpected:\n  route:\n    - tool: x\n      requires_confirmation: 0\n",
            6,
        ),
    ):
        full = {"critical": "turns.0.critical", "from_reference": "expected_state.from_reference"}.get(
            field, "expected.route.0.requires_confirmation"
        )
        out.append(
            Variant(
                "integer",
                f"a number as a boolean: {field}",
                _check_scalar(body, full, line, "must be true or false"),
            )
        )
    return out


# ------------------------------------------------------------------------------------------ review guard


def _all_with_category(*categories: str) -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in categories]


CONTROL_AND_FORMAT = _all_with_category("Cc", "Cf")
"""Every control and format character of this Python's Unicode database (zero-width space, BOM, bidi marks,
tags, soft hyphen...)."""


def review_texts() -> list[tuple[str, str]]:
    """Acceptance texts that start with the review marker, however disguised: ``(name, text)`` pairs."""
    out = [
        (f"U+{ord(ch):04X} {unicodedata.name(ch, 'control')} before", f"{ch}REVIEW: check it")
        for ch in CONTROL_AND_FORMAT
    ]
    out += [
        ("zero-width space inside the word", "RE\u200bVIEW: check it"),
        ("soft hyphen inside the word", "REV\u00adIEW: check it"),
        ("zero-width joiner before the colon", "REVIEW\u200d: check it"),
        ("three zero-width characters and a BOM", "\u200b\u200c\u200d\ufeffREVIEW: check it"),
        ("fullwidth letters and colon", "\uff32\uff25\uff36\uff29\uff25\uff37\uff1a check it"),
        ("fullwidth colon only", "REVIEW\uff1a check it"),
        ("small colon", "REVIEW\ufe55 check it"),
        ("presentation-form colon", "REVIEW\ufe13 check it"),
        (
            "mathematical bold letters",
            "\U0001d411\U0001d404\U0001d415\U0001d408\U0001d404\U0001d416: check it",
        ),
        ("circled letters", "\u24c7\u24ba\u24cb\u24be\u24ba\u24cc: check it"),
        ("lower case", "review: check it"),
        ("title case", "Review: check it"),
        ("mixed case", "rEvIeW: check it"),
        ("space before the colon", "REVIEW : check it"),
        ("tab before the colon", "REVIEW\t: check it"),
        ("leading spaces", "   REVIEW: check it"),
        ("leading no-break space", "\u00a0REVIEW: check it"),
        ("leading ideographic space", "\u3000REVIEW: check it"),
        ("leading line separator", "\u2028REVIEW: check it"),
        ("leading newline", "\nREVIEW: check it"),
        ("leading combining acute accent", "\u0301REVIEW: check it"),
        ("combining marks on the letters", "R\u0301E\u0300VIEW: check it"),
        ("precomposed accented R", "\u0154EVIEW: check it"),
        ("variation selector", "\ufe0fREVIEW: check it"),
        ("Hangul filler", "\u3164REVIEW: check it"),
        ("halfwidth Hangul filler", "\uffa0REVIEW: check it"),
        ("tag characters", "\U000e0001\U000e0052REVIEW: check it"),
        ("private-use character", "\ue000REVIEW: check it"),
        ("unassigned code point", "\U000e0080REVIEW: check it"),
        ("right-to-left override", "\u202eREVIEW: check it"),
        ("Cyrillic E twice", "R\u0415VI\u0415W: check it"),
        ("Cyrillic I and lower-case e", "rev\u0456ew: check it"),
        ("Greek Rho, Epsilon and Iota", "\u03a1\u0395V\u0399\u0395W: check it"),
        ("Cherokee R", "\u13a1EVIEW: check it"),
        ("Cyrillic We", "REVIE\u051c: check it"),
    ]
    # Every capital letter of the Cyrillic and Greek blocks in place of the first E: a mixed-script word.
    out += [
        (f"{unicodedata.name(ch)} for the first E", f"R{ch}VIEW: check it")
        for ch in map(chr, [*range(0x0391, 0x03AA), *range(0x0400, 0x0430)])
        if unicodedata.category(ch) == "Lu"
    ]
    return out


NOT_REVIEW = [
    ("an ordinary criterion", "Refunds exactly one of the two payments."),
    ("reviewed, not review", "REVIEWED: by legal, refunds one payment."),
    ("review later in the text", "Refunds one payment. REVIEW: none needed."),
    ("review without a colon", "Review the refund and confirm it."),
    ("preview", "PREVIEW: shows the refund before it is made."),
    ("a word in another script", "\u041e\u0442\u0432\u0435\u0442: refunds one payment."),
    ("an accented Latin word", "R\u00e9sum\u00e9: refunds one payment."),
    ("reviews, seven letters", "REVIEWS: none pending, refunds one payment."),
]


def _check_review(text: str, *, marked: bool) -> Check:
    def check(tmp: Path) -> str | None:
        root = tmp / "golden"
        (root / "candidates").mkdir(parents=True)
        body = f"id: GS-1\ninput: hello\nacceptance: {_yaml_quoted(text)}\n"
        (root / "gs-1.yaml").write_text(body, encoding="utf-8")
        (root / "candidates" / "c-1.yaml").write_text(body.replace("GS-1", "C-1"), encoding="utf-8")
        case_set = load_case_set(root)
        found = [str(p) for p in case_set.problems if p.field == "acceptance"]
        if "GS-1" not in case_set or "C-1" not in case_set:
            return f"{text!r}: the case did not load: {[str(p) for p in case_set.problems]}"
        if marked:
            if not any(
                f.startswith(f"{root / 'gs-1.yaml'}:3: acceptance: ") and "REVIEW:" in f for f in found
            ):
                return f"{text!r}: a reviewed case passed the review guard: {found}"
            if any("c-1.yaml" in f for f in found):
                return f"{text!r}: refused among candidates too: {found}"
            if not case_set["GS-1"].case.is_unreviewed:
                return f"{text!r}: Case.is_unreviewed is false"
        elif found or case_set["GS-1"].case.is_unreviewed:
            return f"{text!r}: an ordinary criterion was taken for a review marker: {found}"
        return None

    return check


def review_variants() -> list[Variant]:
    """Every disguised marker must be caught; ordinary criteria must not be."""
    out = [
        Variant("review", f"review marker: {name}", _check_review(text, marked=True))
        for name, text in review_texts()
    ]
    out += [
        Variant("review", f"not a marker: {name}", _check_review(text, marked=False))
        for name, text in NOT_REVIEW
    ]
    return out


# ------------------------------------------------------------------------------------------ export lines

KEY = key_from_bytes(KEY_BYTES)
INDEX = build_index(CASES, KEY, IndexOptions())


def _line_of(length: int, *, leak: bool) -> bytes:
    """A JSON line of exactly ``length`` bytes (without its line feed), with the Denver case when ``leak``."""
    head, tail = b'{"text": "', b'"}'
    text = (DENVER + " ").encode() if leak else b""
    filler = length - len(head) - len(tail) - len(text)
    assert filler >= 0
    return head + text + b"x" * filler + tail


@dataclass(frozen=True)
class LineCase:
    """An export with one line of a given length among ordinary lines."""

    name: str
    length: int
    limit: int = DEFAULT_MAX_LINE_BYTES
    position: str = "middle"  # first, middle, last
    final_newline: bool = True
    compression: str = ""  # "", "gz"
    read_bytes: int = 4 << 20


def _export_bytes(lc: LineCase) -> tuple[bytes, int, int]:
    """The export, the long line's 1-based number, and the line number of the leak on an ordinary line."""
    ordinary = [json.dumps(chat(CLEAN_TEXTS[0])).encode(), json.dumps(chat(CLEAN_TEXTS[1])).encode()]
    leak_line = json.dumps(chat(DENVER.upper())).encode()
    long_line = _line_of(lc.length, leak=True)
    if lc.position == "first":
        lines = [long_line, *ordinary, leak_line]
    elif lc.position == "last":
        lines = [*ordinary, leak_line, long_line]
    else:
        lines = [ordinary[0], long_line, ordinary[1], leak_line]
    body = b"\n".join(lines) + (b"\n" if lc.final_newline else b"")
    return body, lines.index(long_line) + 1, lines.index(leak_line) + 1


def _scan_line_case(lc: LineCase, folder: str) -> str | None:
    """Scan the export in the library; ``None`` when the long line was handled as its length says."""
    body, long_no, leak_no = _export_bytes(lc)
    name = "export.jsonl" + (".gz" if lc.compression == "gz" else "")
    path = Path(folder) / name
    path.write_bytes(gzip.compress(body, compresslevel=1) if lc.compression == "gz" else body)
    result = scan_files([path], INDEX, KEY, ScanOptions(max_line_bytes=lc.limit, read_bytes=lc.read_bytes))
    report = build_report(result, INDEX, threshold=0.5)
    too_long = [p for p in report.problems if p.kind == "line_too_long"]
    leak_lines = sorted(loc.line or 0 for leak in report.leaks for loc in leak.first_locations)
    if leak_no not in leak_lines:
        return f"the leak on ordinary line {leak_no} was not found (leaks at {leak_lines})"
    if lc.length <= lc.limit:
        if too_long:
            return (
                f"a {lc.length}-byte line under the {lc.limit}-byte limit was refused: {too_long[0].message}"
            )
        if long_no not in leak_lines:
            return (
                f"the {lc.length}-byte line {long_no} under the limit was not scanned (leaks at {leak_lines})"
            )
        return None
    if len(too_long) != 1:
        return f"expected one line_too_long problem, got {[(p.line, p.message) for p in too_long]}"
    problem = too_long[0]
    if (problem.file, problem.line) != (str(path), long_no):
        return f"located at {problem.file}:{problem.line}, expected {path}:{long_no}"
    for needed in (f"{lc.length} bytes", f"limit of {lc.limit} bytes", "--max-line-mb"):
        if needed not in problem.message:
            return f"the message does not say {needed!r}: {problem.message}"
    if long_no in leak_lines:
        return "the over-long line was scanned although it was reported as skipped"
    (summary,) = report.files
    if summary.complete or summary.problems.get("line_too_long") != 1:
        return f"the file is not marked incomplete: {summary}"
    clean = build_report(
        type(result)(files=result.files, problems=result.problems), INDEX, threshold=0.5
    )  # the same scan without its leaks: nothing found, but not everything read
    if clean.status != "incomplete" or clean.exit_code != 2:
        return (
            f"without leaks the scan reads {clean.status} (exit {clean.exit_code}), not incomplete (exit 2)"
        )
    return None


def line_cases() -> list[LineCase]:
    """Lines at, under and over the limit: the default 32 MiB, and a small limit where lines share blocks."""
    mib = 1 << 20
    out = [
        LineCase("33 MiB line, default limit (the issue's case)", 33 * mib),
        LineCase(
            "33 MiB last line without a final newline, default limit",
            33 * mib,
            position="last",
            final_newline=False,
        ),
        LineCase("32 MiB + 1 byte, default limit", DEFAULT_MAX_LINE_BYTES + 1),
        LineCase("exactly 32 MiB, default limit (scanned)", DEFAULT_MAX_LINE_BYTES),
        LineCase("33 MiB first line, default limit", 33 * mib, position="first"),
        LineCase("33 MiB line in a gzip export, default limit", 33 * mib, compression="gz"),
    ]
    small = 4096
    for delta in (-2, -1, 0, 1, 2, 100, small, 3 * small):
        for position in ("first", "middle", "last"):
            out.append(
                LineCase(
                    f"limit {small}, line {small + delta:+d} ({position})", small + delta, small, position
                )
            )
    for delta in (0, 1, small):
        out.append(
            LineCase(
                f"limit {small}, last line {small + delta} without a final newline",
                small + delta,
                small,
                "last",
                False,
            )
        )
        out.append(
            LineCase(
                f"limit {small}, line {small + delta}, read in 1 KiB pieces",
                small + delta,
                small,
                read_bytes=1024,
            )
        )
        out.append(
            LineCase(f"limit {small}, line {small + delta}, gzip", small + delta, small, compression="gz")
        )
    return out


def _check_line(lc: LineCase) -> Check:
    def check(tmp: Path) -> str | None:
        if lc.length >= 1 << 20:
            bounded = run_bounded(_scan_line_case, lc, str(tmp), seconds=120, mb=3072)
            if bounded.outcome != "returned":
                return f"{bounded.outcome}: {bounded.error[:500]}"
            return None if bounded.value == "None" else bounded.value
        return _scan_line_case(lc, str(tmp))

    return check


def line_variants() -> list[Variant]:
    """Every over-long line reported and located; every line within the limit scanned."""
    out = [Variant("line", lc.name, _check_line(lc)) for lc in line_cases()]

    def two_long_lines_in_one_block(tmp: Path) -> str | None:
        path = tmp / "two.jsonl"
        lines = [_line_of(5000, leak=False), json.dumps(chat(DENVER)).encode(), _line_of(6000, leak=True)]
        path.write_bytes(b"\n".join(lines) + b"\n")
        result = scan_files([path], INDEX, KEY, ScanOptions(max_line_bytes=4096))
        got = sorted((p.line, p.kind) for p in result.problems)
        if got != [(1, "line_too_long"), (3, "line_too_long")]:
            return f"expected lines 1 and 3 reported, got {got}"
        if [loc.line for loc in result.leaks["gs-044"].locations] != [2]:
            return f"the leak on line 2 was not found at line 2: {result.leaks}"
        return None

    out.append(
        Variant(
            "line",
            "limit 4096, two over-long lines around a short one in one block",
            two_long_lines_in_one_block,
        )
    )
    return out


# ------------------------------------------------------------------------------------------ command line


def _cli_validate_path(tmp: Path) -> str | None:
    root, _ = _set(tmp)
    case_file = root / "cases" / "gs-1.yaml"
    case_file.write_text("id: GS-1\ninput: hello\ninitial_state: /etc/passwd\n", encoding="utf-8")
    code, out, err = _cli(["cases", "check", str(root)])
    if bug := _no_bug(out, err):
        return bug
    if code != 1 or f"{case_file}:3: initial_state: '/etc/passwd' resolves to" not in out + err:
        return f"exit {code}; {out + err}"
    if "allowed_roots" not in out + err:
        return f"the message does not say how to allow it: {out + err}"
    return None


def _cli_validate_json(body: str, field: str, line: int, expect: str, manifest: str | None = None) -> Check:
    def check(tmp: Path) -> str | None:
        root, _ = _set(tmp, manifest=manifest)
        case_file = root / "cases" / "gs-1.yaml"
        case_file.write_text(body, encoding="utf-8")
        where = root / MANIFEST_NAME if manifest is not None else case_file
        code, out, err = _cli(["cases", "check", str(root), "--format", "json"])
        if bug := _no_bug(out, err):
            return bug
        try:
            doc = json.loads(out)
        except ValueError:
            return f"standard output is not one JSON document: {out[:300]!r}"
        hits = [
            p
            for p in doc.get("problems", [])
            if p["file"] == str(where)
            and p["line"] == line
            and p["field"] == field
            and expect in p["message"]
        ]
        if code != 1 or doc.get("kind") != "validation" or doc.get("valid") is not False or not hits:
            return f"exit {code}; {doc}"
        return None

    return check


def _cli_validate_text(body: str, where_line: str) -> Check:
    def check(tmp: Path) -> str | None:
        root, _ = _set(tmp)
        case_file = root / "cases" / "gs-1.yaml"
        case_file.write_text(body, encoding="utf-8")
        code, out, err = _cli(["cases", "check", str(root)])
        if bug := _no_bug(out, err):
            return bug
        expected = f"{case_file}:{where_line}"
        if code != 1 or expected not in out + err:
            return f"exit {code}, {expected!r} not printed: {out + err}"
        return None

    return check


def _cli_manifest_cases_dir(tmp: Path) -> str | None:
    root, _ = _set(tmp, manifest="name: s\ncases_dir: ../outside/cases\n")
    code, out, err = _cli(["cases", "check", str(root)])
    if bug := _no_bug(out, err):
        return bug
    expected = f"{root / MANIFEST_NAME}:2: cases_dir: '../outside/cases' resolves to"
    if code == 0 or expected not in out + err or "STOLEN" in out:
        return f"exit {code}: {out + err}"
    return None


def _scan_cli(tmp: Path, fmt: str, extra: list[str], length: int) -> tuple[int, str, str, Path]:
    golden = tmp / "golden"
    golden.mkdir()
    (golden / "b.yaml").write_text(f'id: gs-044\ninput: "{DENVER}"\n', encoding="utf-8")
    key = tmp / "key"
    key.write_bytes(KEY_BYTES)
    index = tmp / "golden.jkc"
    code, out, err = _cli(
        ["contamination", "index", str(golden), "--key-file", str(key), "--out", str(index)]
    )
    assert code == 0, out + err
    export = tmp / "export.jsonl"
    lines = [json.dumps(chat(t)).encode() for t in CLEAN_TEXTS[:2]]
    export.write_bytes(lines[0] + b"\n" + _line_of(length, leak=False) + b"\n" + lines[1] + b"\n")
    argv = [
        "contamination",
        "scan",
        str(export),
        "--index",
        str(index),
        "--key-file",
        str(key),
        "--format",
        fmt,
    ]
    code, out, err = _cli([*argv, *extra])
    return code, out, err, export


def _cli_scan(fmt: str, extra: list[str], length: int, expect_code: int) -> Callable[[str], str | None]:
    def run(folder: str) -> str | None:
        tmp = Path(folder)
        code, out, err, export = _scan_cli(tmp, fmt, extra, length)
        if bug := _no_bug(out, err):
            return bug
        if code != expect_code:
            return f"exit {code}, expected {expect_code}: {(out + err)[:800]}"
        if expect_code == 0:
            return None
        if fmt == "json":
            report = json.loads(out)
            (problem,) = [p for p in report["problems"] if p["kind"] == "line_too_long"]
            (summary,) = report["files"]
            if report["status"] != "incomplete" or summary["complete"] is not False:
                return f"the JSON report says {report['status']}, complete={summary['complete']}"
            if (problem["file"], problem["line"]) != (str(export), 2) or f"{length} bytes" not in problem[
                "message"
            ]:
                return f"the JSON problem is not located with its length: {problem}"
            if "--max-line-mb" not in problem["message"]:
                return f"the JSON problem does not say how to raise the limit: {problem}"
        else:
            needed = f"{export}:2: line_too_long: line is {length} bytes"
            if needed not in out or "INCOMPLETE" not in out or "--max-line-mb" not in out:
                return f"the Markdown report does not locate the line: {out[:1500]}"
        return None

    return run


def _cli_scan_check(fmt: str, extra: list[str], length: int, expect_code: int) -> Check:
    def check(tmp: Path) -> str | None:
        bounded = run_bounded(_cli_scan(fmt, extra, length, expect_code), str(tmp), seconds=120, mb=3072)
        if bounded.outcome != "returned":
            return f"{bounded.outcome}: {bounded.error[:500]}"
        return None if bounded.value == "None" else bounded.value

    return check


def _cli_bad_limit(value: str) -> Check:
    def check(tmp: Path) -> str | None:
        code, out, err, _ = _scan_cli(tmp, "md", ["--max-line-mb", value], 100)
        if bug := _no_bug(out, err):
            return bug
        if code != 2 or "--max-line-mb" not in err or out:
            return f"--max-line-mb {value}: exit {code}; {out + err}"
        return None

    return check


def cli_variants() -> list[Variant]:
    """The same refusals through ``judgekit cases check`` and ``judgekit contamination scan``."""
    mib = 1 << 20
    out = [
        Variant("cli", "validate: initial_state /etc/passwd (text)", _cli_validate_path),
        Variant(
            "cli",
            "validate: initial_state ../outside (json)",
            _cli_validate_json(
                "id: GS-1\ninput: hi\ninitial_state: ../outside/secret.json\n",
                "initial_state",
                3,
                "outside the case set's root",
            ),
        ),
        Variant(
            "cli",
            "validate: snapshot with a NUL (json)",
            _cli_validate_json(
                'id: GS-1\ninput: hi\nexpected_state:\n  snapshot: "a\\0b"\n',
                "expected_state.snapshot",
                4,
                "U+0000",
            ),
        ),
        Variant(
            "cli",
            "validate: Windows reference_solution (json)",
            _cli_validate_json(
                "id: GS-1\ninput: hi\nreference_solution: 'C:\\t.jsonl'\n", "reference_solution", 3, "'\\'"
            ),
        ),
        Variant("cli", "validate: manifest cases_dir ../outside (text)", _cli_manifest_cases_dir),
        Variant(
            "cli",
            "validate: manifest cases_dir ../outside (json)",
            _cli_validate_json(
                "id: GS-1\ninput: hi\n",
                "cases_dir",
                2,
                "outside the case set's root",
                "name: s\ncases_dir: ../outside\n",
            ),
        ),
        Variant(
            "cli",
            "validate: version true (text)",
            _cli_validate_text(
                "id: GS-1\nversion: true\ninput: hi\n", "2: version: must be an integer, found boolean true"
            ),
        ),
        Variant(
            "cli",
            "validate: version true (json)",
            _cli_validate_json(
                "id: GS-1\nversion: true\ninput: hi\n", "version", 2, "booleans are not integers"
            ),
        ),
        Variant(
            "cli",
            "validate: manifest min_per_tool true (json)",
            _cli_validate_json(
                "id: GS-1\ninput: hi\n",
                "min_per_tool",
                2,
                "booleans are not integers",
                "name: s\nmin_per_tool: true\n",
            ),
        ),
        Variant(
            "cli",
            "validate: zero-width space before REVIEW: (text)",
            _cli_validate_text(
                'id: GS-1\ninput: hi\nacceptance: "\\u200bREVIEW: check"\n',
                "3: acceptance: acceptance still starts with 'REVIEW:'",
            ),
        ),
        Variant(
            "cli",
            "validate: BOM before REVIEW: (json)",
            _cli_validate_json(
                'id: GS-1\ninput: hi\nacceptance: "\\ufeffREVIEW: check"\n', "acceptance", 3, "REVIEW:"
            ),
        ),
        Variant(
            "cli",
            "validate: fullwidth REVIEW: (json)",
            _cli_validate_json(
                "id: GS-1\ninput: hi\nacceptance: ＲＥＶＩＥＷ： check\n",
                "acceptance",
                3,
                "invisible characters",
            ),
        ),
        Variant(
            "cli",
            "validate: lower-case review: (text)",
            _cli_validate_text("id: GS-1\ninput: hi\nacceptance: 'review: check'\n", "3: acceptance:"),
        ),
        Variant("cli", "scan: 33 MiB line, default limit (md)", _cli_scan_check("md", [], 33 * mib, 2)),
        Variant("cli", "scan: 33 MiB line, default limit (json)", _cli_scan_check("json", [], 33 * mib, 2)),
        Variant(
            "cli",
            "scan: 33 MiB line, --max-line-mb 34 (scanned)",
            _cli_scan_check("md", ["--max-line-mb", "34"], 33 * mib, 0),
        ),
        Variant(
            "cli",
            "scan: 2 KiB line, --max-line-mb 0.001 (json)",
            _cli_scan_check("json", ["--max-line-mb", "0.001"], 2048, 2),
        ),
    ]
    out += [
        Variant("cli", f"scan: --max-line-mb {v} refused", _cli_bad_limit(v))
        for v in ("nan", "inf", "-1", "0", "0.0001")
    ]
    return out


# ------------------------------------------------------------------------------------------ all variants


def path_variants() -> list[Variant]:
    """Every path text in every case path field; loops and over-long names under a bound."""
    out = []
    for pc in path_cases():
        for field in CASE_PATH_FIELDS:
            bounded = pc.name in {"symbolic link loop", "over-long name", "over-long path"}
            check = _check_bounded_path(pc, field) if bounded else _check_case_path(pc, field)
            out.append(Variant("path", f"{field}: {pc.name}", check))
    return out


VARIANTS = [
    *path_variants(),
    *_inside_variants(),
    *manifest_variants(),
    *integer_variants(),
    *review_variants(),
    *line_variants(),
    *cli_variants(),
]
IDS = [f"{v.kind}: {v.name}" for v in VARIANTS]


def _check(v: Variant, folder: Path) -> list[str]:
    why = v.check(folder)
    return [] if why is None else [why]


SWEEP = Sweep(
    name=__name__,
    variants=VARIANTS,
    key=lambda v: f"{v.kind}: {v.name}",
    check=_check,
    bounded=False,
)
"""Each variant once in the session, in the asking process (the variants that need a bound run their own)."""


def test_the_suite_holds_every_variant_named_in_the_issue() -> None:
    names = " | ".join(IDS)
    for needed in (
        "initial_state: absolute /etc/passwd",
        "manifest cases_dir: '../outside'",
        "symbolic link file out of the set",
        "percent-encoded dot-dot",
        "Windows dot-dot",
        "NUL then dot-dot",
        "version: true",
        "version: 1.0",
        'version: "2"',
        "U+200B ZERO WIDTH SPACE before",
        "U+FEFF ZERO WIDTH NO-BREAK SPACE before",
        "fullwidth letters and colon",
        "lower case",
        "33 MiB line, default limit (the issue's case)",
        "validate:",
        "scan: 33 MiB line, default limit (json)",
    ):
        assert needed in names, needed
    assert len(IDS) == len(set(IDS)), "every variant has its own name"
    assert len(CONTROL_AND_FORMAT) > 200, "every Cc and Cf character is tried"


@SWEEP.parametrize
def test_hostile_case_input_is_handled(variant: Variant, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


def test_the_review_guard_reads_what_a_person_sees() -> None:
    assert all(starts_with_review_marker(text) for _, text in review_texts())
    assert not any(starts_with_review_marker(text) for _, text in NOT_REVIEW)
    assert not starts_with_review_marker(None)
    assert not starts_with_review_marker("")


def test_the_provider_and_the_loader_name_the_same_manifest() -> None:
    assert SET_MANIFEST_NAME == MANIFEST_NAME


def test_a_transcript_state_outside_its_folder_and_the_set_is_not_read(tmp_path: Path) -> None:
    root, outside = _set(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "final.json").write_text(json.dumps(WORLD), encoding="utf-8")
    provider = StateProvider(root, transcript_dir=runs)
    for written in ("/etc/passwd", str(outside / "secret.json"), "../outside/secret.json"):
        transcript = Transcript.model_validate(
            {"case_id": "GS-1", "messages": [{"role": "user", "content": "hi"}], "final_state": written}
        )
        reason = provider.final(transcript)
        assert isinstance(reason, str), (written, reason)
        assert "outside" in reason, (written, reason)
    ok = Transcript.model_validate(
        {"case_id": "GS-1", "messages": [{"role": "user", "content": "hi"}], "final_state": "final.json"}
    )
    assert not isinstance(provider.final(ok), str)
    inside_set = Transcript.model_validate(
        {
            "case_id": "GS-1",
            "messages": [{"role": "user", "content": "hi"}],
            "final_state": "../golden/fixtures/base.json",
        }
    )
    assert not isinstance(provider.final(inside_set), str), "a state in the set is read from any transcript"


@SWEEP.counted
def test_count_of_hostile_case_inputs_tried_and_handled(
    sweep_store: SweepStore, capsys: pytest.CaptureFixture[str]
) -> None:
    """The counts for the issue: every variant tried, every one handled correctly."""
    failures = sweep_store.tally(SWEEP).failures
    by_kind: dict[str, list[int]] = {}
    for v, key in zip(VARIANTS, IDS, strict=True):
        tally = by_kind.setdefault(v.kind, [0, 0])
        tally[0] += 1
        tally[1] += key not in failures
    tried, handled = len(VARIANTS), len(VARIANTS) - len(failures)
    with capsys.disabled():
        print(
            f"\nhostile case inputs tried: {tried}, handled correctly: {handled} ("
            + ", ".join(f"{k} {ok}/{n}" for k, (n, ok) in by_kind.items())
            + ")"
        )
    assert not failures, failures
    assert tried == handled >= 500

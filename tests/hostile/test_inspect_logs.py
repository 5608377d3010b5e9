"""Hostile Inspect AI logs: what ``judgekit import inspect`` does with samples no honest run writes.

Issue 39 added the Inspect importer; this sweep gives it the inputs the other hostile sweeps give the OTLP
importer, the transcripts reader and the output paths. Every log is a real one (the session's ``inspect
eval`` run, :mod:`inspect_runs`) edited through inspect_ai's own model and writer, or, for what its writer
cannot produce (a zip member named outside the archive, a member that inflates to gigabytes), its ``.eval``
zip rebuilt member by member. Each variant must end in one of two outcomes:

* **imported safely**: exit 0, every sample and epoch a transcript, the text kept as the log has it;
* **refused clearly**: exit 2, one line per refused sample naming the log and the sample (``error: LOG:
  sample 'ID' epoch N: ...``), or one line naming the log when the whole log is unreadable; the other
  samples written whole, or nothing at all when the log is refused.

What inspect_ai's reader cannot read (a lone surrogate, bytes that are not UTF-8, nesting past the
recursion limit) refuses the log; what it would read but no ``inspect eval`` writes (a zip member named
outside the archive, which it lists among the samples; a member inflating past
:data:`judgekit.formats.inspect_logs.MAX_MEMBER_BYTES`) is refused by judgekit before inspect_ai reads it; a
case id that is not a text, or not shaped as a case id (a path, control characters), refuses its sample.
In every case: no traceback, nothing printed carrying a raw control character or ANSI escape from the log
(a sample id is shown quoted), no file written outside ``--out``, and the call stays within a memory
bound (run in a child process under :class:`hostile.sweep.Sweep`; sizes, never timings). The
last test counts the variants tried and handled correctly.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.tool import ToolCall

from hostile.sweep import Sweep, SweepStore, cli_in_process
from inspect_runs import InspectLogs
from judgekit.transcript import read_transcripts

HUGE_TEXT = 8 * 1024 * 1024
"""Characters of the huge message (8 MiB): far above any honest message, well inside the memory bound."""

MEMORY_MB = 1024
"""The memory bound of each variant's import (the child's added address space, MiB)."""

BOMB = 2 * 1024 * 1024 * 1024
"""Bytes a zip-bomb member inflates to (2 GiB of JSON whitespace, a few MiB compressed): above the bound."""

NESTING = 100_000
"""Depth of the nested tool arguments: far past Python's recursion limit."""


@dataclass(frozen=True)
class Variant:
    """One hostile log and what its import must do.

    Attributes:
        name: What the variant is (unique).
        build: Writes the hostile log under the folder given (from the real log given) and returns it.
        refused: The samples that must be refused (their quoted id in the error line); ``()``: every
            sample imported. ``"LOG"`` alone: the whole log is refused, nothing written.
        says: What the refusal must say (why), when inspect_ai's reader failing for another reason (out of
            memory) would give a misleading one.
    """

    name: str
    build: Callable[[Path, Path], Path]
    refused: tuple[str, ...] = ()
    says: str = ""


def _edited(real: Path, folder: Path, edit: Callable[[EvalLog], None], fmt: str = "json") -> Path:
    """A copy of ``real`` edited in inspect_ai's model by ``edit``, written by inspect_ai's writer."""
    log = read_eval_log(str(real))
    edit(log)
    path = folder / f"hostile.{fmt}"
    write_eval_log(log, str(path), format=fmt)  # type: ignore[arg-type]
    return path


def _samples(log: EvalLog) -> list:  # type: ignore[type-arg]
    assert log.samples
    return log.samples


def _huge_message(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        _samples(log)[0].messages.append(ChatMessageUser(content="x" * HUGE_TEXT))

    return _edited(real, folder, edit)


def _nested_arguments(real: Path, folder: Path) -> Path:
    # inspect_ai's own writer cannot serialise this depth either, so the JSON text is edited directly
    path = folder / "hostile.json"
    text = real.read_text(encoding="utf-8")
    doc = json.loads(text)
    marker = "__NESTED__"
    for message in doc["samples"][0]["messages"]:
        if message.get("tool_calls"):
            message["tool_calls"][0]["arguments"] = {"deep": marker}
            break
    else:
        raise AssertionError("the real log has no tool call")
    nested = '{"a":' * NESTING + "1" + "}" * NESTING
    path.write_text(json.dumps(doc).replace(f'"{marker}"', nested, 1), encoding="utf-8")
    return path


def _lone_surrogate(real: Path, folder: Path) -> Path:
    path = folder / "hostile.json"
    doc = json.loads(real.read_text(encoding="utf-8"))
    doc["samples"][0]["messages"].append({"role": "user", "content": "half a pair: \\ud800 ends here"})
    text = json.dumps(doc).replace(
        "\\\\ud800", "\\ud800"
    )  # a JSON escape of a lone surrogate, as Python writes
    path.write_text(text, encoding="utf-8")
    return path


def _not_utf8(real: Path, folder: Path) -> Path:
    path = folder / "hostile.json"
    doc = json.loads(real.read_text(encoding="utf-8"))
    doc["samples"][0]["messages"].append({"role": "user", "content": "LATIN1HERE"})
    path.write_bytes(json.dumps(doc).encode("utf-8").replace(b"LATIN1HERE", b"caf\xe9 \xff\xfe"))
    return path


ESCAPES = "\x1b[31mred\x1b[0m\x07\x08\r"


def _escapes_in_id_and_metadata(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        sample = _samples(log)[0]
        sample.id = f"ok{ESCAPES}"
        sample.metadata = {**(sample.metadata or {}), "ticket": f"T-1{ESCAPES}"}

    return _edited(real, folder, edit)


def _escapes_in_case_id(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        sample = _samples(log)[0]
        sample.metadata = {**(sample.metadata or {}), "case_id": f"email-1{ESCAPES}"}

    return _edited(real, folder, edit)


def _invalid_case_id(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        sample = _samples(log)[0]
        sample.metadata = {k: v for k, v in (sample.metadata or {}).items() if k != "case_id"}
        sample.id = "../../etc/passwd"

    return _edited(real, folder, edit)


def _case_id_not_a_string(value: object) -> Callable[[Path, Path], Path]:
    def build(real: Path, folder: Path) -> Path:
        def edit(log: EvalLog) -> None:
            sample = _samples(log)[0]
            sample.metadata = {**(sample.metadata or {}), "case_id": value}

        return _edited(real, folder, edit)

    return build


def _duplicate_sample(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        samples = _samples(log)
        samples.append(samples[0].model_copy(deep=True))

    return _edited(real, folder, edit)


def _huge_tool_call_id(real: Path, folder: Path) -> Path:
    def edit(log: EvalLog) -> None:
        sample = _samples(log)[0]
        sample.messages.append(
            ChatMessageAssistant(
                content="", tool_calls=[ToolCall(id="c" * 100_000, function="f" * 100_000, arguments={})]
            )
        )

    return _edited(real, folder, edit)


def _rezipped(real_eval: Path, folder: Path, extra: Callable[[zipfile.ZipFile], None]) -> Path:
    """A copy of the ``.eval`` log ``real_eval`` with every member, then what ``extra`` adds."""
    path = folder / "hostile.eval"
    with zipfile.ZipFile(real_eval) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        extra(dst)
    return path


def _traversal_member(real: Path, folder: Path) -> Path:
    def extra(zf: zipfile.ZipFile) -> None:
        doc = json.loads(zipfile.ZipFile(real).read(_first_sample_member(real)))
        zf.writestr("../../escaped.json", json.dumps(doc))
        zf.writestr("samples/../../../escaped_epoch_1.json", json.dumps(doc))
        zf.writestr("/abs/escaped_epoch_1.json", json.dumps(doc))

    return _rezipped(real, folder, extra)


def _first_sample_member(real: Path) -> str:
    with zipfile.ZipFile(real) as zf:
        return next(n for n in zf.namelist() if n.startswith("samples/"))


def _bomb_member(real: Path, folder: Path) -> Path:
    member = _first_sample_member(real)
    path = folder / "hostile.eval"
    with zipfile.ZipFile(real) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info, src.read(info))
        with dst.open(zipfile.ZipInfo(member), "w", force_zip64=True) as out:
            chunk = b" " * (16 * 1024 * 1024)
            for _ in range(BOMB // len(chunk)):
                out.write(chunk)
            out.write(b"{}")
    return path


VARIANTS: tuple[Variant, ...] = (
    Variant("huge message text", _huge_message),
    Variant("deeply nested tool arguments", _nested_arguments, ("LOG",)),
    Variant("lone surrogate in a message", _lone_surrogate, ("LOG",)),
    Variant("bytes that are not UTF-8 in a message", _not_utf8, ("LOG",)),
    Variant("escapes in the sample id and metadata", _escapes_in_id_and_metadata),
    Variant("escapes in the metadata case id", _escapes_in_case_id, ("'lost'",)),
    Variant("sample id that is not a case id", _invalid_case_id, ("'../../etc/passwd'",)),
    Variant("metadata case id is a list", _case_id_not_a_string(["email-1"]), ("'lost'",)),
    Variant("metadata case id is a mapping", _case_id_not_a_string({"id": "email-1"}), ("'lost'",)),
    Variant("metadata case id is a boolean", _case_id_not_a_string(True), ("'lost'",)),
    Variant("duplicate sample id and epoch", _duplicate_sample),
    Variant("huge tool call id and name", _huge_tool_call_id),
    Variant("zip member named outside the archive", _traversal_member, ("LOG",), "outside the archive"),
    Variant("zip-bomb sample member", _bomb_member, ("LOG",), "inflates to"),
)

_ZIPPED = {"zip member named outside the archive", "zip-bomb sample member"}


def _check(variant: Variant, logs: InspectLogs, folder: Path) -> list[str]:
    """Build the variant's log, import it through the command line, and say what went wrong."""
    real = logs.eval_log if variant.name in _ZIPPED else logs.json_log
    folder.mkdir(parents=True, exist_ok=True)
    log = variant.build(real, folder)
    out = folder / "out" / "t.jsonl"
    before = set(folder.parent.rglob("*"))
    code, printed = cli_in_process(["import", "inspect", str(log), "--out", str(out)])
    problems: list[str] = []
    if "Traceback" in printed:
        problems.append("printed a traceback")
    if any(c in printed for c in "\x1b\x07\x08\r"):
        problems.append(f"printed a raw control character: {printed[:300]!r}")
    added = set(folder.parent.rglob("*")) - before
    outside = [p for p in added if not p.is_relative_to(folder / "out")]
    if outside:
        problems.append(f"wrote outside --out: {outside}")
    errors = [line for line in printed.splitlines() if line.startswith("error:")]
    if variant.refused == ("LOG",):
        if code != 2:
            problems.append(f"exit {code}, not 2: {printed[-300:]!r}")
        if out.exists():
            problems.append("a refused log still wrote transcripts")
        if len(errors) != 1 or log.name not in errors[0] or variant.says not in errors[0]:
            problems.append(f"not one error line naming the log and {variant.says!r}: {printed[-400:]!r}")
        return problems
    if variant.refused:
        if code != 2:
            problems.append(f"exit {code}, not 2: {printed[-300:]!r}")
        for sample in variant.refused:
            if not any(log.name in e and f"sample {sample}" in e for e in errors):
                problems.append(f"no error line names the log and sample {sample}: {printed[-400:]!r}")
    elif code != 0:
        problems.append(f"exit {code}, not 0: {printed[-400:]!r}")
    if not out.exists():
        problems.append("no transcripts written")
        return problems
    try:
        transcripts = read_transcripts(out)
    except Exception as exc:
        return [*problems, f"the transcripts written do not read back: {type(exc).__name__}: {exc}"[:300]]
    want = len(read_eval_log(str(real), header_only=False).samples or []) + (
        1 if variant.name == "duplicate sample id and epoch" else 0
    )
    if len(transcripts) + len(errors) != want:  # each refused sample and epoch has its error line
        problems.append(f"{len(transcripts)} transcript(s) written, {len(errors)} refused, of {want}")
    if variant.name == "huge message text" and not any(
        len(m.content or "") == HUGE_TEXT for t in transcripts for m in t.messages
    ):
        problems.append("the huge message was not kept whole")
    return problems


def _check_and_clean(variant: Variant, folder: Path, logs: InspectLogs) -> list[str]:
    try:
        return _check(variant, logs, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the huge and inflating logs do not stay on disk


SWEEP = Sweep(
    name=__name__,
    variants=VARIANTS,
    key=lambda v: v.name,
    check=_check_and_clean,
    seconds=300.0,
    mb=MEMORY_MB,
    batch=8,
)
"""Each variant once in the session, in a child process under a time and memory bound (batches of 8)."""


@SWEEP.parametrize
def test_a_hostile_inspect_log_is_imported_safely_or_refused_clearly(
    variant: Variant, inspect_logs: InspectLogs, sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(SWEEP, variant, inspect_logs) == []


@SWEEP.counted
def test_count_of_hostile_inspect_logs_tried_and_handled(
    inspect_logs: InspectLogs, sweep_store: SweepStore
) -> None:
    tally = sweep_store.tally(SWEEP, inspect_logs)
    print(f"inspect logs: tried {tally.tried}, handled correctly {tally.handled}")
    assert tally.failures == {}
    assert tally.tried == len(VARIANTS)

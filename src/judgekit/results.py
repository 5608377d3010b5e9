"""The results file: one versioned JSON line per graded trial, and reading it back with located problems.

A results file is JSONL. Every line is a :class:`ResultLine` and stands alone: it names its schema version,
the run it belongs to, the case (id, version, slice, category, severity, policy revisions), the trial, the
case verdict, the quality score, every check, the failure categories, the agent's run record, the judge
fingerprint and the judgekit version that graded it. Reports and comparisons need nothing but these lines.

Reading (:func:`read_results`) never stops at the first bad line: a line from another schema version, a
malformed or truncated line, a duplicate trial are each reported as a located
:class:`~judgekit.errors.Problem`, and every good line is still returned, so the rest can be reported.

Schema history:

* ``1``: first version. Later, within version 1: the optional ``provenance`` field (method, seed,
  judgekit version, case-set revision, dependency versions, thresholds; see :mod:`judgekit.provenance`);
  then the optional ``reason``, ``untrusted_verdicts``, ``untrusted_policy`` and ``grader`` fields (the
  grading contract's reason for a withheld pass, the verdicts resting on untrusted judges, and the
  spec and fingerprint of the whole grader). Lines without them read as before (no reason, zero,
  unknown, unknown).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, BinaryIO, NamedTuple

import msgspec
from pydantic import Field, JsonValue, ValidationError

from judgekit.errors import LocatedError, Problem
from judgekit.io.documents import (
    _DIGITS_TO_ZERO,
    _LONG_RUN,
    MAX_LINE_BYTES,
    MAX_NESTING_DEPTH,
    _depth_of,
    check_duplicate_keys,
    check_json_bounds,
    has_u_escape,
    iter_lines_at,
    json_error_detail,
    line_too_long,
    load_json_bounded,
    open_input,
)
from judgekit.io.filekind import read_at
from judgekit.io.ranges import RangeReader, count_newlines
from judgekit.provenance import Provenance
from judgekit.secrets import Redactor
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, FailureCategory, FrozenModel, Grade, Trust, Verdict
from judgekit.version import __version__

__all__ = [
    "SCHEMA_VERSION",
    "CaseRef",
    "FastResultLine",
    "LineLocation",
    "ResultLine",
    "ResultStream",
    "RunResults",
    "TrialSource",
    "dump_result_line",
    "failure_categories",
    "fast_result_line",
    "make_result_line",
    "other_version_problems",
    "paused_gc",
    "read_located_line",
    "read_results",
    "result_key",
    "sha256_text",
]

SCHEMA_VERSION = 1
"""The version of the result-line schema this judgekit writes and reads."""

_DEFAULT_REDACTOR = Redactor()


class CaseRef(FrozenModel):
    """The case a trial ran, as much of it as reports and comparisons need.

    Attributes:
        id: The case id.
        version: The case version (comparisons refuse runs made on different versions).
        slice: The case's slice (falls back to its category when the case has no slice).
        category: ``normal``, ``edge``, ``adversarial`` or ``regression``, when set.
        severity: ``critical``, ``high``, ``medium`` or ``low``, when set.
        policy_refs: The policy revisions the case encodes (comparisons refuse different revisions).
    """

    id: str
    version: int = Field(ge=1)
    slice: str | None = None
    category: str | None = None
    severity: str | None = None
    policy_refs: tuple[str, ...] = ()


class TrialSource(FrozenModel):
    """Where the graded transcript came from.

    Attributes:
        file: The transcript file's name as given on the command line.
        line: 1-based line of the transcript in that file.
        sha256: Hash of the transcript line's bytes (a changed transcript is a different trial).
    """

    file: str
    line: int = Field(ge=1)
    sha256: str


class ResultLine(FrozenModel):
    """One graded trial: the unit of a results file.

    Attributes:
        schema_version: Always :data:`SCHEMA_VERSION` for lines this judgekit writes.
        run_id: Identifier of the grading run (kept across ``--resume``).
        case: The case graded.
        trial: The trial number (1-based).
        verdict: The case verdict decided by the gates and the grading contract (five explicit states).
        reason: Why the contract withheld a pass (an expectation no check decided, an untrusted judge);
            empty when the checks alone explain the verdict.
        quality: Weighted quality score in [0, 1], or ``None`` when nothing was scored. Never changes
            ``verdict``.
        checks: Every check's result.
        failure_categories: Distinct failure categories of the failed checks, in check order.
        run: The agent's run record from the transcript (model, prompt and tool hashes, versions,
            configuration), secrets removed.
        judge_fingerprint: Fingerprint of the judge-backed grader (model, parameters, rubric and template
            hashes), or ``None`` when no judge layer ran.
        grader: Spec and fingerprint of the whole grader (``{"fingerprint": hex, "spec": {...}}``: the
            contract version, every deterministic layer, the judge), or ``None`` when not recorded.
        untrusted_verdicts: How many of this trial's checks counted toward its verdict or quality although
            their judge is untrusted (non-zero only when the user opted in with ``--untrusted count`` or
            ``fail_only``); >= 0.
        untrusted_policy: The untrusted-judge policy in force (``withhold``, ``count``, ``fail_only``,
            ``advisory``), or ``None`` when not recorded.
        grading: How judgekit was configured for the run (judge model, concurrency, configuration file
            contents), secrets removed.
        judgekit_version: The judgekit version that graded the trial.
        source: Where the transcript came from, when it came from a file.
        cost_usd: Judge cost of grading this trial in US dollars: the sum over its judgments (0 when no
            judge ran or every reply was replayed from the cassette); ``None`` when any judgment's price
            is unknown (never a partial sum), with ``cost_unknown_reason`` saying why.
        cost_unknown_reason: Why ``cost_usd`` is ``None`` (``litellm has no price for model ...; set
            input_cost_per_token and output_cost_per_token``); ``None`` when the cost is known or was not
            recorded (lines written before judgekit recorded it).
        duration_s: Wall time of grading this trial in seconds.
        provenance: How the result was produced (method, seed, versions, case-set revision, thresholds),
            when the grader recorded it.
    """

    schema_version: int
    run_id: str
    case: CaseRef
    trial: int = Field(ge=1)
    verdict: Verdict
    reason: str = ""
    quality: float | None = Field(default=None, ge=0.0, le=1.0)
    checks: tuple[CheckResult, ...] = ()
    failure_categories: tuple[FailureCategory, ...] = ()
    run: RunRecord | None = None
    judge_fingerprint: dict[str, JsonValue] | None = None
    grader: dict[str, JsonValue] | None = None
    untrusted_verdicts: int = Field(default=0, ge=0)
    untrusted_policy: str | None = None
    grading: dict[str, JsonValue] = Field(default_factory=dict)
    judgekit_version: str
    source: TrialSource | None = None
    cost_usd: float | None = None
    cost_unknown_reason: str | None = None
    duration_s: float | None = None
    provenance: Provenance | None = None

    @property
    def key(self) -> tuple[str, int]:
        """``(case id, trial)``: what identifies a trial within a run."""
        return (self.case.id, self.trial)

    def as_grade(self) -> Grade:
        """This trial's grade as written: case, trial, verdict, the contract's reason, quality, checks.

        Its metadata holds the untrusted-judge policy the trial was graded under (``untrusted_policy``) when
        the line recorded one, so the grade's failed gates and reason count an untrusted judge's answer as
        the grading did.
        """
        return Grade(
            case_id=self.case.id,
            trial=self.trial,
            verdict=self.verdict,
            reason=self.reason,
            quality=self.quality,
            checks=self.checks,
            metadata={"untrusted_policy": self.untrusted_policy} if self.untrusted_policy else {},
        )

    def explain(self, *, max_lines: int = 20, show_passed: bool = True) -> str:
        """Why this trial has its verdict, with the evidence: :meth:`judgekit.verdict.Grade.explain`."""
        return self.as_grade().explain(max_lines=max_lines, show_passed=show_passed)


def result_key(case_id: str, trial: int) -> tuple[str, int]:
    """The key of a trial within a run."""
    return (case_id, trial)


def failure_categories(checks: Iterable[CheckResult]) -> tuple[FailureCategory, ...]:
    """Distinct failure categories of the failed checks, in check order."""
    out: list[FailureCategory] = []
    for check in checks:
        if check.verdict is Verdict.FAIL and check.category is not None and check.category not in out:
            out.append(check.category)
    return tuple(out)


def make_result_line(
    *,
    run_id: str,
    case: CaseRef,
    grade: Grade,
    run: RunRecord | None = None,
    judge_fingerprint: Mapping[str, JsonValue] | None = None,
    grader: Mapping[str, JsonValue] | None = None,
    grading: Mapping[str, JsonValue] | None = None,
    source: TrialSource | None = None,
    cost_usd: float | None = None,
    cost_unknown_reason: str | None = None,
    duration_s: float | None = None,
    provenance: Provenance | None = None,
) -> ResultLine:
    """Build the result line of one graded trial.

    Args:
        run_id: The run's identifier.
        case: The case graded.
        grade: The trial's grade (its ``trial`` is the trial number).
        run: The agent's run record.
        judge_fingerprint: The judge-backed grader's fingerprint, if a judge layer ran.
        grader: The whole grader's spec record (:meth:`judgekit.graders.contract.GraderSpec.record`).
        grading: judgekit's configuration for the run.
        source: Where the transcript came from.
        cost_usd: Judge cost of this trial; when omitted, the grade's own ``metadata["cost_usd"]``.
        cost_unknown_reason: Why the cost is unknown; when omitted, the grade's own
            ``metadata["cost_unknown_reason"]`` (only when ``cost_usd`` is unknown too).
        duration_s: Grading wall time of this trial.
        provenance: The run's provenance (see :func:`judgekit.provenance.collect_provenance`).

    Returns:
        The line, with ``schema_version`` and ``judgekit_version`` filled in, and the grade's contract
        reason, untrusted-verdict count and policy copied from it.
    """
    meta = grade.metadata
    counted = meta.get("untrusted_verdicts", ())
    if cost_usd is None and isinstance(meta.get("cost_usd"), int | float):
        cost_usd = float(meta["cost_usd"])
    if cost_usd is None and cost_unknown_reason is None and isinstance(meta.get("cost_unknown_reason"), str):
        cost_unknown_reason = meta["cost_unknown_reason"]
    policy = meta.get("untrusted_policy")
    return ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id=run_id,
        case=case,
        trial=grade.trial,
        verdict=grade.verdict,
        reason=grade.reason,
        quality=grade.quality,
        checks=grade.checks,
        failure_categories=failure_categories(grade.checks),
        run=run,
        judge_fingerprint=dict(judge_fingerprint) if judge_fingerprint is not None else None,
        grader=dict(grader) if grader is not None else None,
        untrusted_verdicts=len(counted) if isinstance(counted, list | tuple) else 0,
        untrusted_policy=policy if isinstance(policy, str) else None,
        grading=dict(grading or {}),
        judgekit_version=__version__,
        source=source,
        cost_usd=cost_usd,
        cost_unknown_reason=cost_unknown_reason if cost_usd is None else None,
        duration_s=duration_s,
        provenance=provenance,
    )


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while building many acyclic objects.

    Reading a results file creates millions of small objects and no reference cycles; each full
    collection scans every live object, so with the collector on, reading 400,000 lines spends most of its
    time in collections. The collector is restored to its previous state afterwards.

    When the pause ends, the collector's first young collection examines everything made during it (0.075
    s after reading a 1 GiB results file). Moving those objects to the oldest generation first
    (``gc.freeze()`` then ``gc.unfreeze()``) was tried and taken out: knowing whether someone else had
    frozen objects (:func:`gc.get_freeze_count`) walks every frozen object, 422,000 of them once litellm
    is imported (:func:`~judgekit.judges.client.import_litellm`), on every pause, and the test suite's
    report tests ran ten times slower for it.

    Examples:
        >>> import gc
        >>> with paused_gc():
        ...     kept = [[n] for n in range(1000)]
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def sha256_text(data: bytes | str) -> str:
    """Hex SHA-256 of bytes or UTF-8 text."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


@dataclass
class RunResults:
    """The trials of one results file, with everything wrong with it.

    Attributes:
        path: The file read.
        lines: The valid result lines, in file order (duplicates of an earlier trial left out).
        problems: Located problems: other schema versions, malformed or truncated lines, duplicates.
        truncated: True when the last line was cut off mid-line (an interrupted run).
    """

    path: Path
    lines: list[ResultLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    truncated: bool = False

    @property
    def run_ids(self) -> list[str]:
        """Distinct run ids in file order."""
        return list(dict.fromkeys(line.run_id for line in self.lines))

    @property
    def name(self) -> str:
        """A short label for the run: the file's name."""
        return self.path.name

    def keys(self) -> set[tuple[str, int]]:
        """The ``(case id, trial)`` keys present."""
        return {line.key for line in self.lines}

    def __iter__(self) -> Iterator[ResultLine]:
        """The valid lines, in file order (``for line in read_results(path)``)."""
        return iter(self.lines)


def iter_result_lines(
    path: str | PathLike[str], *, byte_range: tuple[int, int] | None = None
) -> Iterator[tuple[int, bytes | None, bool]]:
    """Yield ``(line number, raw bytes, ends with newline)`` for each non-blank line of a file.

    A line longer than :data:`~judgekit.io.documents.MAX_LINE_BYTES` is read in pieces and yielded with
    ``None`` for its bytes (it is never held in memory whole).

    Args:
        path: The results file, as text or a path object.
        byte_range: Only the lines of these bytes ``[start, end)`` of the file, both line starts
            (:func:`judgekit.io.ranges.line_ranges`), numbered as in the whole file (the newlines before
            ``start`` are counted first); ``None``: the whole file.

    Raises:
        JudgekitError: When the file cannot be opened.
    """
    for number, _, raw, complete in iter_result_lines_at(path, byte_range=byte_range):
        yield number, raw, complete


def iter_result_lines_at(
    path: str | PathLike[str],
    *,
    byte_range: tuple[int, int] | None = None,
    relative: bool = False,
    blank: bool = False,
) -> Iterator[tuple[int, int, bytes | None, bool]]:
    """:func:`iter_result_lines` with each line's byte offset in the file: ``(number, offset, bytes, ends)``.

    Args:
        path: The results file.
        byte_range: As :func:`iter_result_lines`'s; offsets are the file's, not the range's.
        relative: Number the lines from the range's first (1), not the file's: the newlines before the
            range are not counted (the caller knows them later, :mod:`judgekit.reports.run_parts`).
        blank: Yield blank lines too (their bytes are whitespace), so the last number is the range's
            line count.

    Raises:
        JudgekitError: When the file cannot be opened.
    """
    path = Path(path)
    with open_input(path, "results") as handle:  # a FIFO or device is refused at once
        before = 0
        start = 0
        source: Any = handle
        if byte_range is not None:
            start = byte_range[0]
            before = count_newlines(handle, 0, start) if start and not relative else 0
            source = RangeReader(handle, *byte_range)
        for number, offset, raw, complete in iter_lines_at(source, start=start):
            # isspace, not strip: a line that is not blank is seen so at its first byte, never copied
            if blank or raw is None or not raw.isspace():
                yield before + number, offset, raw, complete


class LineLocation(NamedTuple):
    """Where a valid result line is in its file, to read it again later: about 100 bytes a line.

    Attributes:
        offset: The line's first byte in the file, >= 0.
        length: Its length in bytes (its newline included when it has one), >= 1.
        crc: ``zlib.crc32`` of those bytes: a line read again must have it, or the file changed.
        fast: Whether :func:`fast_result_line` decoded it (then it decodes it again the same way, as a
            :class:`FastResultLine`); otherwise it is read as a :class:`ResultLine`.
        number: Its 1-based line number, for the error when it changed.
    """

    offset: int
    length: int
    crc: int
    fast: bool
    number: int


def read_located_line(
    handle: BinaryIO, path: str | PathLike[str], at: LineLocation
) -> ResultLine | FastResultLine:
    """The line at ``at`` read again from an open results file, as the first reading decoded it.

    The bytes are checked against the first reading's (length and CRC-32) before they are decoded, so a
    line is never read as something it was not: the lines were validated then (bounds, schema, repeated
    keys), and the same bytes decode to the same values.

    Args:
        handle: The results file, open in binary mode.
        path: Its path, for the error.
        at: The line's location (:meth:`ResultStream.location`).

    Raises:
        JudgekitError: When the line is no longer there as it was (the file was changed or replaced
            since it was read): the file, the line, what to do.
    """
    raw = read_at(handle, at.offset, at.length)
    if len(raw) != at.length or zlib.crc32(raw) != at.crc:
        raise LocatedError(
            Problem(
                Path(path),
                at.number,
                "",
                "the results file changed while its report was being made (this line is not what was "
                "read and counted); make the report again once nothing writes to the file",
            )
        )
    return _FAST_DECODE(raw) if at.fast else ResultLine.model_validate_json(raw)


def read_results(path: str | PathLike[str]) -> RunResults:
    """Read a results file, keeping every valid line and locating every problem.

    Problems reported (each with the file and line), while every other line is still read:

    * a line whose ``schema_version`` is not :data:`SCHEMA_VERSION` (written by another judgekit);
    * a malformed line; when it is the last line and has no final newline it is reported as truncated
      (an interrupted run; ``judgekit grade --resume`` drops and re-grades it);
    * a line that is valid JSON but not a valid result line;
    * a line that breaks a limit on hostile input (size, depth, number length) or repeats a key in one
      object (``"verdict"`` twice is ambiguous: the line is left out, not read as either value);
    * a second line for the same ``(case, trial)`` (the first is kept).

    Args:
        path: The results file, as text or a path object.

    Returns:
        The results and problems.

    Raises:
        JudgekitError: When the file cannot be read at all.
    """
    with paused_gc():
        return _read_results(Path(path))


def _read_results(path: Path) -> RunResults:
    stream = ResultStream(path)
    out = RunResults(path=path, lines=list(stream))
    out.problems = stream.problems
    out.truncated = stream.truncated
    return out


class ResultStream:
    """The valid lines of a results file, one at a time, and afterwards every problem found.

    Iterating reads the file once, yielding each valid :class:`ResultLine` in file order and never keeping
    it; what it keeps grows with the file only by one ``(case id, trial) -> line`` entry per trial (to find
    duplicates). The problems are exactly those :func:`read_results` reports (it is built on this): they
    are complete once the iteration has ended.

    A stream can read one part of the file only (``byte_range``), as one of several processes reading it
    (:mod:`judgekit.reports.run_parts`): its lines are numbered as in the whole file (or, ``relative``,
    from the range's first line, the caller adding the lines before it afterwards), ``seen`` can start
    with the trials of the parts before it (so a duplicate of an earlier part is found as in one pass),
    and the lines of other schema versions are left in :attr:`other_versions` for the whole file's
    problem (:func:`other_version_problems`) instead of ending :attr:`problems`.

    Attributes:
        path: The results file.
        problems: Located problems found so far (complete after the iteration).
        truncated: True when the last line was cut off mid-line (an interrupted run).
        byte_range: The bytes ``[start, end)`` read, both line starts; ``None``: the whole file.
        seen: Each valid trial's ``(case id, trial)`` and the line it was first read at (after the
            iteration; the ``prior`` ones included).
        other_versions: Each other schema version found (``None``: none given) and its lines, in the
            order first found.
        relative: Whether the lines are numbered from the range's first line (1) rather than the file's.
        lines: The number of the last line the iteration went through, blank ones counted (after the
            iteration, a relative stream's is its range's line count: the next range's lines come after).
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        byte_range: tuple[int, int] | None = None,
        prior: Mapping[tuple[str, int], int] | None = None,
        relative: bool = False,
    ) -> None:
        """Prepare to read ``path`` (it is opened when the iteration starts).

        Args:
            path: The results file.
            byte_range: Read only these bytes ``[start, end)``, both line starts; ``None``: the whole file.
            prior: Trials already read from the parts of the file before ``byte_range``, with the line each
                was first read at: a line of one of them is a duplicate (the first is kept).
            relative: Number the lines from the range's first line (1), without counting the newlines
                before the range (a pass over those bytes); every line number found (problems, ``seen``,
                :attr:`other_versions`, :meth:`location`) is then the file's minus the lines before the
                range, but for the first line named in a duplicate's message, which is the file's.
        """
        self.path = Path(path)
        self.problems: list[Problem] = []
        self.truncated = False
        self.byte_range = byte_range
        self.prior = prior
        self.relative = relative and byte_range is not None and byte_range[0] > 0
        self.lines = 0
        self.seen: dict[tuple[str, int], int] = {}
        self.other_versions: dict[Any, list[int]] = {}
        self._last: tuple[int, int, bytes, bool] | None = None
        self._before: int | None = None if self.relative else 0

    def location(self) -> LineLocation:
        """Where the line last yielded is in the file, to read it again (:func:`read_located_line`).

        Call it while iterating, right after a line is yielded (it describes that line).

        Raises:
            RuntimeError: When no line has been yielded yet (a programming error).
        """
        if self._last is None:
            raise RuntimeError("location() is for the line just yielded; none has been")
        number, offset, raw, fast = self._last
        return LineLocation(offset, len(raw), zlib.crc32(raw), fast, number)

    def __iter__(self) -> Iterator[ResultLine]:
        """Yield the valid lines; see :func:`read_results` for the problems reported instead of a line.

        Raises:
            JudgekitError: When the file cannot be opened.
        """
        # with fast=False every line is a ResultLine
        yield from self._lines(fast=False)  # type: ignore[misc]

    def report_lines(self) -> Iterator[ResultLine | FastResultLine]:
        """Yield the valid lines, as :meth:`__iter__` does, each decoded the cheapest exact way.

        A line :func:`fast_result_line` is certain about comes as a :class:`FastResultLine` (same fields,
        same values); every other line goes through the full path and comes as a :class:`ResultLine`, or
        as its problem. The lines yielded and the problems found are exactly those of :meth:`__iter__`.

        Raises:
            JudgekitError: When the file cannot be opened.
        """
        return self._lines(fast=True)

    def _lines(self, *, fast: bool) -> Iterator[ResultLine | FastResultLine]:
        path = self.path
        self.problems = []
        self.truncated = False
        seen: dict[tuple[str, int], int] = dict(self.prior or {})
        other_versions: dict[Any, list[int]] = {}
        self.seen, self.other_versions = seen, other_versions
        lines = iter_result_lines_at(path, byte_range=self.byte_range, relative=self.relative, blank=True)
        for number, offset, raw, complete in lines:
            self.lines = number
            if raw is None:
                self.problems.append(line_too_long(path, number))
                continue
            if raw.isspace():  # a blank line (isspace: a line that is not is seen so at its first byte)
                continue
            line: ResultLine | FastResultLine | None = fast_result_line(raw) if fast else None
            self._last = (number, offset, raw, line is not None)
            if line is None:
                line = self._validated(path, number, raw, complete, other_versions)
            if line is None:
                continue
            if line.schema_version != SCHEMA_VERSION:
                other_versions.setdefault(line.schema_version, []).append(number)
                continue
            key = line.key
            if key in seen:
                self.problems.append(
                    Problem(
                        path,
                        number,
                        "",
                        f"duplicate result for case '{line.case.id}' trial {line.trial} (first at line "
                        f"{self._in_file(seen[key], key)}); the first is kept",
                    )
                )
                continue
            seen[key] = number
            yield line
        if self.byte_range is None:
            self.problems.extend(other_version_problems(path, other_versions))

    def _in_file(self, number: int, key: tuple[str, int]) -> int:
        """The file's number of line ``number`` of this stream (a ``prior`` trial's is the file's already).

        A relative stream counts the newlines before its range the first time it needs to (a duplicate
        within the range, whose message names the first line: rare).
        """
        if self.prior is not None and key in self.prior:
            return number
        if self._before is None:  # only a relative stream has no count yet
            start = self.byte_range[0] if self.byte_range is not None else 0
            with open_input(self.path, "results") as handle:
                self._before = count_newlines(handle, 0, start)
        return self._before + number

    def _validated(
        self, path: Path, number: int, raw: bytes, complete: bool, other_versions: dict[Any, list[int]]
    ) -> ResultLine | None:
        """The line validated, or ``None`` with its problem recorded (or its other schema version)."""
        try:
            # The limits on hostile input first (size, depth, numbers); then the fast path: pydantic
            # parses and validates the bytes in one step.
            check_json_bounds(raw, source=path, line=number)
            line = ResultLine.model_validate_json(raw)
            check_duplicate_keys(raw, source=path, line=number)  # pydantic keeps a repeated key's last value
        except LocatedError as bound_exc:
            self.problems.append(Problem(path, number, "", f"{bound_exc.problem.message}; line left out"))
            return None
        except ValidationError as fast_exc:
            problem = _diagnose(
                path, number, raw, complete=complete, exc=fast_exc, other_versions=other_versions
            )
            if problem is not None:
                self.truncated = self.truncated or problem.message.startswith("last line is truncated")
                self.problems.append(problem)
            return None
        return line


def other_version_problems(
    path: str | PathLike[str], other_versions: Mapping[Any, Sequence[int]]
) -> list[Problem]:
    """One problem per other schema version: how many lines have it, the first five, what to do.

    Args:
        path: The results file.
        other_versions: Each version (``None``: no ``schema_version``) and its line numbers, in the order
            the versions were first found (:attr:`ResultStream.other_versions`).
    """
    path = Path(path)
    out: list[Problem] = []
    for version, numbers in other_versions.items():
        shown = ", ".join(str(n) for n in numbers[:5]) + (" ..." if len(numbers) > 5 else "")
        what = f"schema version {version!r}" if version is not None else "no schema_version"
        out.append(
            Problem(
                path,
                numbers[0],
                "schema_version",
                f"{len(numbers)} line(s) have {what} (lines {shown}); this judgekit "
                f"{__version__} reads schema version {SCHEMA_VERSION}: they are left out. Re-grade them "
                "with this judgekit, or report them with the judgekit that wrote them",
            )
        )
    return out


def _diagnose(
    path: Path,
    number: int,
    raw: bytes,
    *,
    complete: bool,
    exc: ValidationError,
    other_versions: dict[Any, list[int]],
) -> Problem | None:
    """Explain why a line is not a valid result line (``None`` when it is another schema version)."""
    try:
        data = load_json_bounded(raw, source=path, line=number)
    except LocatedError as json_exc:
        message = json_exc.problem.message
        if not complete and message.startswith(("malformed JSON", "not valid UTF-8")):
            return Problem(
                path,
                number,
                "",
                "last line is truncated (the run was interrupted while writing it); it is left out. "
                "Run `judgekit grade --resume` with the same --out to re-grade that trial",
            )
        if message.startswith(("malformed JSON: ", "not valid UTF-8")):
            message = f"malformed JSON ({json_error_detail(message)})"
        return Problem(path, number, "", f"{message}; line left out")
    if not isinstance(data, dict):
        return Problem(path, number, "", "a result line must be a JSON object; line left out")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        other_versions.setdefault(version if isinstance(version, int | str) else None, []).append(number)
        return None
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"])
    return Problem(path, number, loc, f"{err['msg']}; line left out (not a judgekit result line?)")


# --------------------------------------------------------------------------- the exact fast path
#
# A typed msgspec mirror of the whole ResultLine schema (tests/test_results_fast.py holds it to the pydantic
# models: the same fields in the same order, the same constraints). Every field is required here, so a
# line the mirror accepts names every field of its objects exactly once: that is what lets the key count
# below prove there is no repeated key. Lines that omit a field (pydantic fills its default) or that the
# mirror refuses for any other reason go through the full pydantic path.


class _FastCaseRef(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    version: Annotated[int, msgspec.Meta(ge=1)]
    slice: str | None
    category: str | None
    severity: str | None
    policy_refs: tuple[str, ...]


class _FastEvidence(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    kind: str
    summary: str
    call_index: int | None
    tool: str | None
    arguments: dict[str, Any] | None
    quote: str | None
    message_index: int | None
    data: Any


class _FastCheck(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    check_id: str
    layer: str
    verdict: Verdict
    gate: bool
    reason: str
    category: FailureCategory | None
    evidence: tuple[_FastEvidence, ...]
    trust: Trust
    trust_reason: str
    score: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None
    weight: Annotated[float, msgspec.Meta(ge=0.0)]


class _FastRunRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    agent_model: str | None
    prompt_hash: str | None
    tool_definitions_hash: str | None
    app_version: str | None
    fixture_version: str | None
    config: dict[str, Any]


class _FastSource(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    file: str
    line: Annotated[int, msgspec.Meta(ge=1)]
    sha256: str


class _FastProvenance(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    method: Annotated[str, msgspec.Meta(min_length=1)]
    seed: int | None
    judgekit_version: str
    case_set_revision: str | None
    case_set_dirty: bool | None
    case_set_revision_note: str | None
    dependencies: dict[str, str]
    python: str
    thresholds: dict[str, Any]


class FastResultLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A result line decoded by the exact fast path: the fields and values of a :class:`ResultLine`.

    It has the attributes of :class:`ResultLine` (and of its case, checks, evidence, run record, source
    and provenance) with the same values pydantic would give, so code that only reads a line's attributes
    (the report's accumulation) reads either. It is not a pydantic model: it has no ``model_dump``.
    :meth:`ResultStream.report_lines` yields it for every line :func:`fast_result_line` accepts.
    """

    schema_version: int
    run_id: str
    case: _FastCaseRef
    trial: Annotated[int, msgspec.Meta(ge=1)]
    verdict: Verdict
    reason: str
    quality: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None
    checks: tuple[_FastCheck, ...]
    failure_categories: tuple[FailureCategory, ...]
    run: _FastRunRecord | None
    judge_fingerprint: dict[str, Any] | None
    grader: dict[str, Any] | None
    untrusted_verdicts: Annotated[int, msgspec.Meta(ge=0)]
    untrusted_policy: str | None
    grading: dict[str, Any]
    judgekit_version: str
    source: _FastSource | None
    cost_usd: float | None
    cost_unknown_reason: str | None
    duration_s: float | None
    provenance: _FastProvenance | None

    @property
    def key(self) -> tuple[str, int]:
        """``(case id, trial)``: what identifies a trial within a run."""
        return (self.case.id, self.trial)


_FAST_DECODE = msgspec.json.Decoder(FastResultLine).decode
_FAST_ENCODE = msgspec.json.Encoder().encode
_NEWLINE = ord("\n")
_EVIDENCE_DEPTH = 5
"""Depth of an evidence object in a line (line, checks, check, evidence, item): the deepest typed place a
free-form value (``data``, ``arguments``) sits under."""


def fast_result_line(raw: bytes) -> FastResultLine | None:
    r"""The line decoded when the full reader would certainly accept it with these values, else ``None``.

    ``None`` never means the line is bad, only that this path is not certain: the caller then runs the
    full path (hostile-input checks, pydantic, the duplicate-key check), which finds its problem, if any.
    A line is accepted only when all of these hold, each of which implies the full path accepts it:

    * no ``\u`` escape (so every ``:`` and ``"`` in a string is written as itself) and no run of digits
      over the number limit (the cheap test of :func:`~judgekit.io.documents.check_json_bounds`);
    * the typed mirror decodes it, every field present, none unknown, every constraint met, and its
      ``schema_version`` is :data:`SCHEMA_VERSION`. msgspec refuses ``NaN`` and ``Infinity`` (not JSON)
      and every number too large for a float (``1e400``: the full path refuses it as not finite), and
      reads every other number, whatever its exponent, to the same correctly rounded value as pydantic
      (``1e-400`` is 0.0 on both paths). So an exponent of three digits needs no test of its own: the
      bytes test for one, which the full path's hostile-input check uses, also fires on every hash
      written in hex (``...e0123...``), which is nearly every line ``judgekit grade`` writes;
    * no repeated key: a repeated key is decoded once (the last value wins), so the decoded line
      re-encoded has one key fewer than the line. Either the line is that re-encoding byte for byte
      (what ``judgekit grade`` writes always is: then it has no key more than it, and one comparison of
      bytes proves it), or it has as many ``:`` as the re-encoding: outside strings there is one ``:``
      per key, and inside strings the same ones are in both;
    * depth: at most :data:`~judgekit.io.documents.MAX_NESTING_DEPTH` brackets, or, by the schema, the
      deepest free-form value (under an evidence item, at depth 5) plus every bracket that is not one of
      the line's typed objects and arrays still within the limit.

    Args:
        raw: The line's bytes (a final newline is allowed).

    Returns:
        The decoded line, or ``None`` for the full path.
    """
    if len(raw) > MAX_LINE_BYTES or has_u_escape(raw):
        return None
    zeroed = raw.translate(_DIGITS_TO_ZERO)  # also "{" -> "[": one count of "[" counts both brackets
    if _LONG_RUN in zeroed:
        return None
    try:
        line = _FAST_DECODE(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if line.schema_version != SCHEMA_VERSION:
        return None
    encoded = _FAST_ENCODE(line)
    size = len(encoded)
    canonical = raw.startswith(encoded) and (
        len(raw) == size or (len(raw) == size + 1 and raw[size] == _NEWLINE)
    )
    if not canonical and raw.count(b":") != encoded.count(b":"):
        return None
    brackets = zeroed.count(b"[")
    if brackets > MAX_NESTING_DEPTH:
        # typed containers: the line, case, policy_refs, checks, failure_categories; per check the check and
        # its evidence array; per item the item; the run record, source and provenance (and its
        # dependencies) when present
        typed = 5 + sum(2 + len(check.evidence) for check in line.checks)
        typed += (line.run is not None) + (line.source is not None) + 2 * (line.provenance is not None)
        if (
            _EVIDENCE_DEPTH + brackets - typed > MAX_NESTING_DEPTH
            and _free_form_depth(line) > MAX_NESTING_DEPTH
        ):
            return None
    return line


def _free_form_depth(line: FastResultLine) -> int:
    """The line's nesting depth, from where each free-form value sits in the schema and its own depth.

    Exact (the depth the full path's bracket count finds outside strings): the typed objects and arrays
    nest at most 5 deep (line, checks, check, evidence, item), and each free-form value adds its own
    depth where it sits (under the line, the run record or the provenance, or an evidence item). For
    lines the cheap bracket bound cannot clear: many judged criteria, each note with its own objects.
    """
    deepest = _EVIDENCE_DEPTH
    for value in (line.judge_fingerprint, line.grader, line.grading):
        deepest = max(deepest, 1 + _depth_of(value))
    if line.run is not None:
        deepest = max(deepest, 2 + _depth_of(line.run.config))
    if line.provenance is not None:
        deepest = max(deepest, 2 + _depth_of(line.provenance.thresholds))
    for check in line.checks:
        for item in check.evidence:
            deepest = max(
                deepest, _EVIDENCE_DEPTH + _depth_of(item.data), _EVIDENCE_DEPTH + _depth_of(item.arguments)
            )
    return deepest


def dump_result_line(line: ResultLine, redactor: Redactor | None = None) -> str:
    """Serialise a result line as one compact JSON line (no newline), with secrets removed.

    Args:
        line: The line.
        redactor: The redactor to apply (shape- and name-based redaction when ``None``).

    Returns:
        The JSON text; :func:`read_results` reads it back.
    """
    return (redactor or _DEFAULT_REDACTOR).json_line(line.model_dump(mode="json"))

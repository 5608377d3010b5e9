"""Failure intake: an escalation or incident record becomes a sanitised regression candidate.

Every past failure that must never happen again is a candidate case. An intake file holds one or more
records, as JSON (an object, or a list of objects) or CSV (a header row, one record a row):

* ``ref`` (required): the incident's or escalation's reference (``INC-2026-0815``); it becomes the
  candidate's ``source_incident`` and ``origin.ref``;
* ``conversation`` (required): what was said, as a list of ``{role, content}`` messages or as text with a
  speaker label a line (``Customer:``/``User:``, ``Agent:``/``Assistant:``; ``Tool:``/``Note:`` lines are
  dropped; lines without a label continue the message above);
* ``what_went_wrong`` (required): what the agent did wrong, in a sentence;
* ``expected``: what it should have done; ``title``: a short name; ``source``: ``incident`` (default),
  ``escalation``, ``complaint``, ``qa_review``...; ``severity``: ``critical``, ``high`` (default),
  ``medium`` or ``low``; ``owner``; ``tools`` and ``dimensions`` (lists, or ``;``-separated in CSV);
  ``slice`` (default ``real_failures``).

Every text is **sanitised** before anything is written: every value :mod:`judgekit.golden.pii` finds
is replaced by its placeholder (``[EMAIL]``, ``[CARD]``, ``[NAME]``, ``[ADDRESS]``, ``[POSTCODE]``,
``[DATE_OF_BIRTH]``, ``[SORT_CODE]``...), secrets by ``[REDACTED]`` (:mod:`judgekit.secrets`), and any
literal value the person running intake names by ``[NAME]``. A person name found anywhere in a record
(``I'm Hana Sato``) or named with ``--redact`` is replaced everywhere in that record's candidate, whole or
by part (``Sorry, Hana``). The result is scanned again and must be clean. Names are found by rule
(honorifics, self-introductions, sign-offs), so a name said bare (``my friend Marta``) is missed: a person
reviews every candidate before it is promoted.

Each record becomes one candidate case in the candidates folder: ``category: regression``, linked to its
incident, its acceptance starting with ``REVIEW:`` (a person writes the real criterion), the failure as a
forbidden outcome. A record whose incident is already linked from a case in the set is skipped and named.
Any missing or malformed field is reported with its file, line and field, and nothing is written.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from judgekit.cases import REVIEW_PREFIX, Case
from judgekit.caseset import CaseSet, LocatedProblem
from judgekit.errors import JudgekitError, Problem, ProblemsError, did_you_mean
from judgekit.golden.generate import CandidateFile, candidates_dir, write_candidate_files
from judgekit.io.documents import Document
from judgekit.verdict import FrozenModel

__all__ = [
    "IntakeDocument",
    "IntakeRecord",
    "IntakeResult",
    "IntakeSkipped",
    "IntakeWritten",
    "build_regression_candidates",
    "intake_document",
    "intake_incidents",
    "parse_conversation",
    "read_intake",
]

REQUIRED = ("ref", "conversation", "what_went_wrong")
OPTIONAL = ("expected", "title", "source", "severity", "owner", "tools", "dimensions", "slice")
FIELDS = REQUIRED + OPTIONAL
SEVERITIES = ("critical", "high", "medium", "low")

_USER_LABELS = {"user", "customer", "caller", "client", "passenger", "member"}
_AGENT_LABELS = {"agent", "assistant", "bot", "ai", "airdesk", "system_agent"}
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z _-]{0,30}?)\s*:\s?(.*)$")


@dataclass(frozen=True)
class IntakeRecord:
    """One incident record as read (before sanitising).

    Attributes:
        ref: The incident reference.
        messages: ``(role, text)`` pairs, role ``user`` or ``assistant``.
        what_went_wrong: What the agent did wrong.
        fields: The other fields, as read.
        path: The file it came from.
        line: 1-based line of the record in that file.
    """

    ref: str
    messages: tuple[tuple[str, str], ...]
    what_went_wrong: str
    fields: dict[str, Any]
    path: Path
    line: int


@dataclass
class IntakeResult:
    """What an intake wrote and what it did to the text.

    Attributes:
        written: Candidate files written (or that would be, on a dry run).
        skipped: ``(ref, case id)`` of records whose incident the set already links.
        redactions: How many values of each kind were replaced (``email``, ``card``, ``name``,
            ``secret``...), over all records.
    """

    written: list[CandidateFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    redactions: Counter[str] = field(default_factory=Counter)


# --------------------------------------------------------------------------- reading


def parse_conversation(
    value: Any, *, path: str | os.PathLike[str], line: int
) -> tuple[tuple[str, str], ...] | Problem:
    """Read a conversation given as messages or labelled text.

    ``path`` may be given as text or a path object.

    Returns:
        ``(role, text)`` pairs, or a located problem saying what is wrong.
    """
    path = Path(path)
    out: list[tuple[str, str]] = []
    if isinstance(value, list):
        for i, msg in enumerate(value):
            if not isinstance(msg, dict) or not isinstance(msg.get("content"), str):
                return Problem(
                    path, line, f"conversation.{i}", "each message needs a 'role' and a 'content' text"
                )
            role = _role(str(msg.get("role", "")))
            if role is None:
                return Problem(
                    path,
                    line,
                    f"conversation.{i}.role",
                    f"unknown role {msg.get('role')!r}; use user or assistant",
                )
            if role != "skip" and msg["content"].strip():
                out.append((role, msg["content"].strip()))
    elif isinstance(value, str):
        current: list[str] | None = None
        for raw in value.splitlines():
            m = _LABEL.match(raw)
            role = _role(m.group(1)) if m else None
            if m and role is not None:
                current = [m.group(2).strip()]
                out.append((role, current[0]))
                continue
            if not raw.strip():
                continue
            if current is None:
                return Problem(
                    path,
                    line,
                    "conversation",
                    "the conversation must start with a speaker label such as 'Customer:' or 'Agent:'",
                )
            current.append(raw.strip())
            out[-1] = (out[-1][0], "\n".join(current))
        out = [(r, t.strip()) for r, t in out if r != "skip" and t.strip()]
    else:
        return Problem(path, line, "conversation", "must be a list of messages or a labelled text")
    if not any(role == "user" for role, _ in out):
        return Problem(
            path, line, "conversation", "has no customer message: label the customer's lines 'Customer:'"
        )
    return tuple(out)


def _role(label: str) -> str | None:
    key = label.strip().lower().replace(" ", "_").replace("-", "_")
    if key in _USER_LABELS:
        return "user"
    if key in _AGENT_LABELS:
        return "assistant"
    if key in {"tool", "system", "note"}:
        return "skip"
    return None


def _list_field(value: Any) -> list[str] | None:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(";") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    return None


def _record(
    raw: dict[str, Any],
    path: Path,
    line: int,
    problems: list[Problem],
    field_line: Callable[[str], int] | None = None,
) -> IntakeRecord | None:
    before = len(problems)

    def at(key: str) -> int:
        return field_line(key) if field_line is not None and key in raw else line

    for key in raw:
        if key not in FIELDS:
            hint = did_you_mean(str(key), FIELDS) or f"; known fields: {', '.join(FIELDS)}"
            problems.append(Problem(path, at(str(key)), str(key), f"unknown field{hint}"))
    for key in REQUIRED:
        value = raw.get(key)
        if value is None or (isinstance(value, str | list) and not value):
            problems.append(Problem(path, at(key), key, "required field is missing or empty"))
    for key in ("ref", "what_went_wrong", "expected", "title", "source", "owner", "slice"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(Problem(path, at(key), key, f"must be a text, got {type(value).__name__}"))
    severity = raw.get("severity")
    if severity not in (None, "") and severity not in SEVERITIES:
        problems.append(
            Problem(
                path, at("severity"), "severity", f"must be one of {', '.join(SEVERITIES)} (got {severity!r})"
            )
        )
    for key in ("tools", "dimensions"):
        if _list_field(raw.get(key)) is None:
            problems.append(Problem(path, at(key), key, "must be a list of texts (or ';'-separated text)"))
    if len(problems) > before:
        return None
    messages = parse_conversation(raw["conversation"], path=path, line=at("conversation"))
    if isinstance(messages, Problem):
        problems.append(messages)
        return None
    extra = {k: v for k, v in raw.items() if k not in REQUIRED and v not in (None, "")}
    return IntakeRecord(
        str(raw["ref"]).strip(), messages, str(raw["what_went_wrong"]).strip(), extra, path, line
    )


def _doc_line(doc: Document, loc: tuple[str | int, ...], key: str) -> int:
    return doc.line_of((*loc, key))


def read_intake(path: str | os.PathLike[str]) -> list[IntakeRecord]:
    """Read an intake file (``.json`` or ``.csv``).

    Args:
        path: The file, as text or a path object.

    Raises:
        ProblemsError: Listing every missing, unknown or malformed field of every record (file, line,
            field), and repeated references within the file.
        JudgekitError: When the file is missing, of another kind, or not valid JSON/CSV at all.
    """
    path = Path(path)
    from judgekit.io.documents import decode_utf8, read_document

    if not path.is_file():
        raise JudgekitError(f"{path}: no such file")
    suffix = path.suffix.lower()
    problems: list[Problem] = []
    records: list[IntakeRecord] = []
    if suffix == ".json":
        doc = read_document(path)
        items = doc.data if isinstance(doc.data, list) else [doc.data]
        for i, item in enumerate(items):
            loc: tuple[str | int, ...] = (i,) if isinstance(doc.data, list) else ()
            line = doc.line_of(loc)
            if not isinstance(item, dict):
                problems.append(Problem(path, line, "", "a record must be an object of fields"))
                continue
            rec = _record(item, path, line, problems, functools.partial(_doc_line, doc, loc))
            if rec is not None:
                records.append(rec)
    elif suffix == ".csv":
        try:
            from judgekit.io.documents import read_regular

            text = decode_utf8(read_regular(path, "intake file"), path)
        except OSError as exc:
            raise JudgekitError(f"{path}: cannot read: {exc.strerror}") from None
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames:
            raise JudgekitError(f"{path}: the CSV file has no header row")
        for row in reader:
            line = reader.line_num
            if None in row:
                problems.append(Problem(path, line, "", "the row has more fields than the header"))
                continue
            clean = {k.strip(): v for k, v in row.items() if k is not None}
            if all(not (v or "").strip() for v in clean.values()):
                continue
            rec = _record({k: v for k, v in clean.items() if (v or "").strip()}, path, line, problems)
            if rec is not None:
                records.append(rec)
    else:
        raise JudgekitError(f"{path}: intake reads .json or .csv files (got '{suffix or 'no suffix'}')")
    seen: dict[str, int] = {}
    for rec in records:
        if rec.ref in seen:
            problems.append(
                Problem(
                    path, rec.line, "ref", f"incident {rec.ref!r} is also on line {seen[rec.ref]}; keep one"
                )
            )
        seen.setdefault(rec.ref, rec.line)
    if problems:
        raise ProblemsError(problems)
    if not records:
        raise JudgekitError(f"{path}: no incident records found")
    return records


# --------------------------------------------------------------------------- sanitising


class _Sanitiser:
    def __init__(self, names: Sequence[str], allow: Iterable[str]) -> None:
        from judgekit.secrets import Redactor

        self.names = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
        self.allow = tuple(allow)
        self.redactor = Redactor.from_environ()
        self.counts: Counter[str] = Counter()
        self.record_names: tuple[str, ...] = tuple(self.names)

    def start_record(self, texts: Iterable[str]) -> None:
        """Collect the names of one record: the ``--redact`` values and every name found in its texts.

        A name found once (``I'm Hana Sato``) is then replaced wherever it appears in the record's
        candidate, whole or by part (``Sorry, Hana``).
        """
        from judgekit.golden.pii import scan_text

        found = [f.value for text in texts for f in scan_text(text, allow=self.allow) if f.kind == "name"]
        self.record_names = tuple(dict.fromkeys([*self.names, *found]))

    def __call__(self, text: str) -> str:
        from judgekit.golden.pii import redact_personal_data, scan_text
        from judgekit.secrets import REDACTED

        out, findings = redact_personal_data(text, allow=self.allow, names=self.record_names)
        self.counts.update(f.kind for f in findings)
        for name in self.names:
            out, n = re.subn(re.escape(name), "[NAME]", out, flags=re.IGNORECASE)
            self.counts["name"] += n
        secret_free = self.redactor.text(out)
        if secret_free != out:
            self.counts["secret"] += secret_free.count(REDACTED) - out.count(REDACTED)
            out = secret_free
        left = scan_text(out, allow=self.allow, names=self.record_names)
        if left:  # redaction replaced every match, so a rescan finds nothing unless redaction has a bug
            raise JudgekitError(
                f"personal data survived sanitising ({left[0].describe()}); nothing was written",
                exit_code=1,  # a guard refusing to write personal data, not a mistake in the input
            )
        return out


def _id_part(ref: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", ref).strip("-._") or "incident"


def build_regression_candidates(
    records: Sequence[IntakeRecord],
    case_set: CaseSet,
    *,
    redact_names: Sequence[str] = (),
    id_prefix: str = "REG-CAND",
) -> IntakeResult:
    """Sanitise records and build one regression candidate per record (nothing is written here).

    Raises:
        ProblemsError: When a candidate would clash with a case id or file, or would not be a valid case.
    """
    result = IntakeResult()
    allow = case_set.manifest.synthetic_values if case_set.manifest else ()
    clean = _Sanitiser(redact_names, allow)
    linked = {c.case.source_incident: c.case.id for c in case_set.cases if c.case.source_incident}
    linked.update(
        {c.case.origin.ref: c.case.id for c in case_set.cases if c.case.origin and c.case.origin.ref}
    )
    ids = {c.case.id for c in case_set.cases}
    folder = candidates_dir(case_set)
    problems: list[Problem] = []
    for rec in records:
        if rec.ref in linked:
            result.skipped.append((rec.ref, linked[rec.ref]))
            continue
        f = rec.fields
        clean.start_record(
            [rec.ref, rec.what_went_wrong, *(t for _r, t in rec.messages)]
            + [str(f[k]) for k in ("expected", "title", "owner") if f.get(k)]
        )
        ref = clean(rec.ref)
        case_id = f"{id_prefix}-{_id_part(ref)}"
        target = folder / f"{case_id}.yaml"
        if case_id in ids or target.exists():
            problems.append(
                Problem(
                    rec.path, rec.line, "ref", f"a case or file named {case_id} already exists ({target})"
                )
            )
            continue
        user_turns = [clean(t) for r, t in rec.messages if r == "user"]
        agent_turns = [clean(t) for r, t in rec.messages if r == "assistant"]
        wrong = clean(rec.what_went_wrong)
        expected = clean(str(f["expected"])) if f.get("expected") else None
        data: dict[str, Any] = {"id": case_id, "version": 1}
        data["slice"] = str(f.get("slice") or "real_failures")
        data["category"] = "regression"
        data["severity"] = str(f.get("severity") or "high")
        if f.get("owner"):
            data["owner"] = clean(str(f["owner"]))
        data["source_incident"] = ref
        data["origin"] = {"type": str(f.get("source") or "incident"), "ref": ref, "redacted": True}
        dims = _list_field(f.get("dimensions")) or []
        if dims:
            data["dimensions"] = dims
        tools = _list_field(f.get("tools")) or []
        if tools:
            data["tools"] = tools
        if len(user_turns) == 1:
            data["input"] = user_turns[0]
        else:
            data["turns"] = [{"user": t} for t in user_turns]
        data["forbidden_outcomes"] = [wrong]
        acceptance = f"{REVIEW_PREFIX} the incident: {wrong}"
        if expected:
            acceptance += f" Expected instead: {expected}"
        acceptance += " Write the criterion the agent's reply and actions must meet."
        data["acceptance"] = acceptance
        title = clean(str(f["title"])) if f.get("title") else None
        header = f"# Regression candidate from {data['origin']['type']} {ref}"
        header += f": {title}\n" if title else "\n"
        header += f"# Intake: {rec.path.name} line {rec.line}; personal data replaced by placeholders.\n"
        if agent_turns:
            reply = agent_turns[-1].replace("\n", " ")
            header += f"# The agent's last reply in the incident: {reply[:300]}\n"
        header += (
            "# No gate reads it. Review it, write the acceptance, then: judgekit candidates promote <id>\n"
        )
        try:
            Case.model_validate(data)
        except Exception as exc:  # a pydantic ValidationError
            problems.append(
                Problem(rec.path, rec.line, "", f"the candidate would not be a valid case: {exc}")
            )
            continue
        ids.add(case_id)
        result.written.append(CandidateFile(case_id, target, data, header))
    if problems:
        raise ProblemsError(problems)
    result.redactions = clean.counts
    return result


def intake_incidents(
    path: str | os.PathLike[str],
    case_set: CaseSet,
    *,
    redact_names: Sequence[str] = (),
    id_prefix: str = "REG-CAND",
    dry_run: bool = False,
) -> IntakeResult:
    """Read an intake file, sanitise it, and write one regression candidate per new incident.

    ``path`` may be given as text or a path object.

    Raises:
        ProblemsError: Every located problem in the file or the candidates; nothing is written.
        JudgekitError: When the file cannot be read.
    """
    path = Path(path)
    records = read_intake(path)
    result = build_regression_candidates(records, case_set, redact_names=redact_names, id_prefix=id_prefix)
    if not dry_run:
        write_candidate_files(result.written)
    return result


class IntakeWritten(FrozenModel):
    """One regression candidate written (or, with ``--dry-run``, that would be).

    Attributes:
        id: The candidate's case id.
        file: Its file.
        source_incident: The incident record it came from (its ``ref``).
    """

    id: str
    file: str
    source_incident: str


class IntakeSkipped(FrozenModel):
    """An incident left out because a case already links it.

    Attributes:
        ref: The incident's ``ref``.
        case: The case that links it.
    """

    ref: str
    case: str


class IntakeDocument(FrozenModel):
    """An intake (the ``intake`` document ``judgekit candidates intake`` prints).

    Attributes:
        dry_run: Whether nothing was written.
        written: The candidates written, in order.
        skipped: The incidents already linked.
        redactions: Values replaced, per kind, sorted by kind.
        problems: Why the records or the set were refused (empty when they were not; nothing is written
            then).
    """

    dry_run: bool
    written: list[IntakeWritten] = Field(default_factory=list)
    skipped: list[IntakeSkipped] = Field(default_factory=list)
    redactions: dict[str, int] = Field(default_factory=dict)
    problems: list[LocatedProblem] = Field(default_factory=list)


def intake_document(result: IntakeResult, *, dry_run: bool) -> IntakeDocument:
    """The ``intake`` document of an intake.

    Args:
        result: What the intake wrote and skipped.
        dry_run: Whether nothing was written.

    Returns:
        The document (no problems: a refused intake never returns a result).
    """
    return IntakeDocument(
        dry_run=dry_run,
        written=[
            IntakeWritten(id=f.case_id, file=str(f.path), source_incident=f.data["source_incident"])
            for f in result.written
        ],
        skipped=[IntakeSkipped(ref=r, case=c) for r, c in result.skipped],
        redactions=dict(sorted(result.redactions.items())),
    )

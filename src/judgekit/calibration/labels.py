"""Label tables: the long (item, rater, label) table that calibration compares raters on.

A label table has one row per rating: ``item_id``, ``rater``, ``label``, and optionally ``criterion``,
``case_id``, ``confidence``, ``fingerprint``, ``provenance`` (``random`` for an item from a random
production sample, ``discovery`` for a hand-picked one; see :mod:`judgekit.calibration.guards`),
``notes`` (the rater's free-text reason, kept and never compared) and ``saw_judge`` (``yes`` when the
rater saw the judge's verdict before labelling, ``no`` when they labelled blind; empty when unknown).
An *item* is one case × trial × criterion: the pair
(``item_id``, ``criterion``) identifies it (``item_id`` names the case and trial, ``criterion`` the
criterion; a table without criteria has one item per ``item_id``). The *case* an item belongs to is
``case_id`` when given, else ``item_id``: bootstrap intervals resample cases, so the criteria (and, with
``case_id``, the trials) of one case move together.

Labels come from a declared :class:`Scale`. The default is the verdict scale (``pass`` / ``fail``, with
``insufficient_information`` as the abstain label). An ordinal scale must be declared with its values in
order; judgekit never guesses an order from the labels it sees. The ``pairwise`` scale
(:data:`PAIRWISE_SCALE`) holds pairwise judgments: ``A`` (the first-shown output is better), ``B`` (the
second-shown one is) and ``tie``, exactly so spelled; it has no pass/fail class, so the binary metrics
(TPR, TNR, precision, F1) are undefined on it with a reason while agreement metrics are computed.

Parsing works on text the caller has read (this module never opens files), and every mistake is
reported as a located :class:`~judgekit.errors.Problem` (file, line, field).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import Field, model_validator

from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.io.documents import json_error_detail, jsonl_lines, load_json_bounded
from judgekit.verdict import FrozenModel

__all__ = [
    "LEVELS",
    "PAIRWISE_SCALE",
    "VERDICT_SCALE",
    "ItemKey",
    "LabelRow",
    "LabelTable",
    "Level",
    "Scale",
    "check_items_have_two_raters",
    "check_raters",
    "default_experts",
    "looks_like_model",
    "parse_labels",
    "parse_scale_option",
    "table_sha256",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")

REQUIRED_COLUMNS = ("item_id", "rater", "label")
OPTIONAL_COLUMNS = ("criterion", "case_id", "confidence", "fingerprint", "provenance", "notes", "saw_judge")
PROVENANCES = ("random", "discovery")
"""Where an item came from: a random production sample, or hand-picked during discovery."""
SAW_JUDGE = {"yes": True, "no": False}
"""``saw_judge`` values: the rater saw the judge's verdict (``yes``) or labelled blind (``no``)."""
KNOWN_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
_K = TypeVar("_K")


class Scale(FrozenModel):
    """The labels raters may give, their order, and which of them mean "fail" and "abstain".

    Attributes:
        name: A short name shown in reports.
        values: The substantive labels. For ``ordinal``, ``interval`` and ``ratio`` levels they are in
            increasing order; for ``nominal`` the order only fixes how tables are printed.
        level: Level of measurement of ``values``; metrics are reported at this level and every level
            below it (alpha at ``nominal`` is always reported).
        positive: Labels that count as the positive class (a failure caught) for TPR, TNR, precision,
            F1 and base rate. Empty means the binary metrics are undefined (reported with that reason).
        abstain: The label a rater gives when the evidence does not decide (``insufficient_information``
            on the verdict scale), or ``None``. Abstentions are missing values for agreement metrics and
            are counted separately (coverage, abstention).
    """

    name: str = "custom"
    values: tuple[str, ...] = Field(min_length=2)
    level: Level = "nominal"
    positive: tuple[str, ...] = ()
    abstain: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Scale:
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"scale values repeat: {list(self.values)}")
        unknown = [p for p in self.positive if p not in self.values]
        if unknown:
            raise ValueError(f"positive labels {unknown} are not scale values {list(self.values)}")
        if self.positive and len(self.positive) == len(self.values):
            raise ValueError("positive labels cannot be every scale value (nothing would be negative)")
        if self.abstain is not None and self.abstain in self.values:
            raise ValueError(f"the abstain label {self.abstain!r} must not also be a scale value")
        if self.level in ("interval", "ratio") and self.numeric_values() is None:
            raise ValueError(f"level {self.level!r} needs numeric labels, got {list(self.values)}")
        return self

    @property
    def domain(self) -> tuple[str, ...]:
        """Every label a rater may give: the scale values, then the abstain label if any."""
        return self.values + ((self.abstain,) if self.abstain is not None else ())

    def numeric_values(self) -> tuple[float, ...] | None:
        """The values as numbers when every value is a finite number, else ``None``."""
        out: list[float] = []
        for v in self.values:
            try:
                x = float(v)
            except ValueError:
                return None
            if not math.isfinite(x):
                return None
            out.append(x)
        return tuple(out)

    def levels(self) -> tuple[Level, ...]:
        """The levels alpha is reported at: ``nominal`` up to and including :attr:`level`."""
        return LEVELS[: LEVELS.index(self.level) + 1]

    @property
    def no_positive_reason(self) -> str:
        """Why the binary metrics (TPR, TNR, precision, F1) are undefined on a scale without positives."""
        if self.name == "pairwise":
            return (
                "a pairwise scale (A, B, tie) has no pass/fail class, so failure detection cannot be "
                "evaluated on it (set the condition to null in the policy to gate on agreement alone)"
            )
        return "the scale declares no positive (failing) labels"


VERDICT_SCALE = Scale(
    name="verdict",
    values=("pass", "fail"),
    level="nominal",
    positive=("fail",),
    abstain="insufficient_information",
)
"""The default scale: pass / fail verdicts, ``insufficient_information`` as abstention, fail positive."""

PAIRWISE_SCALE = Scale(name="pairwise", values=("A", "B", "tie"), level="nominal")
"""Pairwise judgments: ``A`` the first-shown output is better, ``B`` the second-shown one, ``tie`` neither.

Nominal (no order between A, B and tie), no positive class (no pass/fail), no abstain label.
"""


def parse_scale_option(
    values: str, *, level: str = "ordinal", positive: str = "", abstain: str | None = None
) -> Scale:
    """Build a :class:`Scale` from command-line text such as ``"poor,fair,good"`` (listed in order).

    ``"pairwise"`` names :data:`PAIRWISE_SCALE` (labels ``A``, ``B``, ``tie``; nominal, no positive class,
    no abstain label); other spellings of a pairwise judgment are declared as a nominal scale of their own
    (``--scale first,second,equal --level nominal``), never mapped by guessing.

    Args:
        values: Comma-separated labels in increasing order, or ``pairwise``.
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.
        positive: Comma-separated labels that count as failures (may be empty).
        abstain: The abstain label, or ``None``.

    Returns:
        The scale.

    Raises:
        JudgekitError: When the declaration is inconsistent (repeated values, an unknown positive label,
            a non-numeric label at interval level, fewer than two values).
    """
    vals = tuple(v.strip() for v in values.split(",") if v.strip())
    pos = tuple(v.strip() for v in positive.split(",") if v.strip())
    if vals == ("pairwise",):
        if pos or abstain:
            raise JudgekitError(
                "--scale pairwise: a pairwise scale (A, B, tie) has no failing labels and no abstain label; "
                "drop --positive and --abstain"
            )
        return PAIRWISE_SCALE
    if level not in LEVELS:
        raise JudgekitError(f"--level: {level!r} is not one of {', '.join(LEVELS)}")
    try:
        return Scale(name="declared", values=vals, level=level, positive=pos, abstain=abstain or None)
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        detail = "; ".join(str(e.get("msg", e)) for e in errors()) if callable(errors) else str(exc)
        raise JudgekitError(f"--scale: {detail}") from None


@dataclass(frozen=True, slots=True, order=True)
class ItemKey:
    """One rated item: a case × trial (``item_id``) and a criterion (``""`` when the table has none)."""

    item_id: str
    criterion: str = ""

    def __str__(self) -> str:
        return f"{self.item_id}/{self.criterion}" if self.criterion else self.item_id


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One validated row of a label table, with the line it came from.

    ``notes`` is the rater's free text (``None`` when the row has none); ``saw_judge`` is True when the
    rater saw the judge's verdict before labelling, False when they labelled blind, ``None`` when unknown.
    """

    item: ItemKey
    rater: str
    label: str
    line: int
    case_id: str
    confidence: float | None = None
    fingerprint: str | None = None
    provenance: str | None = None
    notes: str | None = None
    saw_judge: bool | None = None


@dataclass(frozen=True)
class LabelTable:
    """A validated label table: at most one label per (item, rater), every label in the scale's domain.

    Attributes:
        scale: The scale every label belongs to.
        rows: The distinct ratings, in file order.
        source: The file the table came from (for messages), or ``None``.
        sha256: SHA-256 of the table's bytes as read (recorded in calibration records).
        notes: Things judgekit did to the table that a reader should know (collapsed exact duplicates).
    """

    scale: Scale
    rows: tuple[LabelRow, ...]
    source: Path | None = None
    sha256: str = ""
    notes: tuple[str, ...] = ()
    _by_key: dict[tuple[ItemKey, str], LabelRow] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_key.clear()
        for r in self.rows:
            self._by_key[(r.item, r.rater)] = r

    @property
    def raters(self) -> tuple[str, ...]:
        """Every rater in the table, in order of first appearance."""
        return tuple(dict.fromkeys(r.rater for r in self.rows))

    @property
    def items(self) -> tuple[ItemKey, ...]:
        """Every item in the table, sorted."""
        return tuple(sorted({r.item for r in self.rows}))

    def label(self, item: ItemKey, rater: str) -> str | None:
        """The label ``rater`` gave ``item``, or ``None`` when they did not rate it."""
        row = self._by_key.get((item, rater))
        return None if row is None else row.label

    def row(self, item: ItemKey, rater: str) -> LabelRow | None:
        """The row of ``rater``'s label for ``item``, or ``None``."""
        return self._by_key.get((item, rater))

    def case_of(self) -> dict[ItemKey, str]:
        """Map each item to the case it belongs to (resampling unit)."""
        return {r.item: r.case_id for r in self.rows}

    def fingerprints(self) -> dict[str, str]:
        """Map each rater with a ``fingerprint`` column value to it."""
        return {r.rater: r.fingerprint for r in self.rows if r.fingerprint}

    def provenance(self) -> dict[ItemKey, str]:
        """Each item's ``provenance`` (``random`` or ``discovery``), for items whose rows give one."""
        return {r.item: r.provenance for r in self.rows if r.provenance is not None}

    def confidences(self, rater: str) -> dict[ItemKey, float]:
        """The ``confidence`` values ``rater`` gave, by item."""
        return {r.item: r.confidence for r in self.rows if r.rater == rater and r.confidence is not None}


def table_sha256(data: bytes) -> str:
    """SHA-256 hex digest of a label table's bytes."""
    return hashlib.sha256(data).hexdigest()


def _detect_format(source: Path | None, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in ("csv", "tsv", "jsonl"):
            raise JudgekitError(f"label format {fmt!r} is not csv, tsv or jsonl")
        return fmt
    suffix = source.suffix.lower() if source is not None else ""
    if suffix == ".csv":
        return "csv"
    if suffix == ".tsv":
        return "tsv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise JudgekitError(
        f"{source}: cannot tell the label table's format from its name; use a .csv, .tsv or .jsonl file"
    )


def table_text(data: str | bytes, source: Path | None, *, not_utf8: str) -> str:
    """The text of a table file (a leading byte-order mark dropped).

    Args:
        data: The file's bytes or text.
        source: The file, for the message.
        not_utf8: What the message says when the bytes are not UTF-8 (``the label table is not UTF-8
            text``); the offending byte's offset follows it.

    Raises:
        JudgekitError: ``<source>: <not_utf8> (byte <offset>)`` when the bytes are not UTF-8.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JudgekitError(f"{source}: {not_utf8} (byte {exc.start})") from None


def table_rows(
    text: str,
    source: Path | None,
    fmt: str,
    *,
    known: Sequence[str] = KNOWN_COLUMNS,
    required: Sequence[str] = REQUIRED_COLUMNS,
) -> Iterable[tuple[int, dict[str, object]]]:
    """The rows of a CSV, TSV or JSONL table as ``(line, {column: value})``, the header checked.

    Args:
        text: The file's text.
        source: The file, for error locations.
        fmt: ``csv``, ``tsv`` or ``jsonl``.
        known: The columns a header may name (CSV and TSV).
        required: The columns a header must name (CSV and TSV; JSONL objects are checked by the caller).

    Raises:
        ProblemsError: An unknown, missing or repeated column, a row with the wrong number of fields, a
            JSONL line that is not a JSON object; each located to its file and line.
    """
    if fmt in ("csv", "tsv"):
        reader = csv.reader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ",")
        header: list[str] | None = None
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row):
                continue
            if header is None:
                header = [c.strip() for c in row]
                unknown = [c for c in header if c not in known]
                missing = [c for c in required if c not in header]
                problems = [
                    Problem(source, line, c, f"unknown column; known columns: {', '.join(known)}")
                    for c in unknown
                ]
                problems += [Problem(source, line, c, "required column is missing") for c in missing]
                if len(set(header)) != len(header):
                    problems.append(Problem(source, line, "", "a column name repeats in the header"))
                if problems:
                    raise ProblemsError(problems)
                continue
            if len(row) != len(header):
                raise ProblemsError(
                    [Problem(source, line, "", f"row has {len(row)} fields, the header has {len(header)}")]
                )
            yield line, dict(zip(header, row, strict=True))
        return
    for line, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            obj = load_json_bounded(raw, source=source, line=line)
        except LocatedError as exc:
            detail = json_error_detail(exc.problem.message)
            raise ProblemsError(
                [Problem(source, exc.problem.line, "", f"not valid JSON: {detail}")]
            ) from None
        if not isinstance(obj, dict):
            raise ProblemsError([Problem(source, line, "", "each line must be a JSON object")])
        yield line, obj


def _first_seen(seen: dict[_K, tuple[str, int]], key: _K, value: str, line: int) -> tuple[str, int] | None:
    """The (value, line) ``key`` was first seen with when it differs from ``value``, else ``None``.

    When ``value`` agrees (or ``key`` is new), ``seen`` keeps the first (value, line) of ``key``.
    """
    prev = seen.get(key)
    if prev is not None and prev[0] != value:
        return prev
    seen.setdefault(key, (value, line))
    return None


def _text_field(
    obj: dict[str, object], name: str, line: int, source: Path | None, problems: list[Problem]
) -> str | None:
    value = obj.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if name in REQUIRED_COLUMNS:
            problems.append(Problem(source, line, name, "required field is missing or empty"))
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.append(Problem(source, line, name, f"must be a string, got {type(value).__name__}"))
        return None
    return str(value).strip()


def _saw_judge(value: object, line: int, source: Path | None, problems: list[Problem]) -> bool | None:
    """The ``saw_judge`` field: ``yes``/``no`` (JSONL: also true/false); empty or absent is ``None``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in SAW_JUDGE:
        return SAW_JUDGE[value.strip().lower()]
    problems.append(
        Problem(
            source,
            line,
            "saw_judge",
            f"{value!r} is not yes or no (yes: the rater saw the judge's verdict; no: labelled blind)",
        )
    )
    return None


def parse_labels(
    data: bytes | str,
    *,
    source: str | os.PathLike[str] | None = None,
    fmt: str | None = None,
    scale: Scale = VERDICT_SCALE,
) -> LabelTable:
    """Parse and validate a long label table.

    Args:
        data: The table's bytes (or text) as read from ``source``.
        source: Where it came from, for messages and format detection (``.csv``, ``.tsv`` or ``.jsonl``),
            as text or a path object.
        fmt: ``csv``, ``tsv`` or ``jsonl`` to override detection.
        scale: The scale every label must belong to.

    Returns:
        The validated table. Rows that repeat an (item, rater) pair with the *same* label are collapsed
        into one, and the table's ``notes`` say how many.

    Raises:
        ProblemsError: Every located problem found: a missing or unknown column, an empty field, a label
            outside the scale's domain, a confidence that is not a number in [0, 1], a ``saw_judge`` that is
            not yes or no, the same (item,
            rater) twice with different labels, one item under two case ids, one rater with two
            fingerprints, an empty table.
        JudgekitError: When the bytes are not UTF-8 or the format cannot be told.
    """
    source = Path(source) if source is not None else None
    raw = data.encode("utf-8") if isinstance(data, str) else data
    text = table_text(raw, source, not_utf8="the label table is not UTF-8 text")
    kind = _detect_format(source, fmt)
    problems: list[Problem] = []
    rows: list[LabelRow] = []
    seen: dict[tuple[ItemKey, str], LabelRow] = {}
    case_seen: dict[ItemKey, tuple[str, int]] = {}
    fp_seen: dict[str, tuple[str, int]] = {}
    prov_seen: dict[ItemKey, tuple[str, int]] = {}
    duplicates = 0
    domain = scale.domain
    for line, obj in table_rows(text, source, kind):
        if kind == "jsonl":
            for key in obj:
                if key not in KNOWN_COLUMNS:
                    problems.append(
                        Problem(source, line, key, f"unknown field; known fields: {', '.join(KNOWN_COLUMNS)}")
                    )
        item_id = _text_field(obj, "item_id", line, source, problems)
        rater = _text_field(obj, "rater", line, source, problems)
        label = _text_field(obj, "label", line, source, problems)
        criterion = _text_field(obj, "criterion", line, source, problems) or ""
        case_id = _text_field(obj, "case_id", line, source, problems)
        fingerprint = _text_field(obj, "fingerprint", line, source, problems)
        provenance = _text_field(obj, "provenance", line, source, problems)
        if provenance is not None and provenance not in PROVENANCES:
            problems.append(
                Problem(
                    source,
                    line,
                    "provenance",
                    f"{provenance!r} is not one of {list(PROVENANCES)} (random: a random production sample; "
                    "discovery: hand-picked)",
                )
            )
            provenance = None
        row_notes = _text_field(obj, "notes", line, source, problems)
        saw_judge = _saw_judge(obj.get("saw_judge"), line, source, problems)
        confidence: float | None = None
        raw_conf = obj.get("confidence")
        if raw_conf is not None and not (isinstance(raw_conf, str) and not raw_conf.strip()):
            try:
                if isinstance(raw_conf, bool):
                    raise TypeError
                confidence = float(raw_conf)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                confidence = None
                problems.append(Problem(source, line, "confidence", f"not a number: {raw_conf!r}"))
            else:
                if not (math.isfinite(confidence) and 0.0 <= confidence <= 1.0):
                    problems.append(Problem(source, line, "confidence", f"must be in [0, 1], got {raw_conf}"))
                    confidence = None
        if label is not None and label not in domain:
            hint = ""
            if scale == VERDICT_SCALE:
                hint = (
                    "; declare the table's scale: --scale pairwise for A/B/tie judgments, or the values "
                    "in order (--scale 1,2,3,4,5)"
                )
            problems.append(
                Problem(source, line, "label", f"{label!r} is not in the scale's domain {list(domain)}{hint}")
            )
            continue
        if item_id is None or rater is None or label is None:
            continue
        item = ItemKey(item_id, criterion)
        case = case_id if case_id is not None else item_id
        prev_case = _first_seen(case_seen, item, case, line)
        if prev_case is not None:
            message = (
                f"item {item} is in case {case!r} here but in case {prev_case[0]!r} on line {prev_case[1]}"
            )
            problems.append(Problem(source, line, "case_id", message))
            continue
        prev_prov = _first_seen(prov_seen, item, provenance, line) if provenance is not None else None
        if prev_prov is not None:
            message = (
                f"item {item} is {provenance!r} here but {prev_prov[0]!r} on line {prev_prov[1]}; "
                "an item has one provenance"
            )
            problems.append(Problem(source, line, "provenance", message))
            continue
        prev_fp = _first_seen(fp_seen, rater, fingerprint, line) if fingerprint is not None else None
        if prev_fp is not None:
            message = (
                f"rater {rater!r} has a different fingerprint on line {prev_fp[1]}; "
                "one label table calibrates one grader version per rater"
            )
            problems.append(Problem(source, line, "fingerprint", message))
            continue
        row = LabelRow(
            item, rater, label, line, case, confidence, fingerprint, provenance, row_notes, saw_judge
        )
        prev = seen.get((item, rater))
        if prev is not None:
            if prev.label != label:
                problems.append(
                    Problem(
                        source,
                        line,
                        "label",
                        f"rater {rater!r} labelled item {item} {label!r} here but {prev.label!r} on line "
                        f"{prev.line}; keep one label per (item, rater)",
                    )
                )
            else:
                duplicates += 1
            continue
        seen[(item, rater)] = row
        rows.append(row)
    if problems:
        raise ProblemsError(problems)
    if not rows:
        raise ProblemsError([Problem(source, None, "", "the label table has no labels")])
    notes = (
        (f"{duplicates} row(s) repeated an (item, rater) pair with the same label and were counted once",)
        if duplicates
        else ()
    )
    return LabelTable(scale=scale, rows=tuple(rows), source=source, sha256=table_sha256(raw), notes=notes)


_MODEL_WORDS = re.compile(
    r"gpt|claude|gemini|llama|mistral|mixtral|qwen|deepseek|grok|judge|llm|(?<![a-z0-9])o[1-9](?![a-z0-9])",
    re.IGNORECASE,
)


def looks_like_model(rater: str) -> bool:
    """Whether a rater's name looks like a model's rather than a person's.

    True when the name holds a model family's word (``gpt``, ``claude``, ``gemini``, ``llama``,
    ``mistral``, ``mixtral``, ``qwen``, ``deepseek``, ``grok``, ``llm``), the word ``judge``, an OpenAI
    reasoning model's name (``o1``, ``o3-mini``: ``o`` and a digit standing alone), or a slash (litellm's
    ``provider/model`` form), in any case. A guess from the name only: it decides nothing but whether the
    default experts are refused (:func:`default_experts`); ``--experts`` names them whatever they are
    called.

    Args:
        rater: A rater name from a label table.
    """
    return "/" in rater or _MODEL_WORDS.search(rater) is not None


def default_experts(table: LabelTable, judges: Sequence[str]) -> tuple[str, ...]:
    """The experts when none are named: the one rater besides the judges, when it looks like a person.

    Every command and API function that takes experts (``--experts``) and may be given none calls this,
    so the default is refused in one place. Taking every other rater as an expert would silently make a
    second model an expert when a table holds several models' labels; so the default is refused when
    more than one rater besides the judges is in the table, or when that rater looks like a model
    (:func:`looks_like_model`).

    Args:
        table: The validated table.
        judges: The rater(s) whose labels are being measured (the judge, or a cascade's stages); empty
            when no judge is named.

    Returns:
        The one other rater, or nothing when the table has no rater besides the judges (the caller then
        says no expert is left).

    Raises:
        JudgekitError: (exit 2) When more than one rater besides the judges is present, or the one
            present looks like a model; the message lists the raters and says to pass ``--experts``.
    """
    others = tuple(r for r in table.raters if r not in judges)
    if len(others) <= 1 and not any(looks_like_model(r) for r in others):
        return others
    where = f"{table.source}: " if table.source is not None else ""
    named = ", ".join(f"{r!r}" + (" (looks like a model)" if looks_like_model(r) else "") for r in others)
    measured = f"besides {', '.join(map(repr, judges))} " if judges else ""
    if len(others) > 1:
        problem = f"the table has {len(others)} raters {measured}({named}), and taking them all as experts"
    else:
        problem = f"the only rater {measured}is {named}, and taking it as the expert"
    people = [r for r in others if not looks_like_model(r)] or others
    raise JudgekitError(
        f"{where}--experts not given: {problem} would measure the judge against whoever else is in the "
        f"table; name the experts with --experts NAME[,NAME...] (e.g. --experts {','.join(people)}; "
        "Python: experts=[...])",
        exit_code=2,
    )


def check_raters(table: LabelTable, judge: str, experts: Sequence[str] | None) -> tuple[str, ...]:
    """Check the judge and expert names against the table and return the experts to use.

    Args:
        table: The validated table.
        judge: The rater whose labels are the judge's verdicts.
        experts: The expert raters, or ``None`` for the default (:func:`default_experts`: the one other
            rater, refused when there are several or it looks like a model).

    Returns:
        The experts, in the order given (or of first appearance).

    Raises:
        JudgekitError: When the judge or an expert is not a rater in the table, the judge is also listed
            as an expert, an expert repeats, no expert is left, or the default experts are ambiguous.
    """
    raters = table.raters
    where = f"{table.source}: " if table.source is not None else ""
    if judge not in raters:
        raise JudgekitError(
            f"{where}--judge: unknown rater {judge!r}; raters in the table: {', '.join(raters)}"
        )
    chosen = default_experts(table, (judge,)) if experts is None else tuple(experts)
    unknown = [e for e in chosen if e not in raters]
    if unknown:
        raise JudgekitError(
            f"{where}--experts: unknown rater(s) {', '.join(map(repr, unknown))}; "
            f"raters in the table: {', '.join(raters)}"
        )
    if judge in chosen:
        raise JudgekitError(f"--experts: the judge {judge!r} cannot also be an expert")
    if len(set(chosen)) != len(chosen):
        raise JudgekitError("--experts: an expert is listed twice")
    if not chosen:
        raise JudgekitError(f"{where}no expert raters: the table has only the judge {judge!r}")
    return chosen


def check_items_have_two_raters(table: LabelTable, raters: Sequence[str]) -> None:
    """Refuse items that only one of ``raters`` labelled: nothing can be compared on them.

    Raises:
        ProblemsError: One problem per such item, at the line of its only label.
    """
    wanted = set(raters)
    by_item: dict[ItemKey, list[LabelRow]] = {}
    for r in table.rows:
        if r.rater in wanted:
            by_item.setdefault(r.item, []).append(r)
    problems = [
        Problem(
            table.source,
            rs[0].line,
            "item_id",
            f"item {item} is labelled only by {rs[0].rater!r}; every item needs at least two raters "
            "(remove it or add another rater's label)",
        )
        for item, rs in sorted(by_item.items())
        if len(rs) == 1
    ]
    if problems:
        raise ProblemsError(problems)

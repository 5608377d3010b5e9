"""The case contract: one golden task, its parts, and validating one case mapping.

One model family, :class:`Case`, reads the three task shapes judgekit's users write:

* the **task contract** in JSON (insurer style): ``id``, ``version``, ``slice``, ``origin``, ``user``
  (persona, opening, hidden facts), ``initial_state``, ``tools``, ``expected_state``, ``forbidden``
  (tool + condition rules), ``response_rubric``, ``reference_solution``, ``policy_refs``,
  ``signed_off_by``;
* the **bank case** in YAML: ``category``, ``severity``, ``owner``, ``dimensions``, ``identity``,
  ``input`` or ``turns``, ``paraphrases``, ``expected`` (route, sources, must/must-not mention, reference
  answer, outcome), ``prohibited``, ``acceptance``, ``source_incident``;
* the **plain task contract** in YAML: ``initial_state``, ``user_goal``, ``required_outcome``,
  ``forbidden_outcomes``.

Fields keep their authors' names so a case file reads as written; derived views (:meth:`Case.questions`,
:meth:`Case.rules`, :meth:`Case.covered_tools`, :meth:`Case.texts`) give every consumer one way to read
them. Unknown fields are rejected with a did-you-mean. Reading a set of case files and the set-level rules
(unique ids, candidates, fixture files) live in :mod:`judgekit.caseset`
(:func:`~judgekit.caseset.load_case_set`).
"""

from __future__ import annotations

import math
import os
import re
import types
import typing
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Discriminator,
    Field,
    JsonValue,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from judgekit.errors import Problem, closest_name, did_you_mean
from judgekit.io.documents import Document, format_loc
from judgekit.patterns import pattern_problem
from judgekit.textnorm import REVIEW_GUARD
from judgekit.verdict import FailureCategory, FrozenModel

__all__ = [
    "CASE_ID_RULE",
    "PATH_MAX_CHARS",
    "QUESTION_CHAR_LIMIT",
    "REVIEW_PREFIX",
    "Case",
    "CasePath",
    "DoNothing",
    "Expected",
    "ExpectedCall",
    "ExpectedState",
    "FieldPredicate",
    "Flag",
    "ForbiddenRule",
    "Integer",
    "Origin",
    "Retirement",
    "TableChange",
    "TextLiteral",
    "TextPattern",
    "Turn",
    "UserSimulation",
    "check_path_text",
    "confine_path",
    "is_case_id",
    "parse_case",
    "review_guard_text",
    "spelled",
    "starts_with_review_marker",
    "value_kind",
]

QUESTION_CHAR_LIMIT = 1000
"""Longest question some export targets accept (Copilot Studio caps test questions at 1,000 characters)."""

REVIEW_PREFIX = "REVIEW:"
"""An acceptance criterion starting with this is unreviewed: allowed only among candidates. The guard reads
the text as :func:`review_guard_text` gives it, so invisible characters, compatibility forms (fullwidth
letters) and letter case do not hide the marker."""

PATH_MAX_CHARS = 1024
"""Longest path a case or manifest may name, in characters; a longer one is refused when the case loads."""

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*\Z")

CASE_ID_RULE = "letters, digits and ._:/- only, starting with a letter or digit"
"""What a case id may hold, as an error says it."""


def is_case_id(value: str) -> bool:
    """Whether ``value`` has the shape of a case id (:data:`CASE_ID_RULE`; ``False`` for an empty text)."""
    return _ID_PATTERN.match(value) is not None


# --------------------------------------------------------------------------- the review guard

_REVIEW_MARKER = re.compile(r"review\s*:")
_MARKER_WORD = re.compile(r"([^\W\d_]+)\s*:")
_REVIEW_WORD = "review"


def _lookalike_review_word(folded: str) -> bool:
    """Whether folded text starts with ``review:`` spelt with letters of another script in it.

    A mixed-script word (UTS #39's "mixed-script confusable"): six letters before the colon, some of them
    ASCII, every ASCII one in its place in ``review``, the others not ASCII (``rеvіеw:`` with Cyrillic
    ``е`` and ``і``). A word written wholly in another script is an ordinary word.
    """
    found = _MARKER_WORD.match(folded)
    if found is None:
        return False
    word = found.group(1)
    if len(word) != len(_REVIEW_WORD) or word.isascii():
        return False
    ascii_at = [(c, want) for c, want in zip(word, _REVIEW_WORD, strict=True) if c.isascii()]
    return bool(ascii_at) and all(c == want for c, want in ascii_at)


def review_guard_text(text: str) -> str:
    """The text as the review guard reads it, so that nothing invisible or look-alike hides a marker.

    The text is decomposed (NFKD), stripped of every character in an invisible category (controls, format
    characters such as the zero-width space and the byte order mark, combining marks...) and of the Hangul
    fillers, recomposed (NFKC, so fullwidth ``ＲＥＶＩＥＷ：`` reads as ``REVIEW:``), stripped of leading
    whitespace and case-folded: the profile :data:`judgekit.textnorm.REVIEW_GUARD`.

    Args:
        text: An acceptance criterion as written.

    Returns:
        The folded text (for checks only; never shown or stored).
    """
    return REVIEW_GUARD.apply(text)


def starts_with_review_marker(text: str | None) -> bool:
    """Whether an acceptance criterion starts with :data:`REVIEW_PREFIX`, read as :func:`review_guard_text`.

    ``REVIEW:``, ``review:``, ``Review :``, ``\u200bREVIEW:`` (a zero-width space first), the fullwidth
    ``ＲＥＶＩＥＷ：`` and ``RЕVIЕW:`` with Cyrillic ``Е`` (letters of another script among the Latin
    ones) all count.

    Examples:
        >>> starts_with_review_marker("\u200bReview : confirm the amount")
        True
        >>> starts_with_review_marker("R\u0415VI\u0415W: confirm the amount")  # Cyrillic Е twice
        True
        >>> starts_with_review_marker("REVIEWED: by legal")
        False
    """
    if not text:
        return False
    folded = review_guard_text(text)
    return _REVIEW_MARKER.match(folded) is not None or _lookalike_review_word(folded)


# --------------------------------------------------------------------------- paths a case names

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def check_path_text(value: str) -> str:
    """Refuse path text that is never a file inside a case set, on any system.

    Refused: control characters (a NUL byte among them), more than :data:`PATH_MAX_CHARS` characters,
    backslashes (write ``/``), Windows drive paths (``C:...``) and URLs (``file://...``). Whether the path
    stays inside the set (``..``, absolute paths, symbolic links) is checked against the set's root when
    the set loads (:func:`confine_path`).

    Args:
        value: A path as written in a case or manifest; the empty text means none and is kept.

    Returns:
        ``value``, unchanged.

    Raises:
        ValueError: Saying what is wrong and what to write instead.
    """
    if len(value) > PATH_MAX_CHARS:
        raise ValueError(
            f"the path is {len(value)} characters long, over the limit of {PATH_MAX_CHARS} (PATH_MAX_CHARS); "
            "name a file inside the set with a shorter path"
        )
    bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise ValueError(
            f"the path holds the control character U+{ord(bad):04X}; a path is plain text relative to the "
            "set's root, such as fixtures/base.sql"
        )
    if "\\" in value or value.startswith("//"):
        raise ValueError(
            f"{value!r} uses '\\' or starts with '//' (a Windows or network path); write paths with '/' "
            "relative to the set's root, such as fixtures/base.sql"
        )
    if _WINDOWS_DRIVE.match(value):
        raise ValueError(
            f"{value!r} is a Windows drive path; write paths with '/' relative to the set's root, such as "
            "fixtures/base.sql"
        )
    if _URL_SCHEME.match(value):
        raise ValueError(
            f"{value!r} is a URL; name a file relative to the set's root, such as fixtures/base.sql"
        )
    return value


CasePath = Annotated[str, AfterValidator(check_path_text)]
"""A path a case or manifest names: plain text, relative to the set's root (see :func:`check_path_text`)."""


# --------------------------------------------------------------------------- strict scalars


def _integer(value: Any) -> int:
    """Accept an int as written; refuse booleans (``true`` is not 1), floats and numeric text."""
    if isinstance(value, bool):
        raise ValueError(f"must be an integer, found boolean {spelled(value)} (booleans are not integers)")
    if not isinstance(value, int):
        numeric_text = isinstance(value, str) and value.strip().isdigit()
        hint = " (write the number without quotes)" if numeric_text else ""
        raise ValueError(f"must be an integer, found {value_kind(value)} {spelled(value)}{hint}")
    return value


def _flag(value: Any) -> bool:
    """Accept ``true`` or ``false`` as written; refuse numbers (``1`` is not true) and text."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, found {value_kind(value)} {spelled(value)}")
    return value


Integer = Annotated[int, BeforeValidator(_integer)]
"""A whole number as written: booleans, floats (``2.0``) and numeric text (``"2"``) are refused."""

Flag = Annotated[bool, BeforeValidator(_flag)]
"""``true`` or ``false`` as written: numbers (``1``, ``0``) and text (``"yes"``) are refused."""


def confine_path(
    written: str | os.PathLike[str],
    root: str | os.PathLike[str],
    allowed_roots: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Resolve a path a case names and check that it stays inside the case set.

    The path is joined to ``root`` (an absolute path is taken as it is) and resolved: ``..`` and every
    symbolic link are followed. The result must be ``root`` itself or inside it, or inside one of
    ``allowed_roots``.

    Args:
        written: The path as the case or manifest writes it.
        root: The case set's root folder.
        allowed_roots: Other folders the set allows files from (the manifest's ``allowed_roots``, absolute
            or relative to ``root``).

    Returns:
        The resolved path (it need not exist).

    Raises:
        ValueError: The path cannot be resolved (a symbolic link loop, a name too long) or resolves
            outside the set; the message says where it leads and what to do.
    """
    text = os.fspath(written)
    check_path_text(text)
    base = Path(os.path.abspath(root))
    try:
        base = base.resolve()
        resolved = (base / text).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise ValueError(
            f"'{text}' cannot be resolved ({exc}); name a file inside the set's root {base}"
        ) from None
    if resolved == base or resolved.is_relative_to(base):
        return resolved
    extra: list[Path] = []
    for allowed in allowed_roots:
        try:
            extra.append((base / allowed).resolve())
        except (OSError, RuntimeError, ValueError):
            continue  # an allowed root that cannot be resolved allows nothing (the set's load reports it)
    for allowed in extra:
        if resolved == allowed or resolved.is_relative_to(allowed):
            return resolved
    how = "'..' and symbolic links followed" if not Path(text).is_absolute() else "an absolute path"
    allowed_note = f" or its allowed roots ({', '.join(str(a) for a in extra)})" if extra else ""
    raise ValueError(
        f"'{text}' resolves to {resolved} ({how}), outside the case set's root {base}{allowed_note}: a case "
        "names only files inside its set; move the file under the set's root, or list its folder in "
        "allowed_roots in the set's judgekit-set.yaml"
    )


# --------------------------------------------------------------------------- building blocks


class Origin(FrozenModel):
    """Where a case came from (an escalation, an incident, a QA review).

    Attributes:
        type: Kind of source, such as ``escalation``, ``incident``, ``qa_review``, ``production_sample``.
        ref: The source's reference (ticket id).
        redacted: True when personal data was removed before the case was committed.
    """

    type: str
    ref: str | None = None
    redacted: Flag = False


class UserSimulation(FrozenModel):
    """The simulated user of a task contract.

    Attributes:
        persona: Who the user is.
        opening: The user's first message.
        hidden_facts: Facts the user reveals only when asked.
    """

    persona: str | None = None
    opening: str | None = None
    hidden_facts: tuple[str, ...] = ()


class Turn(FrozenModel):
    """One user turn of a multi-turn case.

    Attributes:
        user: What the user says.
        expect_contains: Texts the agent's reply to this turn must contain.
        critical: True when failing this turn fails the case.
    """

    user: str
    expect_contains: tuple[str, ...] = ()
    critical: Flag = True


class TextPattern(FrozenModel):
    """A regular expression to search for instead of a literal text.

    Attributes:
        pattern: A regular expression (RE2 syntax, matched in linear time: see :mod:`judgekit.patterns`),
            searched (not fully matched) in normalised text.
        ignore_case: Whether letter case is ignored (default true).
        scored: For a ``must_mention`` item: a missing mention lowers the quality score instead of
            failing the case (default false: a required mention gates). Ignored for ``must_not_mention``,
            which always gates.
    """

    pattern: str
    ignore_case: Flag = True
    scored: Flag = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        problem = pattern_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class TextLiteral(FrozenModel):
    """A literal text with options, for when a plain string is not enough.

    Attributes:
        text: The text, matched after Unicode, case and whitespace normalisation (as a plain string is).
        scored: For a ``must_mention`` item: a missing mention lowers the quality score instead of
            failing the case (default false: a required mention gates). Ignored for ``must_not_mention``.
    """

    text: str = Field(min_length=1)
    scored: Flag = False


def _text_match_kind(value: Any) -> str:
    """Which form of :data:`TextMatch` a value is written in (``pattern`` wins when both keys are given)."""
    if isinstance(value, TextPattern) or (isinstance(value, dict) and "pattern" in value):
        return "TextPattern"
    if isinstance(value, (TextLiteral, dict)):
        return "TextLiteral"
    return "str"


TextMatch = Annotated[
    Annotated[str, Tag("str")]
    | Annotated[TextPattern, Tag("TextPattern")]
    | Annotated[TextLiteral, Tag("TextLiteral")],
    Discriminator(_text_match_kind),
]
"""A literal text (matched after Unicode, case and whitespace normalisation), a :class:`TextPattern`
(``{pattern: ...}``) or a :class:`TextLiteral` (``{text: ..., scored: true}``)."""

ArgMode = Literal["exact", "ignore", "subset", "superset"]
RouteMatch = Literal["strict", "unordered", "subset", "superset"]
Outcome = Literal["answer", "fallback", "refuse", "handoff", "escalate", "clarify"]


class ExpectedCall(FrozenModel):
    """One tool call the agent is expected to make.

    Attributes:
        tool: The tool's name.
        args: Expected argument values by name. Arguments not named here are not checked.
        arg_match: How each named argument is compared: ``exact`` (the default; numbers compare by
            value), ``ignore``, ``subset`` (the actual value, a list or mapping, is contained in the
            expected one) or ``superset`` (the actual value contains the expected one).
        requires_confirmation: The user must have affirmed before this call was made.
        max_calls: The most times this tool may be called (>= 1).
    """

    tool: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    arg_match: dict[str, ArgMode] = Field(default_factory=dict)
    requires_confirmation: Flag = False
    max_calls: Integer = Field(default=1, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, data: Any) -> Any:
        if isinstance(data, str):
            raise ValueError(
                f"a route step is a mapping, not a name: write {{tool: {data}}} (add args: to check its "
                "arguments)"
            )
        return data

    @model_validator(mode="after")
    def _modes_name_args(self) -> ExpectedCall:
        unknown = sorted(set(self.arg_match) - set(self.args))
        if unknown:
            raise ValueError(f"arg_match names arguments not listed in args: {', '.join(unknown)}")
        return self


class Expected(FrozenModel):
    """What the agent is expected to do and say (the bank case's ``expected`` block).

    Attributes:
        route: Expected tool calls. ``None`` (absent) means the route is not checked; an empty list
            means no tool may fire.
        route_match: How actual calls are matched to the route: ``strict`` (same calls in the same
            order), ``unordered`` (same calls, any order), ``subset`` (every actual call is expected;
            expected calls may be missing) or ``superset`` (every expected call is made; others may be
            made too; the default).
        sources: Approved documents or record types the answer must rest on.
        must_mention: Texts the assistant's messages must contain; a missing one fails the case unless
            it is marked ``scored: true`` (then it only lowers the quality score).
        must_not_mention: Texts the assistant's messages must never contain (a gate).
        reference_answer: A model answer, for meaning-comparing graders.
        outcome: The kind of ending expected.
    """

    route: tuple[ExpectedCall, ...] | None = None
    route_match: RouteMatch = "superset"
    sources: tuple[str, ...] = ()
    must_mention: tuple[TextMatch, ...] = ()
    must_not_mention: tuple[TextMatch, ...] = ()
    reference_answer: str | None = None
    outcome: Outcome = "answer"


_PREDICATE_KEYS = (
    "equals",
    "approx",
    "tol",
    "one_of",
    "matches",
    "present",
    "absent",
    "gt",
    "ge",
    "lt",
    "le",
    "between",
)
_PREDICATE_OPERATORS = tuple(k for k in _PREDICATE_KEYS if k != "tol")
_PRESENCE_OPERATORS = frozenset({"present", "absent"})
_VALUE_OPERATORS = frozenset(_PREDICATE_OPERATORS) - _PRESENCE_OPERATORS
_PREDICATE_ALIASES = {
    "eq": "equals",
    "equal": "equals",
    "is": "equals",
    "in": "one_of",
    "oneof": "one_of",
    "any_of": "one_of",
    "regex": "matches",
    "pattern": "matches",
    "match": "matches",
    "exists": "present",
    "missing": "absent",
    "gte": "ge",
    "lte": "le",
    "min": "ge",
    "max": "le",
    "range": "between",
    "tolerance": "tol",
}
"""Names other tools use for judgekit's predicates: suggested in did-you-mean hints, never accepted."""


def _predicate_list() -> str:
    return ", ".join(_PREDICATE_KEYS)


def _suggest_predicate(name: str) -> str | None:
    if name.lower() in _PREDICATE_ALIASES:
        return _PREDICATE_ALIASES[name.lower()]
    return closest_name(name, _PREDICATE_KEYS)


def _unknown_predicates_message(unknown: Sequence[str]) -> str:
    suggestions = {name: _suggest_predicate(name) for name in unknown}
    if len(unknown) == 1:
        (name,) = unknown
        hint = f"; did you mean '{suggestions[name]}'?" if suggestions[name] else ""
        message = f"unknown predicate '{name}'{hint} (predicates: {_predicate_list()})"
    else:
        named = ", ".join(
            f"'{n}'" + (f" (did you mean '{suggestions[n]}'?)" if suggestions[n] else "") for n in unknown
        )
        message = f"unknown predicates {named} (predicates: {_predicate_list()})"
    if not any(suggestions.values()):
        message += (
            "; a mapping here is read as predicates: to expect this mapping as a value, write {equals: {...}}"
        )
    return message


def value_kind(value: Any) -> str:
    """A found value's kind, in the words of the file formats (``string``, ``boolean``, ``null``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def spelled(value: Any) -> str:
    """A value as a case file would spell it (``true``, ``null``, ``'text'``, ``5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def _number(value: Any) -> int | float:
    """Accept an int or a finite float, unchanged; refuse booleans, text and everything else."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number, found boolean {spelled(value)} (booleans are not numbers)")
    if not isinstance(value, int | float):
        raise ValueError(
            f"must be a number, found {value_kind(value)} {spelled(value)}"
            + (" (to test text, use matches or one_of)" if isinstance(value, str) else "")
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite number, found {value!r}")
    return value


def _between(value: Any) -> tuple[int | float, int | float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        found = (
            f"{len(value)} item(s)"
            if isinstance(value, list | tuple)
            else f"{value_kind(value)} {spelled(value)}"
        )
        raise ValueError(f"needs [lo, hi], a list of two numbers; found {found}")
    bounds: list[int | float] = []
    for name, item in zip(("lo", "hi"), value, strict=True):
        try:
            bounds.append(_number(item))
        except ValueError as exc:
            raise ValueError(f"{name} {exc}") from None
    lo, hi = bounds
    if lo > hi:
        raise ValueError(f"[{lo}, {hi}] can never hold: lo is greater than hi (write [{hi}, {lo}])")
    return lo, hi


Number = Annotated[int | float, BeforeValidator(_number)]
"""An int or a finite float as written (booleans and numeric text refused)."""


@dataclass(frozen=True)
class _Bound:
    """One end of the interval a predicate's ordering operators allow (``strict``: the end is excluded)."""

    value: int | float
    strict: bool
    source: str

    def tighter_lower(self, other: _Bound) -> bool:
        return self.value > other.value or (self.value == other.value and self.strict and not other.strict)

    def tighter_upper(self, other: _Bound) -> bool:
        return self.value < other.value or (self.value == other.value and self.strict and not other.strict)

    def relation(self, *, lower: bool) -> str:
        """``> 5``, ``>= 5``, ``< 5`` or ``<= 5``."""
        sign = (">" if lower else "<") + ("" if self.strict else "=")
        return f"{sign} {self.value}"


class FieldPredicate(FrozenModel):
    """A condition on one field of an expected state row: one or more operators, all of which must hold.

    In files, a plain value (text, number, boolean, null, list) means ``equals``. **Every mapping at a
    field's position is a predicate**, and its keys must be predicate names (an unknown key is refused
    with a did-you-mean); to expect a mapping as a literal value, write ``{equals: {...}}``.

    Combining operators in one mapping (``{ge: 1, lt: 5}``) means all of them must hold. Combinations
    that can never hold are refused when the case is loaded: ``absent: true`` (or ``present: false``)
    with any value operator, ``present: true`` with ``absent: true``, ``equals`` with any other value
    operator (it already fixes the value), ordering bounds that leave no number (``{gt: 5, lt: 3}``)
    and an ``approx`` window outside the bounds.

    Attributes:
        equals: The canonical value must equal this (``1 == 1.0``; booleans equal 1 and 0, since
            SQLite has no boolean type). ``{equals: null}`` expects an explicit null.
        approx: The number must be within ``tol`` of this.
        tol: Absolute tolerance for ``approx`` (default 1e-9; >= 0; only with ``approx``).
        one_of: The value must equal one of these.
        matches: The value, as text, must match this regular expression (searched).
        present: True: the field must exist (any value).
        absent: True: the field must not exist.
        gt: The value must be a number greater than this.
        ge: The value must be a number greater than or equal to this.
        lt: The value must be a number less than this.
        le: The value must be a number less than or equal to this.
        between: ``[lo, hi]``: the value must be a number with ``lo <= value <= hi`` (both ends
            included; ``lo <= hi``).

    The numeric operators (``approx`` and the ordering ones) take ints or finite floats; a boolean or
    numeric text such as ``"5"`` is refused at load. When grading, a found value that is not a number
    (booleans are not numbers) fails them, with its type named.

    Example:
        >>> p = FieldPredicate.model_validate({"ge": 1, "lt": 5})
        >>> p.operators
        ('ge', 'lt')
        >>> FieldPredicate.model_validate({"between": [1, 5]}).between
        (1, 5)
    """

    KEYS: ClassVar[tuple[str, ...]] = _PREDICATE_KEYS
    """Every key a predicate mapping may have (``tol`` qualifies ``approx``)."""

    equals: JsonValue = None
    approx: Number | None = None
    tol: Annotated[float, BeforeValidator(_number), Field(ge=0.0)] = 1e-9
    one_of: tuple[JsonValue, ...] | None = None
    matches: str | None = None
    present: Flag | None = None
    absent: Flag | None = None
    gt: Number | None = None
    ge: Number | None = None
    lt: Number | None = None
    le: Number | None = None
    between: Annotated[tuple[int | float, int | float], BeforeValidator(_between)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if not value:
            raise ValueError(
                "an empty mapping is not a predicate: to expect an empty mapping write {equals: {}}; "
                "to expect the field to exist, {present: true}"
            )
        unknown = [str(k) for k in value if k not in _PREDICATE_KEYS]
        if unknown:
            raise ValueError(_unknown_predicates_message(unknown))
        nulls = [k for k, v in value.items() if v is None and k != "equals"]
        if nulls:
            raise ValueError(
                f"'{nulls[0]}: null' is not a predicate: give it a value "
                "(to expect null, write {equals: null})"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> FieldPredicate:
        # An empty mapping never gets here (_known_keys), so a predicate without an operator is {tol: t}.
        ops = self.operators
        if "tol" in self.model_fields_set and self.approx is None:
            raise ValueError("tol only goes with approx")
        values = [op for op in ops if op in _VALUE_OPERATORS]
        if self.present is True and self.absent is True:
            raise ValueError("present: true and absent: true can never both hold")
        if self.present is False and self.absent is False:
            raise ValueError("present: false and absent: false can never both hold")
        if (self.absent is True or self.present is False) and values:
            said = "absent: true" if self.absent is True else "present: false"
            raise ValueError(
                f"{said} with {', '.join(values)} can never hold: a field that does not exist has no value"
            )
        if "equals" in values and len(values) > 1:
            others = ", ".join(v for v in values if v != "equals")
            raise ValueError(
                f"equals fixes the value: combine it with no other value predicate (got equals with {others})"
            )
        self._check_interval()
        if self.matches is not None:
            problem = pattern_problem(self.matches)
            if problem is not None:
                raise ValueError(f"matches: {problem}")
        return self

    def _check_interval(self) -> None:
        lower: _Bound | None = None
        upper: _Bound | None = None
        lows = [("gt", self.gt, True), ("ge", self.ge, False)]
        highs = [("lt", self.lt, True), ("le", self.le, False)]
        if self.between is not None:
            lows.append(("between", self.between[0], False))
            highs.append(("between", self.between[1], False))
        for name, bound, strict in lows:
            if bound is not None:
                candidate = _Bound(bound, strict, name)
                lower = candidate if lower is None or candidate.tighter_lower(lower) else lower
        for name, bound, strict in highs:
            if bound is not None:
                candidate = _Bound(bound, strict, name)
                upper = candidate if upper is None or candidate.tighter_upper(upper) else upper
        if (
            lower is not None
            and upper is not None
            and (lower.value > upper.value or (lower.value == upper.value and (lower.strict or upper.strict)))
        ):
            raise ValueError(
                f"{self._bound_text(lower)} and {self._bound_text(upper)} can never both hold: no number is "
                f"{lower.relation(lower=True)} and {upper.relation(lower=False)}"
            )
        if self.approx is not None:
            low, high = self.approx - self.tol, self.approx + self.tol
            blocking: _Bound | None = None
            if lower is not None and (high < lower.value or (high == lower.value and lower.strict)):
                blocking = lower
            elif upper is not None and (low > upper.value or (low == upper.value and upper.strict)):
                blocking = upper
            if blocking is not None:
                raise ValueError(
                    f"approx {self.approx} ± {self.tol} and {self._bound_text(blocking)} can never both hold"
                )

    def _bound_text(self, bound: _Bound) -> str:
        if bound.source == "between":
            return f"between {list(self.between or ())}"
        return f"{bound.source} {bound.value}"

    @property
    def operators(self) -> tuple[str, ...]:
        """The operators that are set, in the order of :attr:`KEYS` (``tol`` is not an operator)."""
        return tuple(op for op in _PREDICATE_OPERATORS if op in self.model_fields_set)

    @property
    def operator(self) -> str:
        """The operator's name when exactly one is set, else ``"all"`` (a conjunction; see :attr:`operators`).

        Kept for single-operator predicates; code handling combinations reads :attr:`operators`.
        """
        ops = self.operators
        return ops[0] if len(ops) == 1 else "all"


def _coerce_predicate(value: Any) -> Any:
    """Read a field expectation: a mapping is a predicate, anything else a literal for ``equals``."""
    if isinstance(value, FieldPredicate | dict):
        return value
    return {"equals": value}


FieldExpectation = Annotated[FieldPredicate, BeforeValidator(_coerce_predicate)]


class TableChange(FrozenModel):
    """Expected changes to one table.

    Attributes:
        added: Rows that must appear: each is a set of field expectations a new row must satisfy
            (matched one-to-one with added rows).
        removed: Keys of rows that must disappear.
        modified: Row key to field expectations the row must satisfy afterwards.
    """

    added: tuple[dict[str, FieldExpectation], ...] = ()
    removed: tuple[str, ...] = ()
    modified: dict[str, dict[str, FieldExpectation]] = Field(default_factory=dict)


_EXPECTED_STATE_KEYS = frozenset({"snapshot", "changes", "from_reference", "ignore_fields"})


class ExpectedState(FrozenModel):
    """The world the conversation must leave behind.

    Exactly one form is used: a full ``snapshot`` (a fixture file the final state must equal), expected
    ``changes`` (anything changed beyond them is collateral damage and fails), or ``from_reference``
    (the state reached by the case's reference solution).

    The seed shorthand ``{table: [row, ...]}`` (rows that must appear, such as
    ``{"refunds": [{"payment_id": "PMT-88213", "amount": 412.18}]}``) is read as ``changes`` with
    ``added`` rows.

    Attributes:
        snapshot: Path (relative to the set's root) of the expected final state.
        changes: Per table, the expected changes.
        from_reference: Compare with the final state of the reference solution.
        ignore_fields: Field names that legitimately churn (timestamps) and are ignored everywhere.
    """

    snapshot: CasePath | None = None
    changes: dict[str, TableChange] | None = None
    from_reference: Flag = False
    ignore_fields: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if (
            isinstance(value, dict)
            and value
            and not set(value) & _EXPECTED_STATE_KEYS
            and all(isinstance(rows, list) for rows in value.values())
        ):
            return {"changes": {table: {"added": rows} for table, rows in value.items()}}
        return value

    @model_validator(mode="after")
    def _one_form(self) -> ExpectedState:
        forms = [self.snapshot is not None, self.changes is not None, self.from_reference]
        if sum(forms) != 1:
            raise ValueError("expected_state needs exactly one of snapshot, changes, from_reference")
        return self


class ForbiddenRule(FrozenModel):
    """Something the agent must never do; any match fails the case.

    Attributes:
        tool: The tool the rule is about. With no ``when``, any call of it is forbidden.
        when: A condition (CEL expression) over the call; the rule is broken when it is true. See the
            rules grader for the names it may use (``amount``, ``calls``, ``index``, ...).
        message_pattern: A regular expression that no assistant message may match (for disclosures).
        state_when: A condition (CEL expression) over each changed state row; broken when true.
        description: What the rule protects, for reports.
        category: The failure category reported when it is broken.
    """

    tool: str | None = None
    when: str | None = None
    message_pattern: str | None = None
    state_when: str | None = None
    description: str | None = None
    category: FailureCategory = FailureCategory.POLICY_VIOLATION

    @model_validator(mode="after")
    def _has_target(self) -> ForbiddenRule:
        if (
            self.tool is None
            and self.when is None
            and self.message_pattern is None
            and self.state_when is None
        ):
            raise ValueError("a forbidden rule needs tool, when, message_pattern or state_when")
        if self.message_pattern is not None:
            problem = pattern_problem(self.message_pattern)
            if problem is not None:
                raise ValueError(f"message_pattern: {problem}")
        return self


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _non_empty(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    return value


NonEmptyStr = Annotated[str, BeforeValidator(_strip), AfterValidator(_non_empty)]


class Retirement(FrozenModel):
    """Why a case left the capability suite for the regression suite (written by ``judgekit cases retire``).

    Attributes:
        moved_from: The split it had before: ``capability``, or ``None`` when it had none (it was in the
            capability suite by its category and slice).
        reason: Why: the evidence of saturation (``"saturated: passed every trial in each of the last 3
            releases at v2 (1.4.0: 8/8; ...)"``), or a reviewer's words.
        releases: The releases whose trials made it saturated, oldest first.
        retired_on: The day it was retired (``YYYY-MM-DD``), ``None`` when not recorded.
    """

    moved_from: Literal["capability"] | None = None
    reason: NonEmptyStr
    releases: tuple[str, ...] = ()
    retired_on: date | None = None


class DoNothing(FrozenModel):
    """A case's statement that doing nothing (declining, asking, changing nothing) is the correct behaviour.

    ``judgekit cases lint`` reports a case that a do-nothing agent passes on every deterministic layer; a case
    that declares this is listed as declared instead (see :mod:`judgekit.golden.lint`).

    Attributes:
        why: Why doing nothing is correct ("must refuse: another customer's data").
        decided_by: The judge criterion that tells a right refusal from a useless one: ``case.acceptance``,
            ``case.required_outcome`` or ``case.forbidden_outcome.<i>`` (checked against the case when it
            loads), or the id of a critical rubric criterion (checked by ``judgekit cases lint`` against the
            rubrics it is given).
    """

    why: NonEmptyStr
    decided_by: NonEmptyStr

    def check_against(self, data: dict[str, Any]) -> None:
        """Refuse a ``decided_by`` naming no gating judge criterion of the case whose fields are ``data``.

        Args:
            data: The case's fields validated so far (pydantic's ``ValidationInfo.data``). When one of the
                fields the criteria come from is missing (it failed validation itself), nothing is checked:
                that field's own problem is reported.

        Raises:
            ValueError: Naming the criteria the case has.
        """
        name = self.decided_by
        if not name.startswith("case."):
            if not _RUBRIC_CRITERION_ID.match(name):
                raise ValueError(
                    f"decided_by {name!r} is neither a case criterion (case.acceptance, "
                    "case.required_outcome, case.forbidden_outcome.<i>) nor a rubric criterion id (letters, "
                    "digits, '_', '.', '-')"
                )
            return
        fields = ("required_outcome", "acceptance", "prohibited", "forbidden_outcomes", "response_rubric")
        if any(f not in data for f in fields):
            return
        texts = [p for p in data["prohibited"] if isinstance(p, str)] + list(data["forbidden_outcomes"])
        criteria = [
            *(["case.required_outcome"] if data["required_outcome"] else []),
            *(["case.acceptance"] if data["acceptance"] else []),
            *(f"case.forbidden_outcome.{i}" for i in range(len(texts))),
        ]
        if name in criteria:
            return
        scored = [f"case.response_rubric.{i}" for i in range(len(data["response_rubric"]))]
        if name in scored:
            raise ValueError(
                f"decided_by {name!r} is a scored criterion: its fail lowers the quality score but never "
                "fails the case, so a useless do-nothing reply would still pass; name a gating criterion "
                f"({', '.join(criteria) or 'the case has none: add an acceptance criterion'})"
            )
        if not criteria:
            raise ValueError(
                f"decided_by {name!r} names no criterion of this case, which has no judge criterion at "
                "all; add the acceptance criterion (or required_outcome) that tells a right refusal from a "
                "useless reply, and name it (decided_by: case.acceptance)"
            )
        hint = did_you_mean(name, criteria)
        raise ValueError(
            f"decided_by {name!r} names no criterion of this case{hint} (its judge criteria: "
            f"{', '.join(criteria)}; or name a critical rubric criterion by its id)"
        )


_RUBRIC_CRITERION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")


# --------------------------------------------------------------------------- the case


class Case(FrozenModel):
    """One golden task: a starting world, a goal, and a way to check the result.

    Attributes:
        id: Unique id within the set (letters, digits, ``._:/-``; no spaces).
        version: Positive integer, bumped whenever the expected outcome, acceptance or forbidden rules
            change (the re-baselining guard checks this).
        slice: The slice the case belongs to (``real_failures``, ``high_volume``, ``policy_edge``,
            ``must_refuse``, ``ambiguous``...).
        category: Bank-style category: ``normal``, ``edge``, ``adversarial`` or ``regression``.
        severity: How a failure is treated: ``critical``, ``high``, ``medium`` or ``low``.
        owner: Who fixes the agent when this case fails.
        dimensions: Quality dimensions tested (``correct``, ``grounded``, ``safe``...).
        identity: The test persona's identity (decides what the agent may see and do).
        origin: Where the case came from.
        user: The simulated user (persona, opening message, hidden facts).
        input: A single-turn question.
        turns: The user turns of a multi-turn case.
        paraphrases: Other wordings of ``input``.
        user_goal: The user's goal (plain task contract).
        required_outcome: The outcome that counts as success (plain task contract).
        initial_state: Path of the starting state fixture, relative to the set's root.
        tools: The tools available to (or relevant for) the agent.
        expected_state: The expected end state.
        expected: Expected route and text.
        forbidden: Forbidden tool-call rules.
        prohibited: Prohibited actions (rules) or disclosures (free text, judged by the rubric layer).
        forbidden_outcomes: Free-text outcomes that must not happen (judged by the rubric layer).
        response_rubric: Criteria for the agent's reply (judged by the rubric layer).
        acceptance: Plain-language criterion a person and a calibrated judge can both apply. Starting
            with ``REVIEW:`` marks it unreviewed (candidates only).
        reference_solution: Path of a recorded transcript that passes every grader.
        policy_refs: Policies the case encodes, with revisions (``"BIL-7 rev 2025-09"``).
        signed_off_by: Who approved the expected outcome.
        source_incident: The incident a regression case came from.
        split: Which suite the case belongs to: ``capability`` (hard, exploratory), ``regression``
            (behaviour the product already promises) or ``holdout`` (kept out of routine runs and
            reports, so prompt tuning cannot overfit it; used only when asked for by name). ``None``
            when the set does not use splits.
        do_nothing: Why doing nothing is the correct behaviour and which judge criterion decides it
            (:class:`DoNothing`); ``None`` (the default) when doing nothing should fail the case.
        retired: Why the case moved from the capability to the regression suite (:class:`Retirement`);
            only with ``split: regression``. Not part of the case's contract: retiring a case needs no
            version bump.
    """

    id: NonEmptyStr
    version: Integer = 1
    slice: str | None = None
    category: Literal["normal", "edge", "adversarial", "regression"] | None = None
    severity: Literal["critical", "high", "medium", "low"] | None = None
    owner: str | None = None
    dimensions: tuple[str, ...] = ()
    identity: dict[str, str] = Field(default_factory=dict)
    origin: Origin | None = None
    user: UserSimulation | None = None
    input: str | None = None
    turns: tuple[Turn, ...] = ()
    paraphrases: tuple[str, ...] = ()
    user_goal: str | None = None
    required_outcome: str | None = None
    initial_state: CasePath | None = None
    tools: tuple[str, ...] = ()
    expected_state: ExpectedState | None = None
    expected: Expected | None = None
    forbidden: tuple[ForbiddenRule, ...] = ()
    prohibited: tuple[str | ForbiddenRule, ...] = ()
    forbidden_outcomes: tuple[str, ...] = ()
    response_rubric: tuple[str, ...] = ()
    acceptance: str | None = None
    reference_solution: CasePath | None = None
    policy_refs: tuple[str, ...] = ()
    signed_off_by: tuple[str, ...] = ()
    source_incident: str | None = None
    split: Literal["capability", "regression", "holdout"] | None = None
    do_nothing: DoNothing | None = None
    retired: Retirement | None = None

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not is_case_id(value):
            raise ValueError(f"ids use {CASE_ID_RULE}")
        return value

    @field_validator("do_nothing")
    @classmethod
    def _do_nothing_names_a_criterion(cls, value: DoNothing | None, info: ValidationInfo) -> DoNothing | None:
        if value is not None:
            value.check_against(info.data)
        return value

    @field_validator("version")
    @classmethod
    def _positive_version(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be a positive integer (got {value}); versions start at 1")
        return value

    @model_validator(mode="after")
    def _contract(self) -> Case:
        if not (self.input or self.turns or (self.user and self.user.opening) or self.user_goal):
            raise ValueError("a case needs something the user says: input, turns, user.opening or user_goal")
        if self.input and self.turns:
            raise ValueError("a case has either a single input or turns, not both")
        if self.paraphrases and not self.input:
            raise ValueError("paraphrases reword input; a case without input cannot have them")
        if self.retired is not None and self.split != "regression":
            raise ValueError(
                "a retired case is in the regression split: set split: regression, or remove retired: to "
                "bring it back to the capability suite"
            )
        if self.category == "regression" and not self.source_incident:
            raise ValueError("regression cases must link the incident they came from (source_incident)")
        if (
            self.expected_state is not None
            and self.expected_state.from_reference
            and not self.reference_solution
        ):
            raise ValueError("expected_state.from_reference needs a reference_solution")
        return self

    # ----------------------------------------------------------------- derived views

    @property
    def slice_name(self) -> str | None:
        """The case's slice, falling back to its category."""
        return self.slice or self.category

    @property
    def is_multi_turn(self) -> bool:
        """True when the case is a conversation of several user turns."""
        return bool(self.turns)

    @property
    def is_unreviewed(self) -> bool:
        """True when the acceptance criterion still starts with ``REVIEW:``.

        Read as :func:`starts_with_review_marker` reads it: invisible characters, fullwidth forms and
        letter case do not hide the marker.
        """
        return starts_with_review_marker(self.acceptance)

    def opening(self) -> str | None:
        """The first thing the user says: ``input``, the first turn, ``user.opening`` or ``user_goal``."""
        if self.input:
            return self.input
        if self.turns:
            return self.turns[0].user
        if self.user and self.user.opening:
            return self.user.opening
        return self.user_goal

    def questions(self) -> list[str]:
        """Single-turn question texts: the opening and every paraphrase (empty for multi-turn cases)."""
        if self.turns:
            return []
        first = self.opening()
        return ([first] if first else []) + list(self.paraphrases)

    def rules(self) -> list[ForbiddenRule]:
        """Every machine-checkable forbidden rule: ``forbidden`` plus rule-shaped ``prohibited`` entries."""
        return list(self.forbidden) + [p for p in self.prohibited if isinstance(p, ForbiddenRule)]

    def prohibited_texts(self) -> list[str]:
        """Free-text prohibitions (from ``prohibited`` and ``forbidden_outcomes``), for the rubric layer."""
        return [p for p in self.prohibited if isinstance(p, str)] + list(self.forbidden_outcomes)

    def covered_tools(self) -> set[str]:
        """Tools this case exercises: listed tools, expected route tools and forbidden-rule tools."""
        out = set(self.tools)
        if self.expected and self.expected.route:
            out.update(call.tool for call in self.expected.route)
        out.update(rule.tool for rule in self.rules() if rule.tool)
        return out

    def covered_sources(self) -> set[str]:
        """Knowledge sources this case rests on: expected sources and policy names (revision dropped)."""
        out = set(self.expected.sources) if self.expected else set()
        out.update(_policy_name(ref) for ref in self.policy_refs)
        return out

    def referenced_files(self) -> list[tuple[str, str]]:
        """Files the case names, as ``(field, relative path)`` pairs."""
        out: list[tuple[str, str]] = []
        if self.initial_state:
            out.append(("initial_state", self.initial_state))
        if self.reference_solution:
            out.append(("reference_solution", self.reference_solution))
        if self.expected_state and self.expected_state.snapshot:
            out.append(("expected_state.snapshot", self.expected_state.snapshot))
        return out

    def texts(self) -> list[tuple[str, str]]:
        """Every natural-language text the case carries, as ``(field path, text)`` pairs.

        This is what contamination checks hash: openings, turns, paraphrases, hidden facts, goals and
        outcomes, expected and reference answers, rubric, acceptance and prohibition texts.
        """
        out: list[tuple[str, str]] = []

        def add(path: str, text: str | None) -> None:
            if text and text.strip():
                out.append((path, text))

        add("input", self.input)
        for i, turn in enumerate(self.turns):
            add(f"turns.{i}.user", turn.user)
        for i, text in enumerate(self.paraphrases):
            add(f"paraphrases.{i}", text)
        if self.user:
            add("user.persona", self.user.persona)
            add("user.opening", self.user.opening)
            for i, text in enumerate(self.user.hidden_facts):
                add(f"user.hidden_facts.{i}", text)
        add("user_goal", self.user_goal)
        add("required_outcome", self.required_outcome)
        if self.expected:
            add("expected.reference_answer", self.expected.reference_answer)
        for i, text in enumerate(self.response_rubric):
            add(f"response_rubric.{i}", text)
        add("acceptance", self.acceptance)
        for i, p in enumerate(self.prohibited):
            if isinstance(p, str):
                add(f"prohibited.{i}", p)
        for i, text in enumerate(self.forbidden_outcomes):
            add(f"forbidden_outcomes.{i}", text)
        return out

    def contract_fingerprint_fields(self) -> dict[str, Any]:
        """The parts of the case whose change requires a version bump, as plain data.

        These are the expected outcome (state, route, text), the acceptance criterion and the
        forbidden rules and outcomes.
        """
        return {
            "expected_state": self.expected_state.model_dump(mode="json") if self.expected_state else None,
            "expected": self.expected.model_dump(mode="json") if self.expected else None,
            "required_outcome": self.required_outcome,
            "acceptance": self.acceptance,
            "forbidden": [r.model_dump(mode="json") for r in self.forbidden],
            "prohibited": [p if isinstance(p, str) else p.model_dump(mode="json") for p in self.prohibited],
            "forbidden_outcomes": list(self.forbidden_outcomes),
            "response_rubric": list(self.response_rubric),
        }


def _policy_name(ref: str) -> str:
    """``"BIL-7 rev 2025-09"`` -> ``"BIL-7"``."""
    return re.split(r"\s+rev(?:ision)?\b", ref.strip(), maxsplit=1, flags=re.IGNORECASE)[0].strip()


# --------------------------------------------------------------------------- validation errors


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types inside Optional/Union/Annotated."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _types_at(root: type[BaseModel], loc: Sequence[str | int]) -> list[Any]:
    """The possible types of the value at ``loc`` inside a ``root`` model (best effort)."""
    current: list[Any] = [root]
    for part in loc:
        nxt: list[Any] = []
        for tp in current:
            for concrete in _unwrap(tp):
                origin = typing.get_origin(concrete)
                args = typing.get_args(concrete)
                if isinstance(concrete, type) and issubclass(concrete, BaseModel) and isinstance(part, str):
                    info = concrete.model_fields.get(part)
                    if info is not None:
                        nxt.append(info.annotation)
                elif origin in (list, tuple) and isinstance(part, int) and args:
                    nxt.append(args[0])
                elif origin is dict and len(args) == 2:
                    nxt.append(args[1])
        current = nxt
    return current


def _fields_at(root: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    names: list[str] = []
    for tp in _types_at(root, loc):
        for concrete in _unwrap(tp):
            if isinstance(concrete, type) and issubclass(concrete, BaseModel):
                names.extend(n for n in concrete.model_fields if n not in names)
    return names


def _model_names() -> frozenset[str]:
    return frozenset(
        name for name, obj in globals().items() if isinstance(obj, type) and issubclass(obj, BaseModel)
    )


def _clean_loc(loc: Sequence[str | int]) -> tuple[str | int, ...]:
    """Drop pydantic's union-member and validator tags from an error location.

    A capitalised part is dropped only when it names one of this module's models (a union member tag):
    row keys such as ``HN4K8D`` or ``PMT-50104`` are kept.
    """
    models = _model_names()
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, str) and (
            part in {"str", "int", "float", "bool", "none", "list", "dict"}
            or part in models
            or part.startswith(("function-", "tagged-union", "json-or-python", "lax-or-strict"))
        ):
            continue
        out.append(part)
    return tuple(out)


def problems_from_validation(
    exc: ValidationError, doc: Document, model: type[BaseModel], prefix: tuple[str | int, ...] = ()
) -> list[Problem]:
    """Turn a pydantic ValidationError into located, readable problems (one per error).

    Unknown fields get a did-you-mean; missing fields point at the line of their parent; union noise
    (one error per union member) is collapsed to one problem per location.
    """
    problems: list[Problem] = []
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    errors = exc.errors(include_url=False)
    by_loc: dict[tuple[str | int, ...], list[dict[str, Any]]] = {}
    for raw in errors:
        by_loc.setdefault(_clean_loc(raw["loc"]), []).append(dict(raw))
    for loc, errs in by_loc.items():
        # A union member that failed on type ("should be a valid string") is noise when another member
        # got further (an error deeper inside the same location).
        if all(str(e["type"]).endswith("_type") for e in errs) and any(
            len(other) > len(loc) and other[: len(loc)] == loc for other in by_loc
        ):
            continue
        # Prefer the most specific message when a union produced several.
        err = next((e for e in errs if e["type"] in {"value_error", "extra_forbidden", "missing"}), errs[0])
        kind = err["type"]
        if kind == "extra_forbidden":
            name = str(loc[-1])
            allowed = _fields_at(model, loc[:-1])
            hint = did_you_mean(name, allowed) or (f"; allowed here: {', '.join(allowed)}" if allowed else "")
            message = f"unknown field '{name}'{hint}"
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "literal_error":
            message = f"{err['msg'].replace('Input should be', 'must be')} (got {err.get('input')!r})"
        elif kind == "value_error":
            message = str(err["msg"]).removeprefix("Value error, ")
        else:
            message = str(err["msg"])
            if "input" in err and not isinstance(err["input"], dict | list):
                message += f" (got {err['input']!r})"
        full_loc = prefix + loc
        key = (full_loc, message)
        if key in seen:
            continue
        seen.add(key)
        problems.append(Problem(doc.path, doc.line_of(full_loc), format_loc(full_loc), message))
    return problems


def parse_case(data: Any, doc: Document, prefix: tuple[str | int, ...] = ()) -> Case | list[Problem]:
    """Validate one case mapping; return the case or its located problems."""
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "nothing"
        return [
            Problem(
                doc.path,
                doc.line_of(prefix),
                format_loc(prefix),
                f"a case must be a mapping of fields, found {kind}",
            )
        ]
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        return problems_from_validation(exc, doc, Case, prefix)

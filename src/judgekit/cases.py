"""The case contract: one golden task, and loading and validating a set of them.

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
them. Unknown fields are rejected with a did-you-mean. Set-level rules (unique ids, candidates, fixture
files) are checked by :func:`load_case_set`.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.io.documents import Document, format_loc, read_documents
from judgekit.verdict import FailureCategory, FrozenModel

__all__ = [
    "CASE_FILE_SUFFIXES",
    "QUESTION_CHAR_LIMIT",
    "REVIEW_PREFIX",
    "Case",
    "CaseSet",
    "Expected",
    "ExpectedCall",
    "ExpectedState",
    "FieldPredicate",
    "ForbiddenRule",
    "LoadedCase",
    "Origin",
    "SetManifest",
    "TableChange",
    "TextPattern",
    "Turn",
    "UserSimulation",
    "load_case_set",
    "parse_case",
]

CASE_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
"""File endings read as case files."""

QUESTION_CHAR_LIMIT = 1000
"""Longest question some export targets accept (Copilot Studio caps test questions at 1,000 characters)."""

REVIEW_PREFIX = "REVIEW:"
"""An acceptance criterion starting with this is unreviewed: allowed only among candidates."""

MANIFEST_NAME = "judgekit-set.yaml"
"""Optional file at a golden set's root describing the set (tools, sources, coverage floors)."""

NON_CASE_DIRS = frozenset(
    {
        "fixtures",
        "transcripts",
        "states",
        "exports",
        "labels",
        "cassettes",
        "runs",
        "intake",  # incident records awaiting intake (judgekit intake)
        "resolutions",  # experts' double resolutions (judgekit golden reconcile)
        "reviews",  # review sheets of sampled transcripts (judgekit sample)
    }
)
"""Folders under a set that hold data other than cases; never read as case files."""

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


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
    redacted: bool = False


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
    critical: bool = True


class TextPattern(FrozenModel):
    """A regular expression to search for instead of a literal text.

    Attributes:
        pattern: A Python regular expression, searched (not fully matched) in normalised text.
        ignore_case: Whether letter case is ignored (default true).
    """

    pattern: str
    ignore_case: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


TextMatch = str | TextPattern
"""A literal text (matched after Unicode, case and whitespace normalisation) or a :class:`TextPattern`."""

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
    requires_confirmation: bool = False
    max_calls: int = Field(default=1, ge=1)

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
        must_mention: Texts the assistant's messages must contain.
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


_PREDICATE_OPERATORS = frozenset({"equals", "approx", "one_of", "matches", "present", "absent"})
_PREDICATE_KEYS = _PREDICATE_OPERATORS | {"tol"}


class FieldPredicate(FrozenModel):
    """A condition on one field of an expected state row. Exactly one operator is set.

    In files, a plain value means ``equals``; a mapping whose keys are operators is a predicate
    (write ``{equals: {...}}`` to expect a literal mapping).

    Attributes:
        equals: The canonical value must equal this (``1 == 1.0``; booleans equal 1 and 0, since
            SQLite has no boolean type).
        approx: The number must be within ``tol`` of this.
        tol: Absolute tolerance for ``approx`` (default 1e-9; >= 0).
        one_of: The value must equal one of these.
        matches: The value, as text, must match this regular expression (searched).
        present: True: the field must exist (any value).
        absent: True: the field must not exist.
    """

    equals: JsonValue = None
    approx: float | None = None
    tol: float = Field(default=1e-9, ge=0.0)
    one_of: tuple[JsonValue, ...] | None = None
    matches: str | None = None
    present: bool | None = None
    absent: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> FieldPredicate:
        ops = sorted(self.model_fields_set & _PREDICATE_OPERATORS)
        if len(ops) != 1:
            raise ValueError(
                "a field predicate needs exactly one of equals, approx, one_of, matches, present, absent"
                + (f" (got {', '.join(ops)})" if ops else "")
            )
        if "tol" in self.model_fields_set and self.approx is None:
            raise ValueError("tol only goes with approx")
        if self.matches is not None:
            try:
                re.compile(self.matches)
            except re.error as exc:
                raise ValueError(f"matches: not a valid regular expression: {exc}") from None
        return self

    @property
    def operator(self) -> str:
        """The name of the operator that is set."""
        return next(iter(self.model_fields_set & _PREDICATE_OPERATORS))


def _coerce_predicate(value: Any) -> Any:
    if isinstance(value, FieldPredicate):
        return value
    if isinstance(value, dict) and value and set(value) <= _PREDICATE_KEYS:
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

    snapshot: str | None = None
    changes: dict[str, TableChange] | None = None
    from_reference: bool = False
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
            try:
                re.compile(self.message_pattern)
            except re.error as exc:
                raise ValueError(f"message_pattern: not a valid regular expression: {exc}") from None
        return self


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _non_empty(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    return value


NonEmptyStr = Annotated[str, BeforeValidator(_strip), AfterValidator(_non_empty)]


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
    """

    id: NonEmptyStr
    version: int = 1
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
    initial_state: str | None = None
    tools: tuple[str, ...] = ()
    expected_state: ExpectedState | None = None
    expected: Expected | None = None
    forbidden: tuple[ForbiddenRule, ...] = ()
    prohibited: tuple[str | ForbiddenRule, ...] = ()
    forbidden_outcomes: tuple[str, ...] = ()
    response_rubric: tuple[str, ...] = ()
    acceptance: str | None = None
    reference_solution: str | None = None
    policy_refs: tuple[str, ...] = ()
    signed_off_by: tuple[str, ...] = ()
    source_incident: str | None = None
    split: Literal["capability", "regression", "holdout"] | None = None

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID_PATTERN.match(value):
            raise ValueError("ids use letters, digits and ._:/- only, starting with a letter or digit")
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
        """True when the acceptance criterion still starts with ``REVIEW:``."""
        return bool(self.acceptance and self.acceptance.lstrip().startswith(REVIEW_PREFIX))

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
            close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
            hint = (
                f"; did you mean '{close[0]}'?"
                if close
                else (f"; allowed here: {', '.join(allowed)}" if allowed else "")
            )
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


# --------------------------------------------------------------------------- case sets


class SetManifest(FrozenModel):
    """The optional ``judgekit-set.yaml`` at a golden set's root.

    Attributes:
        name: The set's name.
        description: What the set is for.
        synthetic: True when every case, fixture and transcript is synthetic (no real customer data).
        cases_dir: Folder of reviewed cases, relative to the root (default: the root itself).
        candidates_dir: Folder of generated or unreviewed candidates, which no gate reads.
        tools: Every tool the agent has; coverage names the ones with too few cases.
        sources: Every knowledge source the agent uses.
        min_per_tool: Coverage floor: fewest cases per tool (>= 0).
        min_per_source: Coverage floor: fewest cases per source (>= 0).
        dimensions: Every quality dimension the set should test (``correct``, ``grounded``, ``useful``,
            ``action-accurate``, ``safe``...); coverage names the ones with too few cases.
        min_per_dimension: Coverage floor: fewest cases per declared dimension (>= 0).
        synthetic_values: Values that look like personal data but are synthetic (a fictional phone
            number outside the reserved ranges); the personal-data check does not report them.
    """

    name: str | None = None
    description: str | None = None
    synthetic: bool = False
    cases_dir: str = "."
    candidates_dir: str = "candidates"
    tools: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    min_per_tool: int = Field(default=5, ge=0)
    min_per_source: int = Field(default=5, ge=0)
    dimensions: tuple[str, ...] = ()
    min_per_dimension: int = Field(default=5, ge=0)
    synthetic_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadedCase:
    """A case with where it came from.

    Attributes:
        case: The validated case.
        path: The file it was read from.
        document: The parsed document the case came from (locates its fields for messages).
        prefix: The case's location inside ``document`` (an index for a list of cases).
        candidate: True when it lives among candidates (unreviewed acceptance allowed, gates skip it).
    """

    case: Case
    path: Path
    document: Document | None = None
    prefix: tuple[str | int, ...] = ()
    candidate: bool = False

    @property
    def line(self) -> int:
        """1-based line where the case starts in its file (1 when unknown)."""
        return self.document.line_of(self.prefix) if self.document is not None else 1

    def line_of(self, field_path: str) -> int:
        """1-based line of a field such as ``acceptance`` or ``expected.route``.

        Falls back to the nearest enclosing field that can be located, then to the case's line.
        """
        if self.document is None:
            return 1
        parts = tuple(int(p) if p.isdigit() else p for p in field_path.split("."))
        return self.document.line_of(self.prefix + parts)


@dataclass
class CaseSet:
    """A golden set as loaded from disk.

    Attributes:
        root: The set's root folder; case file paths resolve against it.
        manifest: The set's manifest, or ``None`` when the set has none.
        cases: Every valid case (reviewed and candidates), in file order.
        problems: Every problem found; the set is valid when this is empty.
        warnings: Things worth knowing that do not make the set invalid (over-long questions).
        files: Case files read.
    """

    root: Path
    manifest: SetManifest | None
    cases: list[LoadedCase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def reviewed(self) -> list[LoadedCase]:
        """Cases that gates and runs use (candidates left out)."""
        return [c for c in self.cases if not c.candidate]

    def candidates(self) -> list[LoadedCase]:
        """Candidate cases awaiting review."""
        return [c for c in self.cases if c.candidate]

    def by_id(self) -> dict[str, LoadedCase]:
        """Cases by id (ids are unique in a valid set)."""
        return {c.case.id: c for c in self.cases}

    def resolve(self, relative: str) -> Path:
        """The absolute path of a file a case names, relative to the set's root."""
        return (self.root / relative).resolve()

    def raise_if_invalid(self) -> None:
        """Raise :class:`~judgekit.errors.ProblemsError` listing every problem, if there are any."""
        if self.problems:
            from judgekit.errors import ProblemsError

            raise ProblemsError(self.problems)


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


def _find_root(paths: Sequence[Path]) -> tuple[Path, SetManifest | None, list[Problem]]:
    """Find the set's root and manifest.

    The root is the nearest folder at or above the first path holding a manifest, else the first folder
    given (or the first file's folder).
    """
    first = paths[0].resolve()
    start = first if first.is_dir() else first.parent
    for folder in (start, *start.parents):
        manifest_path = folder / MANIFEST_NAME
        if manifest_path.is_file():
            try:
                doc = next(iter(read_documents(manifest_path)))
            except LocatedError as exc:
                return folder, None, [exc.problem]
            if isinstance(doc, Problem):
                return folder, None, [doc]
            try:
                return folder, SetManifest.model_validate(doc.data or {}), []
            except ValidationError as exc:
                return folder, None, problems_from_validation(exc, doc, SetManifest)
    return start, None, []


def _case_files(path: Path, skip: set[Path]) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for child in sorted(path.rglob("*")):
        if not child.is_file() or child.suffix.lower() not in CASE_FILE_SUFFIXES:
            continue
        rel_parts = child.relative_to(path).parts[:-1]
        if any(part in NON_CASE_DIRS or part.startswith(".") for part in rel_parts):
            continue
        if child.name == MANIFEST_NAME or child.resolve() in skip:
            continue
        yield child


def _case_roots(
    paths: Sequence[Path], root: Path, manifest: SetManifest | None, problems: list[Problem]
) -> list[Path]:
    """Where to look for case files.

    A set's root given on the command line stands for its manifest's ``cases_dir`` and
    ``candidates_dir``; any other path is read as given.
    """
    if manifest is None or manifest.cases_dir in {".", ""}:
        return list(paths)
    out: list[Path] = []
    for p in paths:
        if p.is_dir() and p.resolve() == root.resolve():
            cases_dir = root / manifest.cases_dir
            if not cases_dir.is_dir():
                problems.append(
                    Problem(
                        root / MANIFEST_NAME,
                        None,
                        "cases_dir",
                        f"folder '{manifest.cases_dir}' does not exist under {root}",
                    )
                )
            else:
                out.append(p / manifest.cases_dir)
            candidates = root / manifest.candidates_dir
            if candidates.is_dir():
                out.append(p / manifest.candidates_dir)
        else:
            out.append(p)
    return out


def load_case_set(
    paths: Path | Sequence[Path], *, check_files: bool = True, compile_rules: bool = True
) -> CaseSet:
    """Load and validate a golden set from folders and/or case files.

    Case files are ``.yaml``/``.yml``/``.json`` (one case, or a list of cases) and ``.jsonl`` (one case
    a line). Folders named in :data:`NON_CASE_DIRS` (fixtures, transcripts, runs...) are never read as
    cases. Given the set's root and a manifest with a ``cases_dir``, only that folder and the
    ``candidates_dir`` are read. Cases under the ``candidates_dir`` are candidates.

    Set-level rules checked: ids unique across the set; an acceptance starting with ``REVIEW:`` only
    among candidates; referenced fixture and transcript files exist (when ``check_files``). Questions
    longer than :data:`QUESTION_CHAR_LIMIT` are reported as warnings.

    Args:
        paths: Folders or files making up the set.
        check_files: Whether to check that referenced files exist.
        compile_rules: Whether to compile every forbidden rule's conditions (CEL) now, so that a broken
            rule is a load problem (see :func:`judgekit.graders.rules.validate_case_rules`).

    Returns:
        The case set, with ``problems`` listing everything wrong (it never raises for a bad case).

    Raises:
        JudgekitError: When a path does not exist or nothing to read was found.
    """
    path_list = [paths] if isinstance(paths, Path) else list(paths)
    if not path_list:
        raise JudgekitError("no path given: name a golden-set folder or case files")
    for p in path_list:
        if not p.exists():
            raise JudgekitError(f"{p}: no such file or folder")
    root, manifest, problems = _find_root(path_list)
    case_set = CaseSet(root=root, manifest=manifest, problems=problems)
    candidates_dir = (root / (manifest.candidates_dir if manifest else "candidates")).resolve()
    files: list[Path] = []
    seen_files: set[Path] = set()
    for p in _case_roots(path_list, root, manifest, case_set.problems):
        for f in _case_files(p, set()):
            if f not in seen_files:
                seen_files.add(f)
                files.append(f)
    if not files:
        where = ", ".join(str(p) for p in path_list)
        raise JudgekitError(
            f"{where}: no case files found (looked for {', '.join(CASE_FILE_SUFFIXES)}; folders named "
            f"{', '.join(sorted(NON_CASE_DIRS))} are skipped)"
        )
    case_set.files = files
    for path in files:
        candidate = candidates_dir in path.resolve().parents
        try:
            for item in read_documents(path):
                if isinstance(item, Problem):
                    case_set.problems.append(item)
                    continue
                _add_documents(case_set, item, candidate)
        except LocatedError as exc:
            case_set.problems.append(exc.problem)
        except JudgekitError as exc:
            case_set.problems.append(Problem(path, None, "", exc.message.removeprefix(f"{path}: ")))
    _check_set_rules(case_set, check_files=check_files)
    if compile_rules:
        # Rules compile when the case loads: a syntax error, an unknown tool or an unknown name in a
        # forbidden rule is a load problem naming the case and the rule, not a surprise at grading time.
        from judgekit.graders.rules import validate_case_rules

        tools = manifest.tools if manifest else ()
        case_set.problems.extend(validate_case_rules(case_set.cases, tools=tools))
    return case_set


def _add_documents(case_set: CaseSet, doc: Document, candidate: bool) -> None:
    entries: Iterable[tuple[tuple[str | int, ...], Any]]
    if isinstance(doc.data, list):
        entries = [((i,), item) for i, item in enumerate(doc.data)]
    else:
        entries = [((), doc.data)]
    for prefix, data in entries:
        result = parse_case(data, doc, prefix)
        if isinstance(result, list):
            case_set.problems.extend(result)
        else:
            case_set.cases.append(LoadedCase(result, doc.path, doc, prefix, candidate))


def _check_set_rules(case_set: CaseSet, *, check_files: bool) -> None:
    counts = Counter(c.case.id for c in case_set.cases)
    first_seen: dict[str, LoadedCase] = {}
    for loaded in case_set.cases:
        case = loaded.case
        if counts[case.id] > 1:
            if case.id in first_seen:
                other = first_seen[case.id]
                case_set.problems.append(
                    Problem(
                        loaded.path,
                        loaded.line_of("id"),
                        "id",
                        f"duplicate id '{case.id}' (also at {other.path}:{other.line_of('id')}); "
                        "ids must be unique",
                    )
                )
            else:
                first_seen[case.id] = loaded
        if case.is_unreviewed and not loaded.candidate:
            case_set.problems.append(
                Problem(
                    loaded.path,
                    loaded.line_of("acceptance"),
                    "acceptance",
                    f"acceptance still starts with '{REVIEW_PREFIX}': a reviewer must write or approve it "
                    "before the case leaves the candidates folder",
                )
            )
        if check_files:
            for field_name, rel in case.referenced_files():
                if not case_set.resolve(rel).is_file():
                    case_set.problems.append(
                        Problem(
                            loaded.path,
                            loaded.line_of(field_name),
                            field_name,
                            f"file '{rel}' not found (looked in {case_set.root}); "
                            "paths are relative to the set's root",
                        )
                    )
        for i, question in enumerate(case.questions()):
            if len(question) > QUESTION_CHAR_LIMIT:
                which = "question" if i == 0 else f"paraphrases.{i - 1}"
                case_set.warnings.append(
                    Problem(
                        loaded.path,
                        loaded.line_of(which if i else "input"),
                        which,
                        f"{len(question)} characters; exports that cap questions at {QUESTION_CHAR_LIMIT} "
                        "(Copilot Studio) will leave it out",
                    )
                )

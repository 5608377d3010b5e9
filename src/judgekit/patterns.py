r"""Regular expressions written in cases and rubrics: compiled with RE2, which matches in linear time.

A pattern in a case file (a text pattern of ``must_mention``/``must_not_mention``, a state predicate's
``matches``, a forbidden rule's ``message_pattern``) is written by whoever edits the case, and it is
searched in text written by the agent under test. With a backtracking engine such as Python's ``re`` a
pattern like ``(a+)+$`` takes exponential time on ``aaaa…b``: one message could hang a whole run. Every
such pattern therefore goes through :func:`compile_pattern`, which compiles it with `RE2
<https://github.com/google/re2>`_ (the ``google-re2`` package): its matching time grows linearly with the
text, whatever the pattern.

RE2 does not run the constructs that need backtracking: lookahead ``(?=…)``/``(?!…)``, lookbehind
``(?<=…)``/``(?<!…)``, backreferences ``\1``/``(?P=name)``, atomic groups ``(?>…)``, possessive quantifiers
``a*+`` and conditionals ``(?(1)…)``. :func:`compile_pattern` refuses those with a message that names the
construct and how to rewrite the pattern; a case using one is refused when it loads. Other differences
from Python's ``re``: ``\w``, ``\d``, ``\s`` and ``\b`` are ASCII-only (``\pL`` matches a letter of any
script, ``\p{N}`` a digit), ``\Z`` is written ``\z``, a counted repetition is at most ``{1000}``, and
``$`` matches only at the very end of the text (not before a final newline).

judgekit's own fixed patterns (written in its source, never by a user) keep using Python's ``re``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import re2

__all__ = [
    "PATTERN_MAX_CHARS",
    "PATTERN_MAX_MEMORY",
    "CompiledPattern",
    "PatternError",
    "PatternMatch",
    "compile_pattern",
    "pattern_problem",
]

PATTERN_MAX_CHARS = 5000
"""Longest pattern accepted, in characters."""

PATTERN_MAX_MEMORY = 8 * 1024 * 1024
"""Most memory (bytes) RE2 may use for one compiled pattern; a pattern that needs more is refused."""


class PatternError(ValueError):
    """A pattern that cannot be compiled: what is wrong and what to write instead, for the case's author."""


class PatternMatch(Protocol):
    """One match: what :meth:`CompiledPattern.search` returns."""

    def group(self, index: int = 0) -> str:
        """The text matched by the whole pattern (``0``) or by one group."""
        ...


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A user's pattern, compiled for linear-time matching.

    Attributes:
        pattern: The pattern as written.
        ignore_case: Whether letter case is ignored.
    """

    pattern: str
    ignore_case: bool
    _regexp: object

    def search(self, text: str) -> PatternMatch | None:
        """The first match anywhere in ``text``, or ``None`` (time linear in the text's length)."""
        match: PatternMatch | None = self._regexp.search(text)  # type: ignore[attr-defined]
        return match


# What each construct RE2 refuses is called, and how to do without it. Keys are Python's parser opcodes.
_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "lookahead": (
        "a lookahead ((?=...) or (?!...))",
        "match the following text as part of the pattern, or split the check into two patterns",
    ),
    "lookbehind": (
        "a lookbehind ((?<=...) or (?<!...))",
        "match the preceding text as part of the pattern, or split the check into two patterns",
    ),
    "backreference": (
        "a backreference (\\1 or (?P=name))",
        "spell out the repeated text, or list the alternatives it may take",
    ),
    "atomic group": ("an atomic group ((?>...))", "use a plain group (?:...)"),
    "possessive quantifier": ("a possessive quantifier (*+, ++, ?+ or {m,n}+)", "drop the final +"),
    "conditional": (
        "a conditional group ((?(1)...|...))",
        "write the alternatives out with |",
    ),
}

_TAIL = "which judgekit's linear-time engine (RE2) does not run; rewrite it without it"


def _python_parser() -> tuple[Any, Any]:
    """Python's regular-expression parser and its opcodes (private modules without type stubs)."""
    return importlib.import_module("re._parser"), importlib.import_module("re._constants")


def _construct(pattern: str) -> str | None:
    """Name the backtracking-only construct a pattern uses, using Python's parser (no matching)."""
    sre_parse, sre_constants = _python_parser()
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError, MemoryError):
        return None
    ops = {
        sre_constants.GROUPREF: "backreference",
        sre_constants.GROUPREF_EXISTS: "conditional",
        sre_constants.ATOMIC_GROUP: "atomic group",
        sre_constants.POSSESSIVE_REPEAT: "possessive quantifier",
    }
    stack: list[object] = [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, sre_parse.SubPattern):
            stack.extend(item.data)
        elif isinstance(item, tuple | list):
            if len(item) == 2 and isinstance(item[0], sre_constants._NamedIntConstant):
                op, arg = item
                if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                    direction = arg[0] if isinstance(arg, tuple) else 1
                    return "lookbehind" if direction < 0 else "lookahead"
                if op in ops:
                    return ops[op]
                stack.append(arg)
            else:
                stack.extend(item)
    return None


def _python_syntax_error(pattern: str) -> str | None:
    """Python's own description of a syntax error (it gives the position), or ``None``."""
    sre_parse, _ = _python_parser()
    try:
        sre_parse.parse(pattern)
    except re.error as exc:
        return str(exc)
    except (RecursionError, OverflowError, ValueError, MemoryError):
        return None
    return None


def _quick_construct(pattern: str) -> str | None:
    """Name a construct from RE2's own message when Python's parser cannot (for example a bad pattern)."""
    if re.search(r"\(\?<?[=!]", pattern):
        return "lookbehind" if re.search(r"\(\?<[=!]", pattern) else "lookahead"
    if re.search(r"\(\?P=|\\[1-9]", pattern):
        return "backreference"
    if "(?>" in pattern:
        return "atomic group"
    if "(?(" in pattern:
        return "conditional"
    return None


def pattern_problem(pattern: str) -> str | None:
    """What is wrong with a pattern, in words for the case's author, or ``None`` when it compiles.

    Args:
        pattern: The pattern as written in the case.

    Returns:
        ``None``, or a message such as "this pattern uses a lookahead ((?=...) or (?!...)), which
        judgekit's linear-time engine (RE2) does not run; rewrite it without it: ...".
    """
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> CompiledPattern:
    """Compile a pattern written in a case or rubric for linear-time matching (cached).

    Args:
        pattern: The regular expression (RE2 syntax, which is Python's without the constructs that need
            backtracking).
        ignore_case: Whether letter case is ignored.

    Returns:
        The compiled pattern.

    Raises:
        PatternError: When the pattern is longer than :data:`PATTERN_MAX_CHARS`, uses a construct RE2
            does not run (named in the message, with how to rewrite it), needs more than
            :data:`PATTERN_MAX_MEMORY` bytes, or is not a valid regular expression.
    """
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be a string, not {type(pattern).__name__}")
    return _compile(pattern, ignore_case)


@lru_cache(maxsize=4096)
def _compile(pattern: str, ignore_case: bool) -> CompiledPattern:
    if len(pattern) > PATTERN_MAX_CHARS:
        raise PatternError(
            f"the pattern is {len(pattern)} characters long; at most {PATTERN_MAX_CHARS} are allowed "
            "(limit PATTERN_MAX_CHARS)"
        )
    options = re2.Options()
    options.log_errors = False
    options.max_mem = PATTERN_MAX_MEMORY
    options.case_sensitive = not ignore_case
    try:
        regexp = re2.compile(pattern, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else exc
        reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        construct = _construct(pattern) or _quick_construct(pattern)
        if construct is not None:
            what, how = _UNSUPPORTED[construct]
            raise PatternError(f"this pattern uses {what}, {_TAIL}: {how}") from None
        python_reason = _python_syntax_error(pattern)
        if python_reason is not None:
            raise PatternError(f"not a valid regular expression: {python_reason}") from None
        if "\\Z" in pattern and "\\Z" in reason:
            raise PatternError("\\Z is not supported: write \\z for the end of the text") from None
        if "pattern too large" in reason:
            raise PatternError(
                f"the pattern needs more than {PATTERN_MAX_MEMORY // (1024 * 1024)} MiB to compile "
                "(limit PATTERN_MAX_MEMORY); use smaller repetition counts"
            ) from None
        if "repetition size" in reason:
            raise PatternError(
                f"not a valid regular expression: {reason} (counted repetitions, multiplied through "
                "nested groups, come to at most 1000)"
            ) from None
        raise PatternError(f"not a valid regular expression: {reason}") from None
    return CompiledPattern(pattern, ignore_case, regexp)

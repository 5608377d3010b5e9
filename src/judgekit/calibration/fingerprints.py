"""What a user typed as a judge's fingerprint, resolved to exactly one full fingerprint.

A judge's fingerprint is the SHA-256 of its spec: 64 hexadecimal characters
(:mod:`judgekit.judges.fingerprint`). judgekit prints its first 12 (``judge 86b6bb71d425: untrusted``), and
records are keyed by all 64. Every place that accepts a fingerprint from a person (``judgekit calibrate
--fingerprint``, ``judgekit judge trust``, ``judge failure-modes --fingerprint``, ``judge probe-bias
--fingerprint``, :func:`judgekit.trust_status`, :class:`judgekit.CalibrationOptions`) passes it through
:func:`resolve_fingerprint`, the one rule:

- surrounding white space is dropped and letters are read in lower case;
- anything but the hexadecimal digits ``0-9a-f`` is refused (a fingerprint is never a label such as
  ``rubric:openai/gpt-4o-mini:…``);
- 64 characters are a full fingerprint, accepted as is (a judge not yet calibrated is known by no record);
- from :data:`MIN_PREFIX` (8) to 63 characters are a prefix: it must start exactly one of the full
  fingerprints known to the command (:class:`KnownFingerprints`: the records folder, the label table's
  ``fingerprint`` column, the judge configured in the project), else it is refused naming every match,
  or saying what was searched when nothing matched; the 12 characters judgekit prints always qualify;
- fewer than 8 characters are refused: such a prefix names no judge reliably.

So a calibration record, a bias report and a failure-mode record are always keyed by a full fingerprint.

>>> known = KnownFingerprints()
>>> known.add("86b6bb71d425" + "0" * 52, "calibration record a.json")
>>> resolve_fingerprint("86B6BB71D425", known) == "86b6bb71d425" + "0" * 52
True
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from judgekit.errors import JudgekitError

__all__ = ["FULL_LENGTH", "MIN_PREFIX", "SHORT_LENGTH", "KnownFingerprints", "resolve_fingerprint"]

FULL_LENGTH: Final = 64
"""Characters of a full fingerprint (a SHA-256 in hexadecimal)."""

SHORT_LENGTH: Final = 12
"""Characters of the short form judgekit prints (``judge 86b6bb71d425: ...``); always a usable prefix."""

MIN_PREFIX: Final = 8
"""The fewest characters a prefix may have (32 bits: two judges sharing them by chance is unlikely)."""

_HEX: Final = frozenset(string.hexdigits.lower())


@dataclass
class KnownFingerprints:
    """The full fingerprints a command knows, where each was seen, and what it searched.

    Attributes:
        found: Each full fingerprint known (64 lower-case hexadecimal characters) and the places it was
            seen (``calibration record <file>``, ``the judge configured in judgekit.toml``...), in order.
        searched: The places searched, said when nothing matched (``the records folder calibration/records
            (2 fingerprints)``...).
        prefix_keyed: Records keyed by a prefix instead of a full fingerprint (written by judgekit before
            prefixes were resolved), each as ``(key, what to say)``; named when what was typed and the key
            start alike, so such a record never disappears silently.
        pending: Sources too costly to read unless a prefix must be resolved (building the configured
            judge), each called once with this object by :meth:`complete`.
        file_names: Each record file's name and the full fingerprint it holds. A record's file name starts
            with 16 hexadecimal characters that are a hash of its fingerprint, not the fingerprint, so a
            user who copies them is told which judge that file is for.
    """

    found: dict[str, list[str]] = field(default_factory=dict)
    searched: list[str] = field(default_factory=list)
    prefix_keyed: list[tuple[str, str]] = field(default_factory=list)
    pending: list[Callable[[KnownFingerprints], None]] = field(default_factory=list)
    file_names: list[tuple[str, str]] = field(default_factory=list)

    def complete(self) -> None:
        """Read the pending sources (each once), so that :attr:`found` holds every known fingerprint."""
        while self.pending:
            self.pending.pop(0)(self)

    def add(self, fingerprint: str, where: str) -> None:
        """Record that ``fingerprint`` was seen at ``where``; a key that is not a full fingerprint is ignored.

        Args:
            fingerprint: A fingerprint read from a record, a table or a judge.
            where: Where it was seen, for messages.
        """
        key = fingerprint.strip().lower()
        if len(key) == FULL_LENGTH and set(key) <= _HEX:
            places = self.found.setdefault(key, [])
            if where not in places:
                places.append(where)

    def matching(self, prefix: str) -> list[str]:
        """The known full fingerprints starting with ``prefix`` (lower case), sorted; reads the pending."""
        self.complete()
        return sorted(fp for fp in self.found if fp.startswith(prefix))


def _checked_text(typed: str, option: str) -> str:
    """The typed fingerprint, stripped and in lower case, checked to be hexadecimal of a usable length."""
    text = typed.strip().lower()
    if not text:
        raise JudgekitError(
            f"{option}: the fingerprint is empty; give the judge's fingerprint (the {SHORT_LENGTH} "
            "characters judgekit prints, as in `judge 86b6bb71d425: untrusted`, or all 64)",
            exit_code=2,
        )
    bad = sorted({c for c in text if c not in _HEX})
    if bad:
        shown = ", ".join(repr(c) for c in bad[:5])
        raise JudgekitError(
            f"{option}: {typed.strip()!r} is not a fingerprint: a fingerprint is hexadecimal (0-9, a-f) and "
            f"{shown} {'is' if len(bad) == 1 else 'are'} not; copy the {SHORT_LENGTH} characters judgekit "
            "prints after `judge` (or the full 64)",
            exit_code=2,
        )
    if len(text) > FULL_LENGTH:
        raise JudgekitError(
            f"{option}: {text!r} has {len(text)} characters; a fingerprint has {FULL_LENGTH}",
            exit_code=2,
        )
    if len(text) < MIN_PREFIX:
        raise JudgekitError(
            f"{option}: {text!r} is too short to name one judge: give at least {MIN_PREFIX} characters of "
            f"the fingerprint (judgekit prints {SHORT_LENGTH}, which always work)",
            exit_code=2,
        )
    return text


def resolve_fingerprint(typed: str, known: KnownFingerprints, *, option: str = "fingerprint") -> str:
    """The one full fingerprint that ``typed`` names (the full fingerprint itself, or a prefix of it).

    Args:
        typed: What the user gave: a full fingerprint (64 hexadecimal characters, taken as is even when no
            record knows it) or a prefix of at least :data:`MIN_PREFIX` characters.
        known: The full fingerprints the command knows (see :class:`KnownFingerprints`).
        option: The option or argument it came from, named in messages (``--fingerprint``).

    Returns:
        The full fingerprint, 64 lower-case hexadecimal characters.

    Raises:
        JudgekitError: (exit code 2) When ``typed`` is empty, not hexadecimal, longer than a fingerprint
            or shorter than :data:`MIN_PREFIX`; when it is a prefix of more than one known fingerprint (each
            is named, with where it was seen); or when it is a prefix of none (the message says what was
            searched, names any record keyed by a prefix, and how to give the full fingerprint).
    """
    text = _checked_text(typed, option)
    if len(text) == FULL_LENGTH:
        return text
    matches = known.matching(text)
    if len(matches) == 1:
        return matches[0]
    if matches:
        named = "; ".join(f"{fp} ({', '.join(known.found[fp])})" for fp in matches)
        raise JudgekitError(
            f"{option}: {text} is the start of {len(matches)} fingerprints: {named}; give more characters "
            "(or the full fingerprint) to choose one",
            exit_code=2,
        )
    searched = "; ".join(known.searched) or "nothing (no records, no label table, no configured judge)"
    legacy = [say for key, say in known.prefix_keyed if key.startswith(text) or text.startswith(key)]
    old = f"; {'; '.join(legacy)}" if legacy else ""
    named_files = [(name, fp) for name, fp in known.file_names if name.lower().startswith(text)]
    if named_files:
        name, fp = named_files[0]
        old += (
            f"; {text} starts the file name {name}, and a record's file name begins with a hash of its "
            f"fingerprint, not the fingerprint: that record is for judge {fp[:SHORT_LENGTH]}"
        )
    raise JudgekitError(
        f"{option}: no known fingerprint starts with {text} (searched: {searched}){old}; give the judge's "
        f"full {FULL_LENGTH}-character fingerprint (`judge_fingerprint.hex` in any line of the results file "
        "`judgekit grade` wrote, or `fingerprint` in `judgekit grade --format json`), or configure the judge "
        "(judge.model in judgekit.toml) so that its fingerprint is known",
        exit_code=2,
    )

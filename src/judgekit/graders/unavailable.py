r"""The ``unavailable_data`` diagnosis: a failed trial whose agent went on without the data a tool refused it.

A trial gets this diagnosis, one more failure category beside those of its failed gates, when all of these
hold:

1. **The trial failed** (its verdict is ``fail``; a trial that passed, errored or was left undecided
   gets none: a category says why a case failed).
2. **A tool answered without the data**: its result is an error
   (:attr:`judgekit.transcript.CallRecord.is_error`: text starting with ``Error``, or a JSON object with an
   ``error`` key) or holds no record
   (:func:`no_record`: an empty text, JSON ``null``, ``[]``, ``{}``, an object all of whose values are
   empty, or a text of at most :data:`MAX_NOT_FOUND_CHARS` characters saying ``not found``, ``no
   record``, ``no such ...``, ``does not exist`` and the like). A call no result answered is not such an
   answer (the transcript may have lost it).
3. **The data never came**: no later call of the same tool was answered with data (a retry or a corrected
   lookup that found the record clears it).
4. **The agent went on as if it had the data**: after that answer it made another tool call or wrote
   to the user, and none of its messages after the answer says the data is missing
   (:func:`says_data_missing`: it could not or was unable to do something, ``no record``, ``not found``,
   ``was not issued``, ``did not go through``, ``an error``, ``unavailable``...). An agent that tells the
   user it cannot find the record, or that the step failed, did what a careful agent does, whatever else
   failed.

The diagnosis is a check (``unavailable_data``, layer ``diagnosis``) that never gates and is never scored
(weight 0): it changes no verdict and no quality score, and it is made only after the grading contract
settled the verdict (:func:`judgekit.graders.layered.combine`). Its evidence is the call that answered
without the data (index, tool, arguments, the answer) and the step the agent took next (its next call,
or its message). It is ``fail`` with category ``unavailable_data``, so that result lines
(``failure_categories``), the failure-category table of every report and the viewer count it with the
trial's other categories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from judgekit.graders.contract import make_check
from judgekit.graders.text import normalise
from judgekit.textnorm import excerpt
from judgekit.transcript import CallRecord, Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

__all__ = [
    "CHECK_ID",
    "LAYER",
    "MAX_NOT_FOUND_CHARS",
    "diagnose_unavailable_data",
    "no_record",
    "says_data_missing",
]

CHECK_ID = "unavailable_data"
"""The check id of the diagnosis."""

LAYER = "diagnosis"
"""The layer name of the diagnosis check: made after the verdict, by no layer of the registry."""

MAX_NOT_FOUND_CHARS = 300
"""Longest tool answer read as "no record" by its wording (a longer text holds data, whatever it says)."""

_QUOTE_CHARS = 160
"""Most characters of a tool answer or a message quoted in the evidence."""

_NONE_FOUND = (
    r"not found|no (?:such|matching)\b|no (?:records?|results?|matches|entries|data)\b"
    r"|(?:does|do|did)(?: not|n't) exist|not on file"
)
_NOT_FOUND = re.compile(rf"\b(?:{_NONE_FOUND}|could(?: not|n't) (?:find|locate))")
"""A short tool answer saying it holds no record (searched in case-folded, normalised text)."""

_CANNOT = (
    r"(?:could(?: not|n't)|can(?:not|'t| not)|unable to|(?:was|were|am)(?: not|n't) able to|not able to"
    r"|failed to) \w"
)
_DID_NOT = (
    r"(?:did(?: not|n't) (?:go through|work|succeed)|(?:was|were|has|have)(?: not|n't)(?: been)? \w+ed\b)"
)
_MISSING = re.compile(
    rf"\b(?:{_NONE_FOUND}|{_CANNOT}|{_DID_NOT}|(?:is|are|was|were)(?: not|n't) (?:available|possible)"
    r"|unavailable|errors?\b|went wrong|technical (?:issue|problem|difficult))"
)
"""An assistant message saying the data is missing (searched in case-folded, normalised text)."""


def _empty(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, list | dict) and not value)


def no_record(result: str | None) -> bool:
    """Whether a tool's answer holds no record (errors are :attr:`~judgekit.transcript.CallRecord.is_error`).

    Args:
        result: The tool's answer text; ``None`` (no answer recorded) is not an answer without a record.

    Returns:
        True for an empty or blank text, and for an answer of at most :data:`MAX_NOT_FOUND_CHARS`
        characters that is JSON ``null``, ``[]``, ``{}`` or ``""``, a JSON object whose every value is
        empty (``{"results": []}``) or one of whose text values says nothing was found (``{"message":
        "Prescription not found"}``), or a text saying so (``Patient P-101 not found``, ``no such
        prescription``, ``No records``). False for any other answer, and for every longer one.

    Examples:
        >>> [no_record(t) for t in ("", "[]", '{"results": []}', "Patient P-101 not found", '{"id": 1}')]
        [True, True, True, True, False]
    """
    if result is None:
        return False
    text = result.strip()
    if not text:
        return True
    if len(text) > MAX_NOT_FOUND_CHARS:
        return False
    try:
        data = json.loads(text)
    except ValueError:
        data = text
    if _empty(data):
        return True
    if isinstance(data, dict):
        values = list(data.values())
        return all(_empty(v) for v in values) or any(
            isinstance(v, str) and _NOT_FOUND.search(normalise(v)) is not None for v in values
        )
    return isinstance(data, str) and _NOT_FOUND.search(normalise(data)) is not None


def says_data_missing(text: str) -> bool:
    """Whether an assistant message tells the user the data is missing (or a tool failed).

    Examples:
        >>> says_data_missing("I couldn\u2019t find a prescription RX-9 on your file.")
        True
        >>> says_data_missing("Your refill of RX-9 is on its way.")
        False
    """
    return _MISSING.search(normalise(text)) is not None


def _quote(text: str) -> str:
    """``text`` on one line, cut to :data:`_QUOTE_CHARS` characters (for a summary)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_CHARS else flat[: _QUOTE_CHARS - 1] + "…"


def _excerpt(text: str) -> str:
    """The start of a message as written, cut between words within :data:`_QUOTE_CHARS` characters, ``...``.

    Verbatim (:func:`judgekit.textnorm.excerpt` of the empty span at the start), so that the viewer finds
    it in the message (it ignores the trailing ``...``).
    """
    return excerpt(text.strip(), 0, 0, context=_QUOTE_CHARS)


def _call_evidence(record: CallRecord, what: str) -> Evidence:
    """Evidence pointing at one call: ``call <index> <tool>: <what>``, with its arguments."""
    return Evidence(
        kind="call",
        summary=f"call {record.index} {record.call.name}: {what}",
        call_index=record.index,
        tool=record.call.name,
        arguments=record.call.arguments,
        message_index=record.message_index,
    )


def _missing_answer(record: CallRecord) -> str | None:
    """``"an error"`` or ``"no record"`` when the call was answered without data, else ``None``."""
    if record.is_error:
        return "an error"
    if no_record(record.result):
        return "no record"
    return None


def _went_on(
    transcript: Transcript, calls: Sequence[CallRecord], failed: CallRecord
) -> tuple[str, Evidence] | None:
    """What the agent did next as if it had the data, or ``None`` when it did not (see the module)."""
    later = [c for c in calls[failed.index + 1 :] if c.message_index > failed.message_index]
    if any(
        c.call.name == failed.call.name and c.result is not None and _missing_answer(c) is None for c in later
    ):
        return None  # the data came: a later call of the same tool answered with it
    texts = [(i, t) for i, t in transcript.assistant_texts() if i > failed.message_index]
    if any(says_data_missing(t) for _, t in texts):
        return None
    steps: list[tuple[int, str, Evidence]] = []
    answer = _missing_answer(failed)
    if later:
        nxt = later[0]
        steps.append(
            (
                nxt.message_index,
                f"called {nxt.call.name} (call {nxt.index})",
                _call_evidence(
                    nxt, f"made after call {failed.index} ({failed.call.name}) answered with {answer}"
                ),
            )
        )
    if texts:
        index, text = texts[0]
        steps.append(
            (
                index,
                f"wrote to the user (message {index})",
                Evidence(
                    kind="text",
                    summary=f"assistant message {index} does not say the data is missing",
                    quote=_excerpt(text),
                    message_index=index,
                ),
            )
        )
    if not steps:
        return None
    _, what, evidence = min(steps, key=lambda s: s[0])
    return what, evidence


def diagnose_unavailable_data(
    verdict: Verdict, transcript: Transcript, calls: Sequence[CallRecord] | None = None
) -> CheckResult | None:
    """The ``unavailable_data`` diagnosis of one trial, or ``None`` when the trial does not have it.

    Args:
        verdict: The trial's settled verdict; only ``fail`` can have the diagnosis.
        transcript: The trial.
        calls: ``transcript.calls()`` when the caller already has it.

    Returns:
        A ``fail`` check (id ``unavailable_data``, layer ``diagnosis``, category ``unavailable_data``, not a
        gate, weight 0) for the first call answered with an error or no record after which the agent went
        on as if it had the data (the module's rule), with that call and the agent's next step as
        evidence; ``None`` when the trial did not fail or no call fits.
    """
    if verdict is not Verdict.FAIL:
        return None
    records = list(calls) if calls is not None else transcript.calls()
    for record in records:
        answer = _missing_answer(record)
        if answer is None:
            continue
        went_on = _went_on(transcript, records, record)
        if went_on is None:
            continue
        what, step = went_on
        failed = _call_evidence(record, f'answered with {answer}: "{_quote(record.result or "")}"')
        return make_check(
            CHECK_ID,
            LAYER,
            Verdict.FAIL,
            gate=False,
            weight=0.0,
            reason=f"call {record.index} ({record.call.name}) answered with {answer} and the agent went on "
            f"as if it had the data: it {what} without saying the data was missing",
            category=FailureCategory.UNAVAILABLE_DATA,
            evidence=(failed, step),
        )
    return None

"""Position consistency of a pairwise judge, measured on judgments it already gave in both orders.

A pairwise judge is shown two outputs and picks the better one (or a tie). Asked again with the two
outputs swapped, a judge that reads the outputs rather than their places picks the *same output*. This
module reads such recorded judgments (no judge is called) and reports:

* **position consistency**: the share of paired items whose winner, mapped back to the underlying output,
  is the same in both orders (a tie in both orders is consistent);
* **flip rate**: the share whose winner differs (``1 − consistency``); a tie in one order and a pick in
  the other is a flip;
* the flips that follow a *position*: ``first_both`` (the judge picked the first-shown output both times,
  so different outputs) and ``second_both`` (the second-shown one both times); their balance is the
  direction of the position bias, with the share toward the first position, its Wilson interval and the
  exact two-sided sign test of ``first_both`` against ``second_both``;
* the **position effect** ``(first_both − second_both) / paired``: how much more often the judge followed
  the first position than the second, with Newcombe's paired-difference interval. Noise flips (a judge
  that is merely unsure) land on either position equally often, so without a placebo re-run this effect,
  not the flip rate, is what decides the verdict: ``biased`` when the interval lies wholly beyond
  ``± tolerance``, ``clear`` otherwise, ``error`` when no item is paired.

Conventions (stated once, used everywhere):

* the **original** order shows output 1 first and output 2 second; the **swapped** order shows output 2
  first and output 1 second;
* in the plain format, ``winner`` is the *shown position*: ``A`` = the first-shown output, ``B`` = the
  second-shown one, ``tie``. In the swapped order ``A`` therefore means output 2 and ``B`` output 1; this
  module maps it back;
* in LLMBar's ``result.json`` (a JSON array; each element's last ``results`` entry holds
  ``"swap = False"`` and ``"swap = True"``, each with ``"winner"``), the winner is already the underlying
  output (``"1"`` or ``"2"``; LLMBar reverses the swapped pick before saving) and ``null`` when LLMBar could
  not parse the reply. Items are named ``#1``, ``#2``, … by their place in the array.

Items judged in only one order, and items whose winner is missing (LLMBar's ``null``), are listed in the
report, never dropped silently. Every malformed row is a located problem (file, line, field).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from judgekit.calibration.agreement import rate, undefined
from judgekit.calibration.bias import BiasReport, ProbeResult, ProbeSettings, newcombe_paired_difference
from judgekit.calibration.labels import table_rows, table_text
from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.io.documents import json_error_detail, load_json_bounded
from judgekit.stats import Estimate, Interval, sign_test
from judgekit.verdict import FrozenModel

__all__ = [
    "ORDERS",
    "WINNERS",
    "Judgment",
    "PositionReport",
    "parse_judgments",
    "parse_llmbar",
    "position_bias_report",
    "position_consistency",
    "read_recorded",
]

Order = Literal["original", "swapped"]
ORDERS: tuple[Order, ...] = ("original", "swapped")
WINNERS = ("A", "B", "tie")
"""Winner values of the plain format: the shown position (A first, B second) or ``tie``."""
Output = Literal["1", "2", "tie"]
"""An underlying winner: output 1 (first in the original order), output 2, or a tie."""

PLAIN_COLUMNS = ("item_id", "order", "winner")


@dataclass(frozen=True, slots=True)
class Judgment:
    """One recorded pairwise judgment, mapped to the underlying outputs.

    Attributes:
        item_id: The item (the pair of outputs) judged.
        order: ``original`` (output 1 shown first) or ``swapped`` (output 2 shown first).
        winner: ``1``, ``2`` or ``tie`` (underlying output), or ``None`` when the record has no winner.
        line: Where it came from in its file (the 1-based array position for LLMBar files).
        source: The file.
    """

    item_id: str
    order: Order
    winner: Output | None
    line: int
    source: Path | None


def _shown_to_output(shown: str, order: Order) -> Output:
    if shown == "tie":
        return "tie"
    first_is_1 = order == "original"
    return "1" if (shown == "A") == first_is_1 else "2"


def parse_judgments(
    data: bytes | str,
    *,
    source: str | os.PathLike[str] | None = None,
    fmt: str | None = None,
    order: Order | None = None,
) -> tuple[Judgment, ...]:
    """Parse the plain format: one row per judgment with ``item_id``, ``order`` and ``winner``.

    ``winner`` is the shown position: ``A`` (first shown), ``B`` (second shown) or ``tie``, spelled exactly
    so. In the ``swapped`` order ``A`` is output 2; the returned judgments carry the underlying output.

    Args:
        data: The file's bytes or text.
        source: The file, for messages and for the format (``.csv``, ``.jsonl`` or ``.ndjson``).
        fmt: ``csv`` or ``jsonl`` to override the suffix.
        order: When given, every row is in this order (a file of one order): the ``order`` column may be
            left out, and a row naming the other order is an error.

    Returns:
        The judgments, in file order.

    Raises:
        ProblemsError: Every located problem: an unknown column or field, a missing ``item_id``, ``order``
            or ``winner``, an ``order`` that is not ``original``/``swapped`` (or not the file's order), a
            winner outside ``A``/``B``/``tie``, one item given twice in one order, an empty file.
        JudgekitError: When the bytes are not UTF-8 or the format cannot be told.
    """
    path = Path(source) if source is not None else None
    text = table_text(data, path, not_utf8="the judgments are not UTF-8 text")
    suffix = path.suffix.lower() if path is not None else ""
    kind = fmt or {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(suffix)
    if kind not in ("csv", "jsonl"):
        raise JudgekitError(
            f"{path}: cannot tell the judgments' format; use a .csv or .jsonl file (or LLMBar's result.json)"
        )
    problems: list[Problem] = []
    out: list[Judgment] = []
    seen: dict[tuple[str, Order], int] = {}
    for line, obj in table_rows(text, path, kind, known=PLAIN_COLUMNS, required=()):
        if kind == "jsonl":
            problems += [
                Problem(path, line, k, f"unknown field; known fields: {', '.join(PLAIN_COLUMNS)}")
                for k in obj
                if k not in PLAIN_COLUMNS
            ]
        values: dict[str, str] = {}
        for name in PLAIN_COLUMNS:
            value = obj.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                if name == "order" and order is not None:
                    continue
                what = {"item_id": "the item's id", "order": "original or swapped", "winner": "A, B or tie"}
                problems.append(
                    Problem(path, line, name, f"required field is missing or empty; give {what[name]}")
                )
                continue
            if isinstance(value, bool) or not isinstance(value, str | int):
                problems.append(Problem(path, line, name, f"must be a string, got {type(value).__name__}"))
                continue
            values[name] = str(value).strip()
        row_order: Order | None = order
        given = values.get("order")
        if given is not None:
            if given not in ORDERS:
                problems.append(Problem(path, line, "order", f"{given!r} is not original or swapped"))
                continue
            if order is not None and given != order:
                problems.append(
                    Problem(
                        path,
                        line,
                        "order",
                        f"{given!r} in a file of {order}-order judgments; "
                        "put each order's judgments in its own file, or use one file with an order column",
                    )
                )
                continue
            row_order = "original" if given == "original" else "swapped"
        winner = values.get("winner")
        if winner is not None and winner not in WINNERS:
            problems.append(
                Problem(
                    path,
                    line,
                    "winner",
                    f"{winner!r} is not A, B or tie (A: the first-shown output, B: the second-shown one)",
                )
            )
            continue
        item_id = values.get("item_id")
        if item_id is None or winner is None or row_order is None:
            continue
        prev = seen.get((item_id, row_order))
        if prev is not None:
            problems.append(
                Problem(
                    path,
                    line,
                    "item_id",
                    f"item {item_id!r} is judged in the {row_order} order on line "
                    f"{prev} too; keep one judgment per item and order",
                )
            )
            continue
        seen[(item_id, row_order)] = line
        out.append(Judgment(item_id, row_order, _shown_to_output(winner, row_order), line, path))
    if problems:
        raise ProblemsError(problems)
    if not out:
        raise ProblemsError([Problem(path, None, "", "the file has no judgments")])
    return tuple(out)


def parse_llmbar(data: bytes | str, *, source: str | os.PathLike[str] | None = None) -> tuple[Judgment, ...]:
    """Parse an LLMBar ``result.json``: both orders of every item, from its last ``results`` entry.

    Args:
        data: The file's bytes or text.
        source: The file, for messages.

    Returns:
        Two judgments per item (``original`` from ``"swap = False"``, ``swapped`` from ``"swap = True"``),
        items named ``#1``, ``#2``, … by array position; a ``null`` winner becomes ``winner=None``.

    Raises:
        ProblemsError: When the file is not a JSON array of objects, an element has no ``results`` list
            with a final object holding both ``"swap = False"`` and ``"swap = True"``, or a winner is not
            ``"1"``, ``"2"`` or ``null`` (each problem names the element).
    """
    path = Path(source) if source is not None else None
    try:
        doc = load_json_bounded(data.decode("utf-8-sig") if isinstance(data, bytes) else data, source=path)
    except (LocatedError, UnicodeDecodeError) as exc:
        detail = json_error_detail(exc.problem.message) if isinstance(exc, LocatedError) else "not UTF-8"
        raise ProblemsError([Problem(path, None, "", f"not valid JSON: {detail}")]) from None
    if not isinstance(doc, list) or not doc:
        raise ProblemsError(
            [Problem(path, None, "", "an LLMBar result file is a non-empty JSON array of evaluated items")]
        )
    problems: list[Problem] = []
    out: list[Judgment] = []
    for index, element in enumerate(doc, start=1):
        where = f"[{index - 1}]"
        results = element.get("results") if isinstance(element, dict) else None
        final = results[-1] if isinstance(results, list) and results else None
        if not isinstance(final, dict):
            problems.append(
                Problem(
                    path,
                    None,
                    f"{where}.results",
                    'needs a list ending in an object with "swap = False" and "swap = True"',
                )
            )
            continue
        for key, order in (("swap = False", "original"), ("swap = True", "swapped")):
            entry = final.get(key)
            if not isinstance(entry, dict) or "winner" not in entry:
                problems.append(
                    Problem(path, None, f"{where}.results[-1].{key}", 'missing, or has no "winner"')
                )
                continue
            winner = entry["winner"]
            if winner is not None and winner not in ("1", "2"):
                problems.append(
                    Problem(
                        path, None, f"{where}.results[-1].{key}.winner", f'{winner!r} is not "1", "2" or null'
                    )
                )
                continue
            mapped: Output | None = None if winner is None else ("1" if winner == "1" else "2")
            out.append(
                Judgment(f"#{index}", "original" if order == "original" else "swapped", mapped, index, path)
            )
    if problems:
        raise ProblemsError(problems)
    return tuple(out)


def _looks_like_llmbar(data: bytes, path: Path) -> bool:
    return path.suffix.lower() == ".json" and data.lstrip().startswith(b"[")


def read_recorded(
    recorded: str | os.PathLike[str], swapped: str | os.PathLike[str] | None = None
) -> tuple[Judgment, ...]:
    """Read recorded judgments: one file with both orders, or an original-order and a swapped-order file.

    Args:
        recorded: An LLMBar ``result.json`` (both orders), a plain ``.csv``/``.jsonl`` with an ``order``
            column, or, with ``swapped``, the original-order file (its ``order`` column optional).
        swapped: The swapped-order file in the plain format (its ``order`` column optional), or ``None``.

    Raises:
        JudgekitError: When a file cannot be read, or ``swapped`` is given with an LLMBar file.
        ProblemsError: The located problems of :func:`parse_judgments` / :func:`parse_llmbar`.
    """
    from judgekit.io.documents import read_input

    first = Path(recorded)
    data = read_input(first, "recorded judgments")
    if _looks_like_llmbar(data, first):
        if swapped is not None:
            raise JudgekitError(
                f"{first}: an LLMBar result file holds both orders; drop --swapped", exit_code=2
            )
        return parse_llmbar(data, source=first)
    if swapped is None:
        return parse_judgments(data, source=first)
    second = Path(swapped)
    return parse_judgments(data, source=first, order="original") + parse_judgments(
        read_input(second, "swapped-order judgments"), source=second, order="swapped"
    )


class PositionReport(FrozenModel):
    """Position consistency of a pairwise judge over recorded two-order judgments.

    Attributes:
        schema_version: Always ``judgekit.position-report/1``.
        sources: The files read.
        items: Distinct items seen (in either order).
        paired: Items with a winner in both orders (the denominator of every rate).
        consistent: Paired items whose underlying winner is the same in both orders.
        ties_both: Consistent items that are a tie in both orders.
        first_both: Flips where the judge picked the first-shown output in both orders.
        second_both: Flips where it picked the second-shown output in both orders.
        tie_and_pick: Flips with a tie in one order and a pick in the other.
        consistency: ``consistent / paired`` with a Wilson interval.
        flip_rate: ``(paired − consistent) / paired`` with a Wilson interval.
        first_position_share: ``first_both / (first_both + second_both)`` with a Wilson interval: of the
            flips that followed a position, the share toward the first one (0.5 means no direction).
        sign_test_p: Exact two-sided sign test of ``first_both`` against ``second_both`` (1.0 when both 0).
        position_effect: ``(first_both − second_both) / paired`` with Newcombe's paired interval; positive
            means the first-shown output is favoured.
        tolerance: The position effect tolerated before the verdict is ``biased``.
        verdict: ``biased`` when the effect's interval lies wholly beyond ``± tolerance``, ``clear``
            otherwise, ``error`` when nothing is paired.
        only_one_order: Items judged in one order only, as ``(item_id, order present)``.
        no_winner: Items left out because a judgment has no winner, as ``(item_id, order)``.
        message: One sentence for a report.
    """

    schema_version: Literal["judgekit.position-report/1"] = "judgekit.position-report/1"
    sources: tuple[str, ...]
    items: int
    paired: int
    consistent: int
    ties_both: int
    first_both: int
    second_both: int
    tie_and_pick: int
    consistency: Estimate
    flip_rate: Estimate
    first_position_share: Estimate
    sign_test_p: float
    position_effect: Estimate
    tolerance: float = Field(ge=0.0, lt=1.0)
    verdict: Literal["clear", "biased", "error"]
    only_one_order: tuple[tuple[str, str], ...]
    no_winner: tuple[tuple[str, str], ...]
    message: str


def position_consistency(
    judgments: Sequence[Judgment], *, confidence: float = 0.95, tolerance: float = 0.0
) -> PositionReport:
    """Pair judgments by item across the two orders and measure position consistency and bias.

    Args:
        judgments: Judgments of both orders (at most one per item and order).
        confidence: Two-sided confidence of every interval, in (0.5, 1).
        tolerance: Position effect tolerated before the verdict is ``biased``, in [0, 1).

    Returns:
        The report; see :class:`PositionReport` for each figure.

    Raises:
        JudgekitError: When an item has two judgments in one order.
    """
    by_item: dict[str, dict[Order, Judgment]] = {}
    for j in judgments:
        slot = by_item.setdefault(j.item_id, {})
        if j.order in slot:
            raise JudgekitError(
                f"{j.source}:{j.line}: item {j.item_id!r} has a second {j.order}-order judgment "
                f"(first on line {slot[j.order].line}); keep one per item and order"
            )
        slot[j.order] = j
    only: list[tuple[str, str]] = []
    missing: list[tuple[str, str]] = []
    consistent = ties_both = first_both = second_both = tie_and_pick = 0
    for item_id, slot in by_item.items():
        if len(slot) == 1:
            only.append((item_id, next(iter(slot))))
            continue
        orig, swap = slot["original"].winner, slot["swapped"].winner
        if orig is None or swap is None:
            missing += [(item_id, o) for o in ORDERS if slot[o].winner is None]
            continue
        if orig == swap:
            consistent += 1
            ties_both += orig == "tie"
        elif "tie" in (orig, swap):
            tie_and_pick += 1
        elif orig == "1":  # output 1 in the original order, output 2 in the swapped: first shown both times
            first_both += 1
        else:
            second_both += 1
    paired = consistent + first_both + second_both + tie_and_pick
    what = "items judged in both orders"
    if paired:
        diff, low, high = newcombe_paired_difference(
            0, first_both, second_both, paired - first_both - second_both, confidence=confidence
        )
        effect = Estimate(
            value=diff,
            n=paired,
            interval=Interval(low=low, high=high, confidence=confidence, method="newcombe"),
        )
        verdict: Literal["clear", "biased", "error"] = (
            "biased" if low > tolerance or high < -tolerance else "clear"
        )
    else:
        effect = undefined(f"no {what} with a winner in each")
        verdict = "error"
    report_rates = {
        "consistency": rate(consistent, paired, confidence=confidence, what=what),
        "flip_rate": rate(paired - consistent, paired, confidence=confidence, what=what),
        "first_position_share": rate(
            first_both, first_both + second_both, confidence=confidence, what="flips that followed a position"
        ),
    }
    p = sign_test(first_both, second_both)
    if verdict == "error":
        message = f"position (recorded): no item has a winner in both orders ({len(by_item)} item(s) read)"
    else:
        c, lo, hi = diff, low, high
        message = (
            f"position (recorded): {verdict}; consistent on {consistent}/{paired} "
            f"({consistent / paired:.1%}); of {paired - consistent} flip(s), {first_both} chose the "
            f"first-shown output both times and {second_both} the second-shown, {tie_and_pick} a tie in one "
            "order only; "
            f"position effect {c:+.3f} [{lo:+.3f}, {hi:+.3f}] (sign test p = {p:.3g})"
        )
    return PositionReport(
        sources=tuple(dict.fromkeys(str(j.source) for j in judgments if j.source is not None)),
        items=len(by_item),
        paired=paired,
        consistent=consistent,
        ties_both=ties_both,
        first_both=first_both,
        second_both=second_both,
        tie_and_pick=tie_and_pick,
        sign_test_p=p,
        position_effect=effect,
        tolerance=tolerance,
        verdict=verdict,
        only_one_order=tuple(sorted(only)),
        no_winner=tuple(sorted(missing)),
        message=message,
        **report_rates,
    )


def position_bias_report(
    report: PositionReport, *, fingerprint: str, judge: str, created_at: datetime | None = None
) -> BiasReport:
    """A bias report holding the recorded position result, for the records folder's ``bias/``.

    The single ``position`` probe result is must-pass, so a ``biased`` or ``error`` verdict withdraws trust
    exactly as a live probe's does. Its fields read: ``n`` paired items, ``treated_flips`` the flips,
    ``placebo_flips`` 0 (recorded judgments have no re-run), ``toward_pass`` / ``toward_fail`` the flips
    toward the first / second shown position, and ``bias`` / ``low`` / ``high`` the position effect with
    its interval (not a flip rate minus a placebo).

    Args:
        report: The recorded position report.
        fingerprint: The judge's grader fingerprint the judgments came from.
        judge: A short label for the judge.
        created_at: When (UTC); default now.
    """
    interval = report.position_effect.interval
    result = ProbeResult(
        probe="position",
        verdict=report.verdict,
        must_pass=True,
        n=report.paired,
        treated_flips=report.paired - report.consistent,
        placebo_flips=0,
        both=0,
        toward_pass=report.first_both,
        toward_fail=report.second_both,
        bias=report.position_effect.value,
        low=interval.low if interval is not None else None,
        high=interval.high if interval is not None else None,
        error_detail=report.position_effect.undefined_reason or "",
        message=report.message,
    )
    return BiasReport(
        fingerprint=fingerprint,
        judge=judge,
        settings=ProbeSettings(probes=("position",), must_pass=("position",), tolerance=report.tolerance),
        results=(result,),
        created_at=created_at or datetime.now(UTC),
    )

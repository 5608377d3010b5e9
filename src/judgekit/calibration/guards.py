"""Refusals that protect calibration numbers from the mistakes that quietly inflate them.

Each guard refuses with a :class:`~judgekit.errors.JudgekitError` (or a
:class:`~judgekit.errors.ProblemsError` of located problems) whose message says what is wrong and what to
collect instead. A refusal has ``exit_code`` 1 (the check ran and its answer is no); input the guard cannot
read (a malformed few-shot file or ledger, an item without provenance among items with one) keeps the
input-error code 2:

* **Few-shot leakage** (:func:`check_few_shot_overlap`): a judge whose prompt shows it an example that is
  also a labelled test item has seen the answer; agreement on that item measures memory, not judgement.
* **Development set reused as a test set** (:func:`check_not_selection_set`): labels that were used to
  choose between judges (or prompts, or models) select the judge that happens to fit them best; the winner's
  agreement on the same labels is optimistic. Choosing is recorded in a ledger in the calibration records
  folder (:func:`record_selection`), with the labels' order-free content fingerprint and their items, and
  calibrating on a recorded selection set (in any row order or format), or on any table sharing one of
  its items, is refused.
* **Failure rate on the calibration set** (:func:`check_rate_population`): a failure rate estimated on the
  items used to calibrate the judge describes the hand-labelled sample, not production.
* **Provenance** (:func:`random_sample_only`): items carry where they came from, ``random`` (a random
  production sample) or ``discovery`` (hand-picked while looking for failures). Hand-picked items are
  useful for finding failure modes but bias every rate: rates and gates use only the random ones.

The ledger of label usage is ``label-usage.jsonl`` in the records folder (one JSON object per line); it is
read and rewritten whole, atomically, like calibration records.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from judgekit.calibration.labels import LabelTable
from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.io.documents import (
    check_duplicate_keys,
    check_json_bounds,
    json_error_detail,
    jsonl_lines,
    load_json_bounded,
)
from judgekit.judges.rubric import FewShotExample
from judgekit.textnorm import TEXT_DIGESTS, WORDS
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = [
    "PROMPT_MIN_WORDS",
    "USAGE_FILE",
    "FewShotExample",
    "LabelSplit",
    "LabelUsage",
    "PromptOverlap",
    "ProvenanceSummary",
    "SelectionDocument",
    "check_few_shot_overlap",
    "check_not_selection_set",
    "check_prompt_overlap",
    "check_rate_population",
    "check_test_unseen",
    "find_prompt_overlap",
    "label_content_sha256",
    "load_usage",
    "parse_few_shot",
    "random_sample_only",
    "record_refinement",
    "record_selection",
    "text_digest",
]

USAGE_FILE = "label-usage.jsonl"
"""Name of the label-usage ledger inside the calibration records folder."""


# --------------------------------------------------------------------------------------------- provenance


class ProvenanceSummary(FrozenModel):
    """How a table's items split by provenance, and what the rates were computed on.

    Attributes:
        random: Items from a random production sample (used by rates and gates).
        discovery: Hand-picked items (left out of rates and gates).
        unspecified: Items with no provenance (only when no item has one: then all are used, with a note).
        note: One sentence for the report.
    """

    random: int
    discovery: int
    unspecified: int
    note: str


def random_sample_only(table: LabelTable) -> tuple[LabelTable, ProvenanceSummary]:
    """Keep only the items of a random production sample for rates and gates.

    When no row carries a provenance, every item is kept and the note says provenance was not recorded.
    When some do, every item must have one (on at least one of its rows); ``discovery`` items are dropped.

    Returns:
        The table restricted to random-sample items (same scale, source and hash, with a note), and the
        summary.

    Raises:
        ProblemsError: When some items have a provenance and others have none (one problem per item
            without, at its first line): an incomplete table, exit code 2.
        JudgekitError: When no item is from a random sample: the guard's refusal, exit code 1.
    """
    prov = table.provenance()
    items = table.items
    if not prov:
        note = (
            "provenance not recorded: every item is treated as a random production sample; add a "
            "provenance column (random or discovery) so hand-picked items stay out of rates and gates"
        )
        return table, ProvenanceSummary(random=0, discovery=0, unspecified=len(items), note=note)
    missing = [i for i in items if i not in prov]
    if missing:
        first_line: dict[object, int] = {}
        for row in table.rows:
            first_line.setdefault(row.item, row.line)
        raise ProblemsError(
            [
                Problem(
                    table.source,
                    first_line.get(i),
                    "provenance",
                    f"item {i} has no provenance while other items do; mark it random (from a random "
                    "production sample) or discovery (hand-picked)",
                )
                for i in missing[:50]
            ]
        )
    n_random = sum(1 for p in prov.values() if p == "random")
    n_discovery = len(prov) - n_random
    where = f"{table.source}: " if table.source is not None else ""
    if n_random == 0:
        raise JudgekitError(
            f"{where}all {n_discovery} items are hand-picked (provenance discovery); rates and gates need "
            "a random production sample: label randomly sampled items (judgekit labels plan says how "
            "many) and mark them provenance random",
            exit_code=1,  # the provenance guard ran and refused the labels (not an input error)
        )
    rows = tuple(r for r in table.rows if prov.get(r.item) == "random")
    note = (
        f"rates and gates use the {n_random} random-sample items; {n_discovery} hand-picked (discovery) "
        "items are left out"
    )
    kept = LabelTable(
        scale=table.scale,
        rows=rows,
        source=table.source,
        sha256=table.sha256,
        notes=(*table.notes, note) if n_discovery else table.notes,
    )
    return kept, ProvenanceSummary(random=n_random, discovery=n_discovery, unspecified=0, note=note)


# --------------------------------------------------------------------------------------------- few-shot


def text_digest(text: str) -> str:
    """SHA-256 of text after NFKC normalisation, case folding and whitespace collapsing.

    The profile :data:`judgekit.textnorm.TEXT_DIGESTS`: the hex digest is compared with the digests of
    labelled items, so changing that profile changes which examples are found.
    """
    return hashlib.sha256(TEXT_DIGESTS.apply(text).encode("utf-8")).hexdigest()


def parse_few_shot(
    data: bytes | str, *, source: str | os.PathLike[str] | None = None
) -> list[tuple[int, FewShotExample]]:
    """Parse few-shot examples from JSON Lines (one object per line, fields of :class:`FewShotExample`).

    ``source`` may be given as text or a path object.

    Returns:
        ``(line, example)`` pairs.

    Raises:
        ProblemsError: For a line that is not a JSON object, an unknown field, or an example that names
            neither an item, a case nor a text.
    """
    source = Path(source) if source is not None else None
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    out: list[tuple[int, FewShotExample]] = []
    problems: list[Problem] = []
    for number, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            obj = load_json_bounded(raw, source=source, line=number)
        except LocatedError as exc:
            problems.append(
                Problem(source, number, "", f"not valid JSON: {json_error_detail(exc.problem.message)}")
            )
            continue
        try:
            example = FewShotExample.model_validate(obj)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
                problems.append(Problem(source, number, loc, msg))
            continue
        if example.item_id is None and example.case_id is None and not example.text:
            problems.append(
                Problem(
                    source, number, "", "an example needs an item_id, a case_id or its text to be checked"
                )
            )
            continue
        out.append((number, example))
    if problems:
        raise ProblemsError(problems)
    return out


def check_few_shot_overlap(
    examples: Sequence[tuple[int, FewShotExample]],
    table: LabelTable,
    *,
    item_texts: Mapping[str, str] | None = None,
    source: str | os.PathLike[str] | None = None,
) -> None:
    """Refuse when a few-shot example is also a labelled test item.

    An example overlaps when its ``item_id`` is an item of the table, its ``case_id`` is a case of the
    table, or its text equals (after normalisation) the text of a labelled item given in ``item_texts``.

    Args:
        examples: ``(line, example)`` pairs from :func:`parse_few_shot`.
        table: The labelled test items.
        item_texts: Optional transcript text per ``item_id`` of the table.
        source: The few-shot file, for messages, as text or a path object.

    Raises:
        ProblemsError: One problem per overlapping example, saying which item it leaks and what to do
            (the guard's refusal, exit code 1).
    """
    source = Path(source) if source is not None else None
    item_ids = {k.item_id for k in table.items}
    cases = set(table.case_of().values())
    by_digest: dict[str, str] = {}
    for item_id, text in (item_texts or {}).items():
        if item_id in item_ids and text.strip():
            by_digest.setdefault(text_digest(text), item_id)
    problems: list[Problem] = []
    for line, ex in examples:
        hit: str | None = None
        field = ""
        if ex.item_id is not None and ex.item_id in item_ids:
            hit, field = f"labelled item {ex.item_id!r}", "item_id"
        elif ex.case_id is not None and ex.case_id in cases:
            hit, field = f"a labelled item of case {ex.case_id!r}", "case_id"
        elif ex.text and text_digest(ex.text) in by_digest:
            hit, field = f"the text of labelled item {by_digest[text_digest(ex.text)]!r}", "text"
        if hit is not None:
            problems.append(
                Problem(
                    source,
                    line,
                    field,
                    f"this few-shot example is {hit}: the judge is shown the answer to a test item. Remove "
                    "the example from the prompt (a new fingerprint) or remove the item from the labels "
                    "and label a fresh random item in its place",
                )
            )
    if problems:
        raise ProblemsError(problems, exit_code=1)  # the leakage guard refused the labels


PROMPT_MIN_WORDS = 8
"""Messages shorter than this many words are not looked for in a prompt (too common to identify an item)."""


def _words(text: str) -> list[str]:
    """The words of text after NFKC normalisation and case folding; punctuation and white space split.

    The profile :data:`judgekit.textnorm.WORDS`, split at its spaces.
    """
    return WORDS.apply(text).split()


class PromptOverlap(FrozenModel):
    """A labelled item whose text appears in the judge's prompt.

    Attributes:
        item_id: The labelled item.
        line: The prompt line (1-based) where its first matching message starts.
        messages: How many of the item's messages (of at least :data:`PROMPT_MIN_WORDS` words) appear.
        compared: How many of its messages were long enough to look for.
        excerpt: The first words of the first matching message, as normalised.
    """

    item_id: str
    line: int
    messages: int
    compared: int
    excerpt: str


def find_prompt_overlap(
    prompt: str, item_messages: Mapping[str, Sequence[str]], *, min_words: int = PROMPT_MIN_WORDS
) -> list[PromptOverlap]:
    """Find the labelled items whose message texts are pasted into a prompt, in any format.

    The prompt (raw text: a template, a system prompt, few-shot examples in prose, JSON or markdown) and
    each message are reduced to their words (NFKC, case folded; punctuation, quotes, markup and white
    space only separate words), so a message found inside the prompt's words is a match whatever the
    prompt's layout, role labels or quoting. Messages of fewer than ``min_words`` words are not looked for.

    Args:
        prompt: The prompt's raw text.
        item_messages: Per labelled item id, the texts of its transcript's messages.
        min_words: The shortest message (in words) that is looked for.

    Returns:
        One overlap per item with at least one message in the prompt, in item order.
    """
    words: list[str] = []
    word_line: list[int] = []
    for number, line in enumerate(prompt.splitlines(), start=1):
        found = _words(line)
        words.extend(found)
        word_line.extend([number] * len(found))
    starts: list[int] = []
    offset = 1
    for w in words:
        starts.append(offset)
        offset += len(w) + 1
    haystack = " " + " ".join(words) + " "
    out: list[PromptOverlap] = []
    for item_id, messages in item_messages.items():
        compared = 0
        first: tuple[int, str] | None = None
        hits = 0
        for message in messages:
            needle_words = _words(message)
            if len(needle_words) < min_words:
                continue
            compared += 1
            at = haystack.find(" " + " ".join(needle_words) + " ")
            if at < 0:
                continue
            hits += 1
            if first is None:
                first = (word_line[bisect.bisect_left(starts, at + 1)], " ".join(needle_words[:12]))
        if first is not None:
            out.append(
                PromptOverlap(
                    item_id=item_id, line=first[0], messages=hits, compared=compared, excerpt=first[1]
                )
            )
    return out


def check_prompt_overlap(
    prompt: str,
    table: LabelTable,
    item_messages: Mapping[str, Sequence[str]],
    *,
    source: str | os.PathLike[str] | None = None,
) -> None:
    """Refuse when the judge's prompt contains a labelled test item's text (see :func:`find_prompt_overlap`).

    Args:
        prompt: The prompt's raw text (any format).
        table: The labelled test items; only their ``item_id`` values are looked for.
        item_messages: Per item id, the texts of its transcript's messages (ids not in the table are
            ignored).
        source: The prompt file, for messages, as text or a path object.

    Raises:
        ProblemsError: One problem per leaked item, at the prompt line where its text starts, naming the
            item, how many of its messages appear and their first words (the guard's refusal, exit
            code 1).
    """
    source = Path(source) if source is not None else None
    labelled = {k.item_id for k in table.items}
    wanted = {i: m for i, m in item_messages.items() if i in labelled}
    problems = [
        Problem(
            source,
            o.line,
            "",
            f"the prompt contains the text of labelled item {o.item_id!r} ({o.messages} of its {o.compared} "
            f"messages, starting {o.excerpt!r}): the judge is shown the answer to a test item. Remove the "
            "example from the prompt (a new fingerprint) or remove the item from the labels and label a "
            "fresh random item in its place",
        )
        for o in find_prompt_overlap(prompt, wanted)
    ]
    if problems:
        raise ProblemsError(problems, exit_code=1)  # the leakage guard refused the labels


# --------------------------------------------------------------------------------------------- usage ledger


class LabelSplit(FrozenModel):
    """How a label table was split by case into a development part and a test part.

    Attributes:
        seed: The seed of the split (the same seed, share and table give the same split).
        dev_share: The share of cases put in the development part, in (0, 1).
        content_sha256: The whole table's order-free fingerprint (:func:`label_content_sha256`).
        dev_cases: The development part's cases, sorted.
        test_cases: The test part's cases, sorted; no case is in both.
    """

    seed: int
    dev_share: float = Field(gt=0.0, lt=1.0)
    content_sha256: str
    dev_cases: tuple[str, ...]
    test_cases: tuple[str, ...]


class LabelUsage(FrozenModel):
    """One recorded use of a label table.

    Attributes:
        label_sha256: The table file's SHA-256 (its bytes as read; kept for ledgers written before
            ``content_sha256`` existed).
        label_name: The table's file name.
        purpose: ``selection``: the labels were used to choose between judges (they are a development set).
        candidates: The fingerprints (or names) compared.
        chosen: The candidate chosen, if any.
        recorded_at: When (UTC).
        content_sha256: The order-free fingerprint of the labels (:func:`label_content_sha256`): the same
            ratings in any row order, with any column order or file format, give the same value.
            ``None`` on a line written before it was recorded (such a line is matched by
            ``label_sha256`` only).
        items: The labelled items (``item_id``, or ``item_id/criterion`` when the table has criteria),
            sorted; a table sharing any of them is refused. Empty on a line written before it was
            recorded.
        lineage: For a refinement (``judgekit judge refine``): the rubric lineage, the rubric id across
            its versions; ``None`` otherwise.
        split: For a refinement: how the label table was split by case into the development part (the
            ``selection`` line) and the test part (the ``test`` line); ``None`` otherwise.

    ``purpose`` is ``selection`` (the labels chose between judges or rubric versions: a development set,
    refused by :func:`check_not_selection_set`) or ``test`` (a refinement measured its chosen rubric once
    on these labels: a second look for the same lineage is refused by :func:`check_test_unseen`).
    """

    label_sha256: str = Field(min_length=1)
    label_name: str
    purpose: Literal["selection", "test"] = "selection"
    candidates: tuple[str, ...]
    chosen: str | None = None
    recorded_at: datetime
    content_sha256: str | None = None
    items: tuple[str, ...] = ()
    lineage: str | None = None
    split: LabelSplit | None = None

    def line(self) -> str:
        """The entry as one ledger line (JSON; the refinement fields only when set)."""
        return self.model_dump_json(exclude={n for n in ("lineage", "split") if getattr(self, n) is None})


def label_content_sha256(table: LabelTable) -> str:
    """Fingerprint the labels themselves, independent of row order, column order and file format.

    The fingerprint is the SHA-256 of the sorted, distinct ``(item_id, criterion, rater, label)`` ratings
    (one JSON array per line), so a shuffled copy of a table, or the same labels saved as JSON Lines
    instead of CSV, has the same fingerprint as the original; any added, removed or changed rating
    changes it.

    Args:
        table: The labels.

    Returns:
        64 lowercase hex digits.
    """
    ratings = sorted({(r.item.item_id, r.item.criterion, r.rater, r.label) for r in table.rows})
    body = "\n".join(json.dumps(list(r), ensure_ascii=False) for r in ratings)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _item_names(table: LabelTable) -> tuple[str, ...]:
    """The table's labelled items as ledger text (``item_id`` or ``item_id/criterion``), sorted."""
    return tuple(sorted({str(k) for k in table.items}))


def load_usage(records_dir: str | os.PathLike[str]) -> list[LabelUsage]:
    """Read the usage ledger (empty when the folder or the ledger does not exist).

    Args:
        records_dir: The calibration records folder, as text or a path object.

    Raises:
        ProblemsError: When a ledger line is broken (a broken ledger is never skipped silently).
    """
    records_dir = Path(records_dir)
    path = records_dir / USAGE_FILE
    if not path.is_file():
        return []
    out: list[LabelUsage] = []
    problems: list[Problem] = []
    from judgekit.io.documents import read_regular_text

    for number, raw in enumerate(
        jsonl_lines(read_regular_text(path, "label usage log", encoding="utf-8")), start=1
    ):
        if not raw.strip():
            continue
        try:
            check_json_bounds(raw, source=path, line=number)
            usage = LabelUsage.model_validate_json(raw)
            check_duplicate_keys(raw, source=path, line=number)
            out.append(usage)
        except LocatedError as exc:
            problems.append(exc.problem)
        except ValidationError as exc:
            err = exc.errors()[0]
            problems.append(Problem(path, number, ".".join(str(p) for p in err["loc"]), err["msg"]))
    if problems:
        raise ProblemsError(problems)
    return out


def record_selection(
    records_dir: str | os.PathLike[str],
    *,
    label_sha256: str,
    label_name: str,
    candidates: Sequence[str],
    chosen: str | None = None,
    now: datetime | None = None,
    table: LabelTable | None = None,
) -> LabelUsage:
    """Record that a label table was used to choose between judges; it is a development set from now on.

    ``records_dir`` may be given as text or a path object.

    Args:
        records_dir: The calibration records folder holding the ledger.
        label_sha256: The table file's SHA-256.
        label_name: The table's file name (for messages).
        candidates: The judges (fingerprints or names) compared; at least two.
        chosen: The judge chosen, if any.
        now: The time to record (default: now, UTC).
        table: The labels themselves. When given, their order-free fingerprint and their items are
            recorded, so a shuffled copy, a subset or any table sharing an item is refused later; without
            it only ``label_sha256`` is recorded and only a byte-identical file is recognised.

    Raises:
        JudgekitError: When fewer than two candidates are named, or the chosen one is not a candidate.
    """
    records_dir = Path(records_dir)
    if len(set(candidates)) < 2:
        raise JudgekitError("a selection compares at least two judges; name every candidate")
    if chosen is not None and chosen not in candidates:
        raise JudgekitError(f"the chosen judge {chosen!r} is not among the candidates {list(candidates)}")
    entry = LabelUsage(
        label_sha256=label_sha256,
        label_name=label_name,
        candidates=tuple(candidates),
        chosen=chosen,
        recorded_at=(now or datetime.now(UTC)).replace(microsecond=0),
        content_sha256=label_content_sha256(table) if table is not None else None,
        items=_item_names(table) if table is not None else (),
    )
    _append_usage(records_dir, entry)
    return entry


def _append_usage(records_dir: Path, *entries: LabelUsage) -> None:
    """Add entries to the ledger (read and rewritten whole, atomically; the folder is created)."""
    from judgekit.io.atomic import write_atomic

    existing = load_usage(records_dir)
    records_dir.mkdir(parents=True, exist_ok=True)
    lines = [u.line() for u in (*existing, *entries)]
    write_atomic(records_dir / USAGE_FILE, "\n".join(lines) + "\n")


def record_refinement(
    records_dir: str | os.PathLike[str],
    *,
    dev: LabelTable,
    test: LabelTable,
    split: LabelSplit,
    lineage: str,
    label_name: str,
    candidates: Sequence[str],
    chosen: str,
    now: datetime | None = None,
) -> tuple[LabelUsage, LabelUsage]:
    """Record a refinement: its development part chose a rubric version, its test part is looked at once.

    Two lines are added at once: a ``selection`` line for the development part (from now on it cannot
    certify a judge: :func:`check_not_selection_set`) and a ``test`` line for the test part (from now on
    no rubric of the same lineage may be measured on any of its items again: :func:`check_test_unseen`).
    Both carry the split and the lineage.

    Args:
        records_dir: The calibration records folder holding the ledger, as text or a path object.
        dev: The development part.
        test: The test part.
        split: How the table was split.
        lineage: The rubric id (the lineage across versions).
        label_name: The label table's file name.
        candidates: The candidates compared on the development part (names or fingerprints).
        chosen: The candidate chosen (measured on the test part).
        now: The time to record (default: now, UTC).

    Returns:
        The ``selection`` line and the ``test`` line written.
    """
    when = (now or datetime.now(UTC)).replace(microsecond=0)
    lines = tuple(
        LabelUsage(
            label_sha256=part.sha256 or label_content_sha256(part),
            label_name=label_name,
            purpose=purpose,
            candidates=tuple(candidates),
            chosen=chosen,
            recorded_at=when,
            content_sha256=label_content_sha256(part),
            items=_item_names(part),
            lineage=lineage,
            split=split,
        )
        for purpose, part in (("selection", dev), ("test", test))
    )
    _append_usage(Path(records_dir), *lines)
    return lines[0], lines[1]


def check_test_unseen(table: LabelTable, lineage: str, usage: Iterable[LabelUsage]) -> None:
    """Refuse a second look at test labels for the same rubric lineage.

    A refinement measures its chosen rubric version once on its test part. Measuring another version of
    the same rubric (the same id) on any of those items again would let the test part choose between
    versions, which makes it a development set whose figure is optimistic. Another rubric (another id)
    may still be measured on them.

    Args:
        table: The test part offered now.
        lineage: The rubric id being refined.
        usage: The ledger (:func:`load_usage`).

    Raises:
        JudgekitError: Naming when, which version was measured, how many items are shared and what to do:
            label fresh test cases (the guard's refusal, exit code 1).
    """
    mine = _item_names(table)
    for u in usage:
        if u.purpose != "test" or u.lineage != lineage:
            continue
        used = set(u.items)
        shared = [i for i in mine if i in used]
        if not shared:
            continue
        shown = ", ".join(shared[:5]) + (" ..." if len(shared) > 5 else "")
        raise JudgekitError(
            f"{u.label_name}: {len(shared)} of the {len(mine)} test items ({shown}) were already the test "
            f"part of a refinement of rubric {lineage!r} on {u.recorded_at:%Y-%m-%d} "
            f"(measuring {u.chosen!r}). "
            "A second look at the test part lets it choose between versions, and its figure is then "
            "optimistic: label fresh test cases (cases no refinement of this rubric has used) and refine "
            "on a table that holds them",
            exit_code=1,  # the test-part guard refused the labels
        )


def check_not_selection_set(table: LabelTable, usage: Iterable[LabelUsage]) -> None:
    """Refuse to certify a judge on labels that were already used to choose between judges.

    The rule: a table is refused when it *is* a recorded selection set (the same file bytes, or the same
    ratings in any order, column order or format) or when *any* of its labelled items was in one (a
    subset, a superset, a relabelled copy or a partial overlap). Agreement on an item the judge (or its
    prompt) was chosen on is optimistic however few such items there are, so there is no tolerated share:
    drop the shared items and label fresh ones. Ledger lines written before items were recorded are
    matched by file hash only.

    Args:
        table: The labels offered for calibration.
        usage: The ledger (:func:`load_usage`).

    Raises:
        JudgekitError: Naming when, between which candidates, and what to collect instead; for an
            overlap, how many items are shared and the first few of them (the guard's refusal, exit
            code 1).
    """
    entries = [u for u in usage if u.purpose == "selection"]  # a test line is checked by check_test_unseen
    name = table.source.name if table.source is not None else None
    content = label_content_sha256(table)
    for u in entries:
        if u.label_sha256 == table.sha256 or u.content_sha256 == content:
            chosen = f", choosing {u.chosen!r}" if u.chosen else ""
            raise JudgekitError(
                f"{name or u.label_name}: these labels were used on {u.recorded_at:%Y-%m-%d} to choose "
                f"between {len(u.candidates)} judges ({', '.join(u.candidates)}){chosen}. They are now a "
                "development set: agreement on them overstates the chosen judge. Certify it on a fresh "
                "test set of randomly sampled items it was never chosen on (judgekit labels plan says "
                "how many)",
                exit_code=1,  # the development-set guard refused the labels
            )
    mine = _item_names(table)
    for u in entries:
        used = set(u.items)
        shared = [i for i in mine if i in used]
        if not shared:
            continue
        chosen = f", choosing {u.chosen!r}" if u.chosen else ""
        shown = ", ".join(shared[:5]) + (" ..." if len(shared) > 5 else "")
        raise JudgekitError(
            f"{name or 'the labels'}: {len(shared)} of its {len(mine)} labelled items ({shown}) were in "
            f"{u.label_name}, used on {u.recorded_at:%Y-%m-%d} to choose between {len(u.candidates)} "
            f"judges ({', '.join(u.candidates)}){chosen}. Agreement on items a judge was chosen on "
            "overstates it: remove those items and label fresh randomly sampled ones in their place "
            "(judgekit labels plan says how many)",
            exit_code=1,  # the development-set guard refused the labels
        )


# ------------------------------------------------------------------------------------- rate population


def check_rate_population(
    population_items: Iterable[str],
    calibration_items: Iterable[str],
    *,
    what: str = "failure rate",
) -> None:
    """Refuse a rate estimated on items that were used to calibrate the judge.

    Args:
        population_items: The item ids (case and trial) the rate would be computed on.
        calibration_items: The item ids of the calibration labels (a record's ``metrics.items``).
        what: The estimate, for the message.

    Raises:
        JudgekitError: When there is no item (exit code 2), or when any item is in both, with the count
            and what to do (the guard's refusal, exit code 1).
    """
    population = list(dict.fromkeys(population_items))
    calibrated = set(calibration_items)
    if not population:
        raise JudgekitError(f"the {what} needs at least one item")
    shared = [i for i in population if i in calibrated]
    if shared:
        shown = ", ".join(shared[:5]) + (" ..." if len(shared) > 5 else "")
        raise JudgekitError(
            f"{len(shared)} of the {len(population)} items for the {what} were used to calibrate the judge "
            f"({shown}). A {what} on the calibration set describes the labelled sample, not production: "
            "estimate it on a fresh random production sample that no calibration used",
            exit_code=1,  # the rate-population guard refused the items
        )


class SelectionDocument(FrozenModel):
    """Labels recorded as used to choose between judges (the ``calibration_selection`` document).

    Attributes:
        labels: The label table.
        bytes: Its size in bytes.
        usage: The ledger entry written (:func:`record_selection`).
        ledger: The label-usage ledger (:data:`USAGE_FILE` in the records folder).
        written: The files written (the ledger).
        next: What to do next: certify the chosen judge on fresh labels.
    """

    labels: str
    bytes: int
    usage: LabelUsage
    ledger: str
    written: list[WrittenFile]
    next: str = "certify the chosen judge on fresh labels"

"""Indexing a golden set (or a file of case texts) for the contamination scanner, as one call.

:func:`index_cases` is ``judgekit contamination index``: it checks the inputs, reads the key, collects
every text the cases carry (their fields and, optionally, the user and assistant messages of their
reference transcripts), reads the boilerplate, builds the keyed index
(:func:`judgekit.contamination.index.build_index`) and writes it. It returns an :class:`IndexDocument`,
or an :class:`IndexRefusal` when the case set has problems (nothing is written).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from judgekit.caseset import CaseSet, LocatedProblem, load_case_set
from judgekit.contamination.index import IndexOptions, build_index, canary_for, load_key, write_index
from judgekit.errors import JudgekitError, LocatedError
from judgekit.io.atomic import WriteFailed
from judgekit.io.documents import load_json_bounded, read_regular, read_regular_text
from judgekit.io.filekind import check_input_file
from judgekit.transcript import read_reference
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = [
    "IndexDocument",
    "IndexRefusal",
    "case_set_texts",
    "index_cases",
    "read_texts_file",
]

#: A case's texts: its id and its ``(field path, text)`` pairs.
CaseTexts = tuple[str, list[tuple[str, str]]]


class IndexDocument(FrozenModel):
    """An index written (the ``contamination_index`` document).

    Attributes:
        index: The index file.
        set_name: The set's name, which its canary is made from.
        canary: The set's own canary.
        canaries: Every canary the index reports (the set's first, then the extra ones).
        key_fingerprint: The key's fingerprint (the index stores no key).
        shingle_size: Tokens per shingle.
        min_text_tokens: Fewest tokens for a whole-text entry.
        max_cases: The shared-shingle cut-off used (resolved from the default when not given).
        stats: Counts: ``cases``, ``texts``, ``shingle_entries``, ``shingle_entries_dropped_shared``,
            ``shingle_entries_dropped_boilerplate``, ``text_entries``...
        problems: Always empty (an index is written only for a valid set).
        written: The index file written.
    """

    index: str
    set_name: str
    canary: str
    canaries: list[str]
    key_fingerprint: str
    shingle_size: int
    min_text_tokens: int
    max_cases: int
    stats: dict[str, Any]
    problems: list[LocatedProblem] = Field(default_factory=list)
    written: list[WrittenFile]


class IndexRefusal(FrozenModel):
    """An index refused because the case set has problems; nothing was written.

    Attributes:
        index: The index file that was not written.
        error: Why (the number of problems, and what to do).
        problems: The set's problems.
        written: Always empty.
    """

    index: str
    error: str
    problems: list[LocatedProblem]
    written: list[WrittenFile] = Field(default_factory=list)


def _check_inputs(cases: Sequence[Path], boilerplate: Sequence[Path]) -> None:
    """Refuse at once a case path or boilerplate file that is a FIFO, socket or device (exit 2)."""
    for c in cases:  # a golden-set folder is fine; a pipe or device is not
        check_input_file(c, what="case file", option="", refuse_folders=False)
    for b in boilerplate:
        check_input_file(b, what="boilerplate file", option="--boilerplate", refuse_folders=True)


def _text_pairs(path: Path, n: int, texts: list[Any]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for i, t in enumerate(texts):
        if isinstance(t, str):
            pairs.append((f"texts.{i}", t))
        elif isinstance(t, dict) and isinstance(t.get("text"), str):
            pairs.append((str(t.get("field", f"texts.{i}")), t["text"]))
        else:
            raise JudgekitError(f'{path}:{n}: texts.{i} must be a string or {{"field", "text"}}')
    return pairs


def read_texts_file(path: str | os.PathLike[str]) -> list[CaseTexts]:
    """Read a JSONL of ``{"id": ..., "texts": [text or {"field", "text"}, ...]}`` lines, one case a line.

    Args:
        path: The file (a regular file; a pipe or device is refused at once).

    Returns:
        Each case's id and ``(field, text)`` pairs, in file order (a bare text's field is ``texts.N``).

    Raises:
        JudgekitError: (exit 2) An unreadable file, a line that is not JSON, or a line of the wrong shape.
    """
    path = Path(path)
    out: list[CaseTexts] = []
    check_input_file(path, what="case texts file", option="--texts", refuse_folders=True)
    try:
        # Bytes split at newlines only: the bounded reader decodes (and checks) each line as UTF-8.
        lines = read_regular(path, "case texts file").split(b"\n")
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read ({exc.strerror})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = load_json_bounded(line, source=path, line=n)
        except LocatedError as exc:
            raise JudgekitError(f"{exc.problem}; each line is one case") from None
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("id"), str)
            or not isinstance(obj.get("texts"), list)
        ):
            raise JudgekitError(
                f'{path}:{n}: expected {{"id": "...", "texts": [...]}} with a string id and a list'
            )
        out.append((obj["id"], _text_pairs(path, n, obj["texts"])))
    return out


def _reference_texts(path: Path) -> list[tuple[str, str]]:
    """User and assistant message texts of a reference transcript file, with their field paths."""
    reference = read_reference(path)
    out: list[tuple[str, str]] = []
    for i, m in enumerate(reference.messages if reference is not None else ()):
        if m.role in ("user", "assistant") and m.content and m.content.strip():
            out.append((f"reference_solution.messages.{i}.content", m.content))
    return out


def case_set_texts(case_set: CaseSet, *, reference_transcripts: bool = True) -> list[CaseTexts]:
    """Every text each case of a loaded set carries, with its field path.

    Args:
        case_set: The set (reviewed cases and candidates).
        reference_transcripts: Also take the user and assistant messages of each case's
            ``reference_solution`` transcript.

    Returns:
        Each case's id and ``(field, text)`` pairs, in file order.
    """
    items: list[CaseTexts] = []
    for lc in case_set.cases:
        pairs = lc.case.texts()
        if reference_transcripts and lc.case.reference_solution:
            pairs += _reference_texts(case_set.resolve(lc.case.reference_solution))
        items.append((lc.case.id, pairs))
    return items


def _boilerplate_lines(boilerplate: Sequence[Path]) -> tuple[str, ...]:
    lines: list[str] = []
    for b in boilerplate:
        try:
            lines.extend(x for x in read_regular_text(b, "boilerplate file").splitlines() if x.strip())
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgekitError(f"{b}: cannot read the boilerplate file ({exc})") from None
    return tuple(lines)


def index_cases(
    cases: Sequence[str | os.PathLike[str]],
    *,
    key_file: str | os.PathLike[str],
    out: str | os.PathLike[str],
    texts: str | os.PathLike[str] | None = None,
    shingle_size: int = 7,
    min_text_tokens: int = 4,
    max_cases: int | None = None,
    boilerplate: Sequence[str | os.PathLike[str]] = (),
    set_name: str | None = None,
    canaries: Sequence[str] = (),
    reference_transcripts: bool = True,
) -> IndexDocument | IndexRefusal:
    """Build and write a keyed hash index of every text the golden cases carry (no text is stored).

    Args:
        cases: Golden-set folders or case files (empty with ``texts``).
        key_file: The secret key file.
        out: The index file to write.
        texts: A JSONL of ``{"id", "texts": [...]}`` to index instead of case files (``None``: the cases).
        shingle_size: Tokens per shingle, 4 to 64.
        min_text_tokens: Shorter texts get no whole-text entry (>= 1).
        max_cases: Drop shingles found in more than this many cases (``None``: max(2, 2% of the cases)).
        boilerplate: Text files whose non-blank lines are never flagged.
        set_name: Name for the set's canary (``None``: the manifest's name, else the folder's; with
            ``texts``, the file's stem).
        canaries: Extra canary strings to report verbatim.
        reference_transcripts: Also index the user and assistant messages of each case's reference
            transcript.

    Returns:
        The index written, or the refusal when the case set has problems (nothing is written).

    Raises:
        JudgekitError: (exit 2) A pipe or device as input, a bad key, both or neither of ``cases`` and
            ``texts``, an unreadable input, or an index that cannot be written.
    """
    case_paths = [Path(c) for c in cases]
    boilerplate_paths = [Path(b) for b in boilerplate]
    _check_inputs(case_paths, boilerplate_paths)
    key = load_key(key_file)
    if texts is not None:
        if case_paths:
            raise JudgekitError("give case paths or --texts, not both")
        items = read_texts_file(texts)
        name = set_name or Path(texts).stem
    else:
        if not case_paths:
            raise JudgekitError(
                "name the golden-set folders or case files to index (or use --texts FILE.jsonl)"
            )
        case_set = load_case_set(case_paths)
        if case_set.problems:
            refusal = (
                f"the case set has {len(case_set.problems)} problem(s); fix them first (judgekit cases "
                "check), so that no case is left out of the index"
            )
            problems = [LocatedProblem.of(p) for p in case_set.problems]
            return IndexRefusal(index=str(out), error=refusal, problems=problems)
        items = case_set_texts(case_set, reference_transcripts=reference_transcripts)
        manifest_name = case_set.manifest.name if case_set.manifest else None
        name = set_name or manifest_name or case_set.root.resolve().name
    opts = IndexOptions(
        shingle_size=shingle_size,
        min_text_tokens=min_text_tokens,
        max_cases=max_cases,
        boilerplate=_boilerplate_lines(boilerplate_paths),
        canaries=(canary_for(key, name), *canaries),
    )
    built = build_index(items, key, opts)
    try:
        write_index(built, out, key)
    except WriteFailed as exc:
        raise JudgekitError(f"{out}: cannot write the index ({exc.reason}); check --out") from None
    return IndexDocument(
        index=str(out),
        set_name=name,
        canary=opts.canaries[0],
        canaries=list(built.canaries),
        key_fingerprint=built.key_fingerprint,
        shingle_size=built.shingle_size,
        min_text_tokens=built.min_text_tokens,
        max_cases=built.max_cases,
        stats=dict(built.stats),
        written=[WrittenFile(path=str(out), what="contamination_index")],
    )

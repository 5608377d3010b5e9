"""Moving saturated capability cases to the regression split, as a reviewable edit of their files.

:func:`retire_cases` writes ``split: regression`` and a ``retired:`` record (where from, why, on which
releases, the day) into each case's own file, and nothing else: a YAML file keeps its comments, key order
and layout (the edit is made at the positions the YAML parser reports), a JSON file is rewritten with
the same key order and the new keys after ``version`` (JSON has no comments to keep), a JSONL file has
only the case's line rewritten. Before anything is written, every edited file is parsed again and each of
its cases must be what it was except for the two fields; otherwise nothing is written and the error says
which file could not be edited safely.

The writes are all or nothing across files, also under ``kill -9``: every edited file is first written in
full to the set's staging folder, then a journal (:mod:`judgekit.golden.journal`) records the planned
renames, then each copy is renamed over its case file and the journal is deleted. A failure the command
sees (a full disk) restores the files already replaced; a kill is finished by the next ``judgekit cases
retire`` (:func:`finish_interrupted_retirement`), and ``judgekit cases check`` reports the set as half done
until then.

A retirement is not a contract change (the case's expectation is the same), so the version stays; ``judgekit
golden diff`` lists it as a move with its reason, for review.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from judgekit.cases import Case
from judgekit.caseset import CaseSet, LoadedCase, document_cases
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.golden.journal import (
    Journal,
    JournalCase,
    JournalMove,
    begin,
    clear_staging,
    digest,
    end,
    finish_pending,
    journal_path,
    refuse_if_pending,
    relative,
)
from judgekit.io.atomic import move_file, write_atomic
from judgekit.io.documents import Document, jsonl_lines, parse_text

__all__ = ["Retire", "RetiredCase", "finish_interrupted_retirement", "retire_cases"]


@dataclass(frozen=True)
class Retire:
    """A case to retire, and the evidence.

    Attributes:
        case_id: The case.
        reason: Why (written into the file as ``retired.reason``).
        releases: The releases the evidence comes from, oldest first.
    """

    case_id: str
    reason: str
    releases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetiredCase:
    """A case moved to the regression split.

    Attributes:
        case_id: The case.
        path: Its file (edited in place).
        line: 1-based line of the case in its file.
        moved_from: Its split before (``capability``), ``None`` when it had none.
        reason: The reason written.
        resumed: True when this run finished a retirement a killed run had started.
    """

    case_id: str
    path: Path
    line: int
    moved_from: str | None
    reason: str
    resumed: bool = False


def _record(loaded: LoadedCase, item: Retire, on: date) -> dict[str, Any]:
    """The ``retired:`` mapping written for a case."""
    record: dict[str, Any] = {}
    if loaded.case.split == "capability":
        record["moved_from"] = "capability"
    record["reason"] = item.reason
    if item.releases:
        record["releases"] = list(item.releases)
    record["retired_on"] = on.isoformat()
    return record


def _refuse(loaded: LoadedCase, why: str) -> Problem:
    return Problem(
        loaded.path,
        loaded.line,
        "split",
        f"{why}; set split: regression and add a retired: record (reason, releases, retired_on) by hand",
    )


def _yaml_edit(text: str, loaded: LoadedCase, record: dict[str, Any]) -> str:
    """``text`` with the case's split set to regression and its retired record added, layout kept.

    Raises:
        ValueError: When the case's mapping cannot be located or is written in flow style.
    """
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    node = root
    for step in loaded.prefix:
        if isinstance(step, int) and isinstance(node, yaml.SequenceNode) and step < len(node.value):
            node = node.value[step]
        else:
            raise ValueError("the case's place in the file could not be found")
    if not isinstance(node, yaml.MappingNode) or node.flow_style or not node.value:
        raise ValueError("the case is not a block mapping (it is written in flow style)")
    keys = {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    column = node.value[0][0].start_mark.column
    pad = " " * column
    block = yaml.safe_dump({"retired": record}, sort_keys=False, allow_unicode=True, width=100)
    retired_lines = "".join(pad + line + "\n" for line in block.splitlines())
    if "split" in keys:
        value = keys["split"][1]
        start, end = value.start_mark.index, value.end_mark.index
        text = text[:start] + "regression" + text[end:]
        # the record goes on the line after the split entry
        after = text.find("\n", start)
        insert_at = len(text) if after < 0 else after + 1
        if after < 0:
            text += "\n"
            insert_at = len(text)
        return text[:insert_at] + retired_lines + text[insert_at:]
    anchor = keys.get("version") or keys.get("id")
    if anchor is None:
        raise ValueError("the case has no id line to place the new fields after")
    end_line = anchor[1].end_mark.line  # 0-based line of the anchor's value end
    lines = text.splitlines(keepends=True)
    if end_line >= len(lines):
        lines.append("\n")
    if not lines[end_line].endswith("\n"):
        lines[end_line] += "\n"
    lines.insert(end_line + 1, pad + "split: regression\n" + retired_lines)
    return "".join(lines)


def _with_fields(data: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """A case mapping with ``split`` and ``retired`` set, placed after ``version`` (else ``id``)."""
    rest = {k: v for k, v in data.items() if k not in ("split", "retired")}
    anchor = "version" if "version" in rest else "id"
    out: dict[str, Any] = {}
    for key, value in rest.items():
        out[key] = value
        if key == anchor:
            out["split"] = "regression"
            out["retired"] = record
    if "split" not in out:
        out |= {"split": "regression", "retired": record}
    return out


def _json_edit(text: str, loaded: LoadedCase, record: dict[str, Any]) -> str:
    """The JSON file's text with the case edited (key order kept, two-space indent)."""
    data = json.loads(text)
    if loaded.prefix:
        (index,) = loaded.prefix
        if not isinstance(index, int) or not isinstance(data, list):
            raise ValueError("the case's place in the file could not be found")
        data[index] = _with_fields(data[index], record)
    else:
        data = _with_fields(data, record)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _jsonl_edit(text: str, loaded: LoadedCase, record: dict[str, Any]) -> str:
    """The JSONL file's text with only the case's line rewritten."""
    lines = jsonl_lines(text)
    number = loaded.line - 1
    if not 0 <= number < len(lines):
        raise ValueError("the case's line could not be found")
    data = json.loads(lines[number])
    lines[number] = json.dumps(_with_fields(data, record), ensure_ascii=False, separators=(",", ":"))
    return "\n".join(lines)


def _cases_in(text: str, path: Path) -> list[Case | None]:
    """Every case of a file's text, in order (``None`` for an item that does not validate)."""
    out: list[Case | None] = []
    for doc in parse_text(text, path):
        if not isinstance(doc, Document):
            out.append(None)
            continue
        out.extend(case if isinstance(case, Case) else None for _, case in document_cases(doc))
    return out


def _unchanged_but_retired(
    before: list[Case | None], after: list[Case | None], retired: set[str]
) -> str | None:
    """Why the edited file is not the old one plus the retirements; ``None`` when it is."""
    if len(before) != len(after):
        return f"it holds {len(after)} case(s) after the edit, {len(before)} before"
    for old, new in zip(before, after, strict=True):
        if new is None:
            return "a case no longer validates after the edit"
        if old is None:
            continue
        if old.id in retired:
            if new.split != "regression" or new.retired is None:
                return f"case '{old.id}' did not receive the new fields"
            new = new.model_copy(update={"split": old.split, "retired": old.retired})
        if new != old:
            return f"case '{old.id}' would change in other fields"
    return None


def retire_cases(
    case_set: CaseSet, items: Sequence[Retire], *, on: date, write: bool = True
) -> list[RetiredCase]:
    """Move cases to the regression split by editing their files.

    Args:
        case_set: The loaded, valid golden set.
        items: The cases to retire, with their reasons (an id named twice is retired once).
        on: The day written into each record.
        write: False to check and plan without writing (``--dry-run``).

    Returns:
        One entry per case retired, in the order named.

    Raises:
        ProblemsError: Every reason a named case cannot be retired (not in the set, a candidate, a holdout,
            already in the regression split, a file that cannot be edited safely); nothing is written.
        JudgekitError: When writing a file fails (the files already written are restored), or, with
            ``write``, while an interrupted promote or retire is pending at the set's root (finish it
            first: :func:`finish_interrupted_retirement`, or ``judgekit candidates promote``).
    """
    if write:
        refuse_if_pending(case_set.root, "retire cases")
    by_id = {loaded.case.id: loaded for loaded in case_set.cases}
    problems: list[Problem] = []
    plan: list[tuple[LoadedCase, Retire]] = []
    for item in {i.case_id: i for i in items}.values():
        loaded = by_id.get(item.case_id)
        if loaded is None:
            problems.append(Problem(None, None, item.case_id, "no case in the set has this id"))
        elif loaded.candidate:
            problems.append(
                Problem(loaded.path, loaded.line, "id", "a candidate cannot be retired; promote it first")
            )
        elif loaded.case.split in ("regression", "holdout"):
            problems.append(
                Problem(
                    loaded.path, loaded.line_of("split"), "split", f"already in the {loaded.case.split} split"
                )
            )
        elif loaded.case.category == "regression":
            problems.append(
                Problem(
                    loaded.path,
                    loaded.line_of("category"),
                    "category",
                    "a regression case is already in the regression suite",
                )
            )
        else:
            plan.append((loaded, item))
    if problems:
        raise ProblemsError(problems)
    per_file: dict[Path, list[tuple[LoadedCase, Retire]]] = {}
    for loaded, item in plan:
        per_file.setdefault(loaded.path, []).append((loaded, item))
    new_texts: dict[Path, tuple[str, str]] = {}
    for path, entries in per_file.items():
        from judgekit.io.documents import read_regular_text

        old_text = read_regular_text(path, "case file", encoding="utf-8")
        text = old_text
        suffix = path.suffix.lower()
        try:
            # later cases first, so that earlier positions stay valid in YAML and JSONL
            for loaded, item in sorted(entries, key=lambda e: e[0].line, reverse=True):
                record = _record(loaded, item, on)
                if suffix == ".json":
                    text = _json_edit(text, loaded, record)
                elif suffix == ".jsonl":
                    text = _jsonl_edit(text, loaded, record)
                else:
                    text = _yaml_edit(text, loaded, record)
        except (ValueError, yaml.YAMLError) as exc:
            problems.append(_refuse(entries[0][0], f"cannot edit this file safely ({exc})"))
            continue
        why = _unchanged_but_retired(
            _cases_in(old_text, path), _cases_in(text, path), {loaded.case.id for loaded, _ in entries}
        )
        if why is not None:
            problems.append(_refuse(entries[0][0], f"cannot edit this file safely ({why})"))
            continue
        new_texts[path] = (old_text, text)
    if problems:
        raise ProblemsError(problems)
    if write:
        records = {
            loaded.case.id: JournalCase(
                id=loaded.case.id, line=loaded.line, moved_from=loaded.case.split, reason=item.reason
            )
            for loaded, item in plan
        }
        cases = {path: tuple(records[e[0].case.id] for e in entries) for path, entries in per_file.items()}
        _write_all(case_set.root, new_texts, cases)
    return [
        RetiredCase(loaded.case.id, loaded.path, loaded.line, loaded.case.split, item.reason)
        for loaded, item in plan
    ]


def _stage(
    root: Path, texts: dict[Path, tuple[str, str]], cases: dict[Path, tuple[JournalCase, ...]]
) -> dict[Path, Path]:
    """Write every new text to the staging folder, then the journal; nothing in the set changes.

    Returns:
        Each case file's staged copy.

    Raises:
        JudgekitError: When a copy or the journal cannot be written (the copies are removed).
    """
    folder = clear_staging(root)
    staged: dict[Path, Path] = {}
    current = next(iter(texts))
    try:
        moves: list[JournalMove] = []
        for number, (path, (_, new)) in enumerate(texts.items(), start=1):
            current = path
            copy = folder / f"{number}-{path.name}.new"
            # a case file is the set's own text, not output: redacting it would change the case (a
            # case about leaked keys quotes one), and the check above proved only the two fields change
            write_atomic(copy, new, redact=False)
            staged[path] = copy
            os.chmod(copy, stat.S_IMODE(os.stat(path).st_mode))  # the case file keeps its mode
            moves.append(
                JournalMove(
                    source=relative(root, copy),
                    destination=relative(root, path),
                    sha256=digest(copy),
                    replaces=digest(path),
                    cases=cases[path],
                )
            )
        current = journal_path(root)
        begin(root, Journal(operation="retire", moves=tuple(moves)))
    except (OSError, JudgekitError) as exc:
        for copy in staged.values():
            with contextlib.suppress(OSError):
                copy.unlink()
        end(root)
        why = exc.message.removeprefix(f"{current}: ") if isinstance(exc, JudgekitError) else exc.strerror
        raise JudgekitError(f"{current}: cannot write it ({why or exc}); nothing was retired") from None
    return staged


def _write_all(
    root: Path, texts: dict[Path, tuple[str, str]], cases: dict[Path, tuple[JournalCase, ...]]
) -> None:
    """Replace every file with its new text, or none.

    On a failure the files already replaced get their old text back. A kill at any point leaves the set as
    it was, or a journal the next retirement finishes.
    """
    staged = _stage(root, texts, cases)
    done: list[Path] = []
    for path, copy in staged.items():
        try:
            move_file(copy, path, overwrite=True)
        except OSError as exc:
            stranded: list[str] = []
            for written in reversed(done):
                try:
                    write_atomic(written, texts[written][0], redact=False)  # the set's own text, as read
                except JudgekitError as back:
                    stranded.append(f"{written} could not be restored ({back.message}): git checkout it")
            for left in staged.values():
                with contextlib.suppress(OSError):
                    left.unlink()
            if stranded:
                outcome = "; ".join(stranded) + (
                    f"; then delete {journal_path(root)}, which records the retirement"
                )
            else:
                end(root)
                outcome = (
                    f"the {len(done)} file(s) already written were restored; nothing was retired"
                    if done
                    else "nothing was retired"
                )
            raise JudgekitError(f"{path}: cannot write it ({exc.strerror or exc}); {outcome}") from None
        done.append(path)
    end(root)


def finish_interrupted_retirement(root: str | os.PathLike[str]) -> list[RetiredCase]:
    """Finish a retirement a killed ``judgekit cases retire`` left half done at the set's ``root``.

    Returns:
        The cases that retirement retired, in its order, marked ``resumed`` (empty when none was pending).

    Raises:
        JudgekitError: When an interrupted promotion is pending instead (``judgekit candidates promote``
            finishes it), or the journal cannot be read or a rename fails.
        ProblemsError: One problem per file that changed since (nothing is changed).
    """
    root = Path(root)
    journal = finish_pending(root, "retire")
    if journal is None:
        return []
    return [
        RetiredCase(case.id, root / move.destination, case.line, case.moved_from, case.reason, resumed=True)
        for move in journal.moves
        for case in move.cases
    ]

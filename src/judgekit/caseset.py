"""Loading a golden set: walking its folders, reading case files, and the set-level rules.

A golden set is a folder of case files (``.yaml``/``.yml``/``.json``, one case or a list of cases, and
``.jsonl``, one case a line), with an optional manifest (:data:`MANIFEST_NAME`, read as
:class:`SetManifest`) at its root. :func:`load_case_set` finds the root and manifest, walks the case
folders (skipping :data:`NON_CASE_DIRS`), validates every case with :func:`judgekit.cases.parse_case` and
checks what only the whole set can tell: ids unique across the set, unreviewed acceptance only among
candidates, referenced fixture and transcript files inside the set (or an allowed root) and present, and
every forbidden rule compiling (:func:`judgekit.expressions.validate_case_rules`). It never raises for a
bad case: every problem is collected, located by file, line and field, in :attr:`CaseSet.problems`.

Every path a case or the manifest names (``initial_state``, ``reference_solution``,
``expected_state.snapshot``, ``cases_dir``, ``candidates_dir``) must resolve, after ``..`` and symbolic
links are followed, inside the set's root; case paths may also lead into a folder the manifest lists in
``allowed_roots``. A case file found by walking a folder that is a symbolic link to a file outside the set
is not read. Each escape is a located problem (:func:`judgekit.cases.confine_path`).

The Case model itself lives in :mod:`judgekit.cases`; this module is above it, and below every consumer
of a loaded set (graders, golden-set tooling, the runner, the commands).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from judgekit.cases import (
    QUESTION_CHAR_LIMIT,
    REVIEW_PREFIX,
    Case,
    CasePath,
    Flag,
    Integer,
    confine_path,
    parse_case,
    problems_from_validation,
)
from judgekit.errors import JudgekitError, LocatedError, Problem, did_you_mean, unknown_names
from judgekit.io.documents import Document, read_documents
from judgekit.verdict import FrozenModel

__all__ = [
    "CASE_FILE_SUFFIXES",
    "HOLDOUT_GRADING_KEY",
    "MANIFEST_NAME",
    "NON_CASE_DIRS",
    "CaseSelection",
    "CaseSet",
    "LoadedCase",
    "LocatedProblem",
    "PathArg",
    "SetManifest",
    "document_cases",
    "load_case_set",
    "select_cases",
]

CASE_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
"""File endings read as case files."""

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
        "intake",  # incident records awaiting intake (judgekit candidates intake)
        "resolutions",  # experts' double resolutions (judgekit cases reconcile)
        "reviews",  # review sheets of sampled transcripts (judgekit labels sheet)
    }
)
"""Folders under a set that hold data other than cases; never read as case files."""


class LocatedProblem(FrozenModel):
    """A located problem (or warning) as a field of a printed document.

    Attributes:
        file: The file as text, or ``None`` when the problem concerns no single file.
        line: The 1-based line, or ``None`` when it is not known.
        field: The dotted field concerned, ``""`` for the whole file.
        message: What is wrong and what to do.
    """

    file: str | None
    line: int | None
    field: str
    message: str

    @classmethod
    def of(cls, problem: Problem) -> LocatedProblem:
        """The document form of ``problem`` (its file written as text)."""
        file = str(problem.file) if problem.file is not None else None
        return cls(file=file, line=problem.line, field=problem.field, message=problem.message)

    def __str__(self) -> str:
        """The problem as :class:`~judgekit.errors.Problem` prints it: ``file:line: field: message``."""
        file = Path(self.file) if self.file is not None else None
        return str(Problem(file, self.line, self.field, self.message))


class SetManifest(FrozenModel):
    """The optional ``judgekit-set.yaml`` at a golden set's root.

    Attributes:
        name: The set's name.
        description: What the set is for.
        synthetic: True when every case, fixture and transcript is synthetic (no real customer data).
        cases_dir: Folder of reviewed cases, relative to the root (default: the root itself); it must
            resolve inside the root.
        candidates_dir: Folder of generated or unreviewed candidates, which no gate reads; it must resolve
            inside the root.
        allowed_roots: Folders outside the root that cases may name files in (shared fixtures), each
            absolute or relative to the root; every other path a case names must stay inside the root.
        tools: Every tool the agent has; coverage names the ones with too few cases.
        sources: Every knowledge source the agent uses.
        min_per_tool: Coverage floor: fewest cases per tool (>= 0).
        min_per_source: Coverage floor: fewest cases per source (>= 0).
        dimensions: Every quality dimension the set should test (``correct``, ``grounded``, ``useful``,
            ``action-accurate``, ``safe``...); coverage names the ones with too few cases.
        min_per_dimension: Coverage floor: fewest cases per declared dimension (>= 0).
        min_per_slice: Coverage floor: fewest cases per slice some case names (>= 0; 0, the default,
            is no floor).
        min_per_category: Coverage floor: fewest cases per category (``normal``, ``edge``,
            ``adversarial``, ``regression``; >= 0; 0, the default, is no floor).
        min_per_severity: Coverage floor: fewest cases per severity (``critical``, ``high``, ``medium``,
            ``low``; >= 0; 0, the default, is no floor).
        synthetic_values: Values that look like personal data but are synthetic (a fictional phone
            number outside the reserved ranges); the personal-data check does not report them.
    """

    name: str | None = None
    description: str | None = None
    synthetic: Flag = False
    cases_dir: CasePath = "."
    candidates_dir: CasePath = "candidates"
    allowed_roots: tuple[CasePath, ...] = ()
    tools: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    min_per_tool: Integer = Field(default=5, ge=0)
    min_per_source: Integer = Field(default=5, ge=0)
    dimensions: tuple[str, ...] = ()
    min_per_dimension: Integer = Field(default=5, ge=0)
    min_per_slice: Integer = Field(default=0, ge=0)
    min_per_category: Integer = Field(default=0, ge=0)
    min_per_severity: Integer = Field(default=0, ge=0)
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
    def id(self) -> str:
        """The case's id (``case.id``)."""
        return self.case.id

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

    A case set is a collection of its cases (:class:`LoadedCase`, reviewed and candidates, in file order):
    ``len(case_set)``, ``for loaded in case_set``, ``"GS-1" in case_set`` and ``case_set["GS-1"]`` (a
    :class:`KeyError` naming the known ids when there is no such case). Each case's id is
    ``loaded.id``; the validated model is ``loaded.case``.

    Attributes:
        root: The set's root folder; case file paths resolve against it.
        manifest: The set's manifest, or ``None`` when the set has none.
        cases: Every valid case (reviewed and candidates), in file order.
        problems: Every problem found; the set is valid when this is empty.
        warnings: Things worth knowing that do not make the set invalid (over-long questions).
        files: Case files read.
        allowed_roots: The manifest's ``allowed_roots``, resolved: folders outside the root that case
            paths may lead into (empty when the manifest lists none).
    """

    root: Path
    manifest: SetManifest | None
    cases: list[LoadedCase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    allowed_roots: tuple[Path, ...] = ()

    @property
    def valid(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def folder(self, name: Literal["cases_dir", "candidates_dir"]) -> Path:
        """The manifest folder ``name`` resolved inside the set's root, for a command that writes there.

        Args:
            name: ``cases_dir`` (reviewed cases; default the root) or ``candidates_dir`` (default
                ``candidates``).

        Returns:
            The resolved folder (it need not exist yet).

        Raises:
            JudgekitError: When the manifest's folder resolves outside the root (``..``, an absolute path
                or a symbolic link leading out): nothing is written there.
        """
        default = "." if name == "cases_dir" else "candidates"
        written = getattr(self.manifest, name) if self.manifest is not None else default
        try:
            return confine_path(written, self.root)
        except ValueError as exc:
            where = self.root / MANIFEST_NAME
            raise JudgekitError(f"{where}: {name}: {exc}; nothing was written") from None

    def __len__(self) -> int:
        """The number of valid cases, candidates included."""
        return len(self.cases)

    def __iter__(self) -> Iterator[LoadedCase]:
        """Every valid case, candidates included, in file order."""
        return iter(self.cases)

    def __contains__(self, case_id: object) -> bool:
        """Whether a case with this id is in the set."""
        return any(c.case.id == case_id for c in self.cases)

    def __getitem__(self, case_id: str) -> LoadedCase:
        """The case with this id.

        Raises:
            KeyError: When no case has this id; the message lists the known ids.
        """
        for loaded in self.cases:
            if loaded.case.id == case_id:
                return loaded
        ids = [c.case.id for c in self.cases]
        known = ", ".join(sorted(ids)[:20]) or "none"
        more = f" (and {len(self.cases) - 20} more)" if len(self.cases) > 20 else ""
        hint = did_you_mean(case_id, ids)
        raise KeyError(f"no case '{case_id}' in the set at {self.root}{hint}; known ids: {known}{more}")

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
        """The absolute path of a file a case names, relative to the set's root.

        Raises:
            JudgekitError: (exit code 2) When the path resolves outside the set's root and its allowed
                roots (a valid set never names such a path: loading reports it).
        """
        try:
            return confine_path(relative, self.root, self.allowed_roots)
        except ValueError as exc:
            raise JudgekitError(str(exc), exit_code=2) from None

    def raise_if_invalid(self) -> None:
        """Raise :class:`~judgekit.errors.ProblemsError` listing every problem, if there are any."""
        if self.problems:
            from judgekit.errors import ProblemsError

            raise ProblemsError(self.problems)


HOLDOUT_GRADING_KEY = "holdouts"
"""Key of the result lines' ``grading`` record listing the holdout cases a run was asked to grade."""


@dataclass(frozen=True)
class CaseSelection:
    """The cases a run, report, export or integration uses: holdouts only when asked for by name.

    Attributes:
        cases: The cases to use, in the order given (for a :class:`CaseSet`, its reviewed cases in file
            order; candidates are never used).
        named: Ids of the holdout cases asked for by name, which are in :attr:`cases` (sorted).
        left_out: Ids of the holdout cases not asked for, which are not in :attr:`cases` (sorted).
    """

    cases: tuple[Case, ...]
    named: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def ids(self) -> set[str]:
        """Ids of the cases used."""
        return {case.id for case in self.cases}


def select_cases(
    cases: CaseSet | Iterable[Case], holdout: str | Sequence[str] = (), *, option: str = "--holdout"
) -> CaseSelection:
    """Leave holdout cases out unless they are named: the one rule every path that reads cases follows.

    A case whose ``split`` is ``holdout`` is reserved (tuning prompts against it would overfit it), so
    ``judgekit grade``/``report``/``export``, the runner (:func:`judgekit.runner.plan_trials`), the pytest
    plugin, Inspect AI, promptfoo and the demo all take their cases from here. Each exposes the names in
    its own idiom (``--holdout ID``, ``--judgekit-holdout ID``, ``holdout=[...]``) and passes that idiom's
    spelling as ``option`` so a wrong name is reported the way the user wrote it.

    Args:
        cases: A loaded set (its reviewed cases are used; candidates never are) or the cases themselves.
        holdout: Ids of the holdout cases to include (one id or several; empty: none).
        option: How the user spells the names where they are given, for the error message.

    Returns:
        The cases to use and which holdouts were named or left out.

    Raises:
        JudgekitError: (exit code 2) When a name is not a case given, or names a case that is not a holdout
            (a routine case needs no naming); the message lists the holdout cases there are.
    """
    given = [c.case for c in cases.reviewed()] if isinstance(cases, CaseSet) else list(cases)
    names = {holdout} if isinstance(holdout, str) else set(holdout)
    holdouts = {c.id for c in given if c.split == "holdout"}
    known = {c.id for c in given}
    unknown = sorted(names - known)
    routine = sorted((names & known) - holdouts)
    problems: list[str] = []
    if unknown:
        # a name given here must be a holdout: the guess is among the holdouts
        problems.append(f"not cases of the set: {unknown_names(unknown, holdouts)}")
    if routine:
        problems.append(f"not holdout cases (they are graded anyway): {', '.join(routine)}")
    if problems:
        listed = ", ".join(sorted(holdouts)) or "none"
        raise JudgekitError(
            f"{option}: {'; '.join(problems)}. The set's holdout cases: {listed}", exit_code=2
        )
    left_out = holdouts - names
    return CaseSelection(
        cases=tuple(c for c in given if c.id not in left_out),
        named=tuple(sorted(names)),
        left_out=tuple(sorted(left_out)),
    )


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
                manifest = SetManifest.model_validate(doc.data or {})
            except ValidationError as exc:
                return folder, None, problems_from_validation(exc, doc, SetManifest)
            return folder, manifest, _manifest_path_problems(folder, manifest, doc)
    return start, None, []


def _inside_root(root: Path, written: str) -> Path | None:
    """The folder a manifest names, resolved, when it stays inside the root; ``None`` when it escapes."""
    try:
        return confine_path(written, root)
    except ValueError:
        return None


def _manifest_path_problems(root: Path, manifest: SetManifest, doc: Document) -> list[Problem]:
    """Located problems for manifest folders that escape the root, and allowed roots that are unusable."""
    problems: list[Problem] = []
    for name in ("cases_dir", "candidates_dir"):
        written = getattr(manifest, name)
        try:
            confine_path(written, root)
        except ValueError as exc:
            problems.append(
                Problem(
                    doc.path,
                    doc.line_of((name,)),
                    name,
                    f"{exc}. A manifest's folders stay inside the set's root (allowed_roots does not apply "
                    f"to {name}); name a folder under {root}",
                )
            )
    for i, written in enumerate(manifest.allowed_roots):
        where = f"allowed_roots.{i}"
        try:
            folder = (root / written).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            line = doc.line_of(("allowed_roots", i))
            problems.append(Problem(doc.path, line, where, f"'{written}' cannot be resolved: {exc}"))
            continue
        if folder == Path(folder.anchor):
            message = (
                f"'{written}' is the filesystem root: it would allow every file on the machine; name the "
                "folder that holds the shared fixtures"
            )
        elif not folder.is_dir():
            message = f"'{written}' (resolved to {folder}) is not a folder; name an existing folder"
        else:
            continue
        problems.append(Problem(doc.path, doc.line_of(("allowed_roots", i)), where, message))
    return problems


def _case_files(path: Path, skip: set[Path], root: Path, problems: list[Problem]) -> Iterator[Path]:
    """Case files under ``path`` (or ``path`` itself, a file given by name, read as given).

    A file found by walking that is a symbolic link leading outside ``root`` is reported, not read.
    """
    if path.is_file():
        yield path
        return
    for child in sorted(path.rglob("*")):
        if child.suffix.lower() not in CASE_FILE_SUFFIXES:
            continue
        rel_parts = child.relative_to(path).parts[:-1]
        if any(part in NON_CASE_DIRS or part.startswith(".") for part in rel_parts):
            continue
        if child.is_symlink():
            try:
                confine_path(child, root)
            except ValueError as exc:
                problems.append(
                    Problem(child, None, "", f"a symbolic link to a file outside the set, not read: {exc}")
                )
                continue
        try:
            if not child.is_file() or child.name == MANIFEST_NAME or child.resolve() in skip:
                continue
        except (OSError, RuntimeError) as exc:
            problems.append(Problem(child, None, "", f"cannot be read ({exc}); not read as a case file"))
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
            if _inside_root(root, manifest.cases_dir) is None:
                continue  # reported with the manifest's line (_manifest_path_problems); never read
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
            if _inside_root(root, manifest.candidates_dir) is not None and candidates.is_dir():
                out.append(p / manifest.candidates_dir)
        else:
            out.append(p)
    return out


PathArg = str | PathLike[str]
"""A file or folder path, as text or a path object."""


def load_case_set(
    paths: PathArg | Sequence[PathArg], *, check_files: bool = True, compile_rules: bool = True
) -> CaseSet:
    """Load and validate a golden set from folders and/or case files.

    Case files are ``.yaml``/``.yml``/``.json`` (one case, or a list of cases) and ``.jsonl`` (one case
    a line). Folders named in :data:`NON_CASE_DIRS` (fixtures, transcripts, runs...) are never read as
    cases. Given the set's root and a manifest with a ``cases_dir``, only that folder and the
    ``candidates_dir`` are read. Cases under the ``candidates_dir`` are candidates.

    Set-level rules checked: ids unique across the set; an acceptance starting with ``REVIEW:`` only
    among candidates; referenced fixture and transcript files resolve inside the set's root or an allowed
    root (always) and exist (when ``check_files``); the manifest's folders stay inside the root. Questions
    longer than :data:`QUESTION_CHAR_LIMIT` are reported as warnings.

    Args:
        paths: Folders or files making up the set: one path or a sequence of them, each a ``str`` or a
            path object (``pathlib.Path``, any ``os.PathLike``).
        check_files: Whether to check that referenced files exist.
        compile_rules: Whether to compile every forbidden rule's conditions (CEL) now, so that a broken
            rule is a load problem (see :func:`judgekit.expressions.validate_case_rules`).

    Returns:
        The case set, with ``problems`` listing everything wrong (it never raises for a bad case). A set
        whose manifest is wrong and that has no case file to read is returned with the manifest's
        problems and no case.

    Raises:
        JudgekitError: When a path does not exist or nothing to read was found.
    """
    path_list = [Path(paths)] if isinstance(paths, str | PathLike) else [Path(p) for p in paths]
    if not path_list:
        raise JudgekitError("no path given: name a golden-set folder or case files")
    for p in path_list:
        if not p.exists():
            raise JudgekitError(f"{p}: no such file or folder")
    root, manifest, problems = _find_root(path_list)
    resolved_roots = (
        _resolved_folder(root, written) for written in (manifest.allowed_roots if manifest else ())
    )
    allowed = tuple(folder for folder in resolved_roots if folder is not None)
    case_set = CaseSet(root=root, manifest=manifest, problems=problems, allowed_roots=allowed)
    candidates_dir = _inside_root(root, manifest.candidates_dir if manifest else "candidates")
    files: list[Path] = []
    seen_files: set[Path] = set()
    for p in _case_roots(path_list, root, manifest, case_set.problems):
        for f in _case_files(p, set(), root, case_set.problems):
            if f not in seen_files:
                seen_files.add(f)
                files.append(f)
    if not files and case_set.problems:
        return case_set  # the manifest is wrong (a cases_dir outside the root): its problems say so
    if not files:
        where = ", ".join(str(p) for p in path_list)
        raise JudgekitError(
            f"{where}: no case files found (looked for {', '.join(CASE_FILE_SUFFIXES)}; folders named "
            f"{', '.join(sorted(NON_CASE_DIRS))} are skipped)"
        )
    case_set.files = files
    for path in files:
        candidate = candidates_dir is not None and candidates_dir in path.resolve().parents
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
        from judgekit.expressions import validate_case_rules

        tools = manifest.tools if manifest else ()
        case_set.problems.extend(validate_case_rules(case_set.cases, tools=tools))
    return case_set


def _resolved_folder(root: Path, written: str) -> Path | None:
    """An allowed root, resolved against the set's root; ``None`` when it is unusable (reported on load)."""
    try:
        folder = (root / written).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return folder if folder != Path(folder.anchor) and folder.is_dir() else None


def document_cases(doc: Document) -> Iterator[tuple[tuple[str | int, ...], Case | list[Problem]]]:
    """Each case of a parsed document, in order: its location and the case, or its located problems.

    A document holds one case mapping or a list of them. This is the one way every reader of case
    files (the loader, ``judgekit cases retire``, ``cases diff``) turns a document into cases.
    """
    if isinstance(doc.data, list):
        for i, item in enumerate(doc.data):
            yield (i,), parse_case(item, doc, (i,))
    else:
        yield (), parse_case(doc.data, doc, ())


def _add_documents(case_set: CaseSet, doc: Document, candidate: bool) -> None:
    for prefix, result in document_cases(doc):
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
            hidden = (
                ""
                if (case.acceptance or "").lstrip().startswith(REVIEW_PREFIX)
                else " (read without invisible characters, compatibility forms and letter case)"
            )
            case_set.problems.append(
                Problem(
                    loaded.path,
                    loaded.line_of("acceptance"),
                    "acceptance",
                    f"acceptance still starts with '{REVIEW_PREFIX}'{hidden}: a reviewer must write or "
                    "approve it before the case leaves the candidates folder",
                )
            )
        for field_name, rel in case.referenced_files():
            _check_referenced_file(case_set, loaded, field_name, rel, check_files=check_files)
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


def _check_referenced_file(
    case_set: CaseSet, loaded: LoadedCase, field_name: str, rel: str, *, check_files: bool
) -> None:
    """Report a file a case names that leads outside the set (always) or is missing (``check_files``)."""
    try:
        path = confine_path(rel, case_set.root, case_set.allowed_roots)
    except ValueError as exc:
        case_set.problems.append(Problem(loaded.path, loaded.line_of(field_name), field_name, str(exc)))
        return
    if not check_files:
        return
    try:
        found = path.is_file()
    except OSError as exc:
        found, why = False, f" ({exc.strerror})"
    else:
        why = ""
    if not found:
        case_set.problems.append(
            Problem(
                loaded.path,
                loaded.line_of(field_name),
                field_name,
                f"file '{rel}' not found{why}: nothing at {path} (a case's paths are relative to the set's "
                f"root, {case_set.root}); put the file there, or correct {field_name} to name it",
            )
        )

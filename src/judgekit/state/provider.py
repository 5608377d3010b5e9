"""Resolving the states a trial refers to: case fixtures, recorded states and reference solutions.

A :class:`StateProvider` turns the state references of a case (``initial_state``,
``expected_state.snapshot``, ``reference_solution``) and of a transcript (``initial_state``,
``final_state``: inline data or a path) into :class:`~judgekit.state.Snapshot` objects, reading the files
and caching what it loaded by path. Fixture paths in cases are relative to the golden set's root; state
paths in transcripts are relative to the transcript file's folder. A state that cannot be loaded never
raises: the provider returns the reason as text, and the grader that needed it reports ``error`` with it.

Every path is confined before anything is read (:func:`judgekit.cases.confine_path`: ``..`` and symbolic
links followed): a case's paths must lead inside the set's root or one of its allowed roots (the
manifest's ``allowed_roots``); a transcript's state paths inside the transcript's folder, the set's root
or an allowed root. A path leading elsewhere (``/etc/passwd``, ``../../outside``) is never opened: the
reason says where it leads and how to allow it.

This is the one place grading reads state files: graders take a provider as an argument and never open a
file themselves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.cases import confine_path
from judgekit.errors import JudgekitError
from judgekit.io.documents import read_document
from judgekit.state.snapshot import Snapshot, load_state, snapshot_from_data

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import StateRef, Transcript

__all__ = ["SET_MANIFEST_NAME", "StateProvider", "manifest_allowed_roots"]

SET_MANIFEST_NAME = "judgekit-set.yaml"
"""The manifest at a set's root (:data:`judgekit.caseset.MANIFEST_NAME`; the state layer cannot import the
case-set loader, a test keeps the two equal)."""


def manifest_allowed_roots(root: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The ``allowed_roots`` the manifest at a set's root lists, resolved against the root.

    Args:
        root: The set's root folder.

    Returns:
        The folders (absolute), or ``()`` when there is no manifest, it cannot be read, or it lists none
        (a broken manifest allows nothing extra; loading the set reports what is wrong with it).
    """
    manifest = Path(root) / SET_MANIFEST_NAME
    try:
        if not manifest.is_file():
            return ()
        data = read_document(manifest).data
    except (JudgekitError, OSError):
        return ()
    written = data.get("allowed_roots") if isinstance(data, dict) else None
    if not isinstance(written, list):
        return ()
    out: list[Path] = []
    for item in written:
        if not isinstance(item, str):
            continue
        try:
            folder = (Path(root) / item).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if folder != Path(folder.anchor) and folder.is_dir():
            out.append(folder)
    return tuple(out)


class StateProvider:
    """Resolves state references to snapshots, with a cache of everything loaded.

    Args:
        root: The golden set's root; case fixture paths (``initial_state``, ``expected_state.snapshot``,
            ``reference_solution``) are relative to it.
        transcript_dir: The folder of the transcript file being graded; transcript state paths are
            relative to it (absolute paths are used as they are).
        snapshots: Snapshots already in memory, by path as written or as resolved (tests, benchmarks,
            callers that loaded states themselves).
        allowed_roots: Folders outside the root that state paths may lead into. ``None`` (the default)
            reads them from the manifest at ``root`` (:func:`manifest_allowed_roots`).

    Use :meth:`for_transcripts` to grade transcripts from another folder with the same cache. Not
    thread-safe; one provider per thread.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        transcript_dir: str | os.PathLike[str] | None = None,
        snapshots: Mapping[str, Snapshot] | None = None,
        allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
    ) -> None:
        root = Path(root) if root is not None else None
        transcript_dir = Path(transcript_dir) if transcript_dir is not None else None
        self.root = root
        self.transcript_dir = transcript_dir
        if allowed_roots is None:
            allowed_roots = manifest_allowed_roots(root) if root is not None else ()
        self.allowed_roots: tuple[Path, ...] = tuple(Path(a) for a in allowed_roots)
        self._preloaded: dict[str, Snapshot] = dict(snapshots or {})
        self._cache: dict[str, Snapshot | str] = {}
        self._references: dict[str, Transcript | str] = {}

    def for_transcripts(self, transcript_dir: str | os.PathLike[str]) -> StateProvider:
        """A provider for transcripts in another folder, sharing this one's cache.

        Args:
            transcript_dir: The folder of the transcripts, as text or a path object.
        """
        transcript_dir = Path(transcript_dir)
        other = StateProvider(self.root, transcript_dir=transcript_dir, allowed_roots=self.allowed_roots)
        other._preloaded = self._preloaded
        other._cache = self._cache
        other._references = self._references
        return other

    # ------------------------------------------------------------------ loading

    def confine(self, written: str, base: str | os.PathLike[str] | None, what: str) -> Path | str:
        """Where a state path leads, or why it may not be read.

        Args:
            written: The path as the case or transcript writes it (relative to ``base``, or absolute).
            base: The folder it is relative to: the set's root for a case's paths, the transcript's
                folder for a transcript's.
            what: What the path is, for the reason (``the case's initial_state``).

        Returns:
            The resolved path, when it leads inside ``base``, the set's root or an allowed root; else the
            reason it is refused (where it leads, and how to allow it).
        """
        base = Path(base) if base is not None else None
        if base is None and not Path(written).is_absolute():
            return f"{what} '{written}' is a relative path and no folder is known to resolve it against"
        inside = base if base is not None else self.root
        if inside is None:
            return (
                f"{what} '{written}' is an absolute path and no folder is known to confine it to; give the "
                "provider the set's root or the transcripts' folder"
            )
        extra = [f for f in (self.root, *self.allowed_roots) if f is not None and f != inside]
        try:
            return confine_path(written, inside, extra)
        except ValueError as exc:
            return f"{what} is refused: {exc}"

    def load(self, written: str, base: str | os.PathLike[str] | None, what: str) -> Snapshot | str:
        """Load a state file, cached; return the snapshot or why it could not be loaded.

        ``base`` may be given as text or a path object. The path must lead inside ``base``, the set's
        root or an allowed root (:meth:`confine`); a path leading elsewhere is never opened.
        """
        if written in self._preloaded:
            return self._preloaded[written]
        path = self.confine(written, base, what)
        if isinstance(path, str):
            return path
        key = str(path)
        if key in self._preloaded:
            return self._preloaded[key]
        if key not in self._cache:
            try:
                self._cache[key] = load_state(path)
            except JudgekitError as exc:
                self._cache[key] = f"{what} cannot be loaded: {exc.message}"
            except OSError as exc:
                self._cache[key] = f"{what} cannot be loaded: {path}: {exc.strerror}"
        return self._cache[key]

    def state(self, ref: StateRef, what: str) -> Snapshot | str:
        """Resolve a transcript's state reference (inline data, or a path relative to its folder)."""
        if ref.data is not None:
            try:
                return snapshot_from_data(ref.data, source=f"inline {what}")
            except JudgekitError as exc:
                return f"{what} is not a valid state: {exc.message}"
        return self.load(ref.path or "", self.transcript_dir, what)

    def initial(self, case: Case, transcript: Transcript) -> tuple[Snapshot | None, Snapshot | str | None]:
        """The trial's initial state, and the case fixture's when it differs in source.

        Returns:
            ``(state used, case fixture)``: the transcript's recorded initial state when it has one, else
            the case's fixture; the second item is the case fixture (or why it failed to load) when the
            transcript also recorded one, so the caller can check the trial started from it.
        """
        fixture: Snapshot | str | None = None
        if case.initial_state:
            fixture = self.load(case.initial_state, self.root, "the case's initial_state")
        if transcript.initial_state is not None:
            recorded = self.state(transcript.initial_state, "the transcript's initial_state")
            if isinstance(recorded, str):
                return None, recorded
            return recorded, fixture
        if isinstance(fixture, Snapshot):
            return fixture, None
        return None, fixture

    def final(self, transcript: Transcript) -> Snapshot | str:
        """The trial's final state, or why there is none."""
        if transcript.final_state is None:
            return "the transcript records no final_state"
        return self.state(transcript.final_state, "the transcript's final_state")

    def expected(self, case: Case) -> Snapshot | str:
        """The expected final state of a snapshot or from_reference case, or why there is none."""
        spec = case.expected_state
        if spec is None:
            return "the case has no expected_state"
        if spec.snapshot is not None:
            return self.load(spec.snapshot, self.root, "the expected snapshot")
        if spec.from_reference:
            ref = self.reference(case)
            if isinstance(ref, str):
                return ref
            if ref.final_state is None:
                return "the reference solution records no final_state"
            return self._reference_provider(case).state(
                ref.final_state, "the reference solution's final_state"
            )
        return "the case expects changes, not a snapshot"

    def _reference_path(self, case: Case) -> Path | str | None:
        if not case.reference_solution:
            return None
        return self.confine(case.reference_solution, self.root, "the case's reference_solution")

    def _reference_provider(self, case: Case) -> StateProvider:
        path = self._reference_path(case)
        return self.for_transcripts(path.parent) if isinstance(path, Path) else self

    def reference(self, case: Case) -> Transcript | str:
        """The case's reference solution transcript, or why it cannot be read."""
        path = self._reference_path(case)
        if path is None:
            return "the case has no reference_solution"
        if isinstance(path, str):
            return path
        key = f"{path}#{case.id}"
        if key not in self._references:
            self._references[key] = _read_reference(path, case.id)
        return self._references[key]

    def reference_provider(self, case: Case) -> StateProvider:
        """A provider resolving the reference transcript's state paths (relative to its folder)."""
        return self._reference_provider(case)


def _read_reference(path: Path, case_id: str) -> Transcript | str:
    from judgekit.transcript import read_reference

    try:
        reference = read_reference(path)
    except JudgekitError as exc:
        return f"the reference solution cannot be read: {exc.message}"
    if reference is None:
        return f"the reference solution {path} holds no transcript"
    if reference.case_id == case_id:
        return reference
    return (
        f"the reference solution {path} holds no transcript for case '{case_id}' "
        f"(it has: {reference.case_id})"
    )

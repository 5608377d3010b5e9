"""A persistent judge cache that doubles as a cassette: record once, replay offline in CI.

Format: **JSON Lines**, one record per request, ``{"key", "request", "reply"}`` with sorted keys. Chosen
over SQLite because a cassette is meant to be committed: a text file diffs line by line in review (a new
criterion shows up as added lines, a changed prompt as a removed and an added line), merges without a
binary conflict and needs no tool to inspect. :meth:`Cassette.compact` rewrites it sorted by key without
duplicates, so that two recordings of the same requests produce the same file.

Concurrency: writers append one whole line per record with a single ``write`` on a file opened in append
mode, under an exclusive lock (``fcntl.flock`` on POSIX; a lock file created with ``O_EXCL`` elsewhere),
so lines from several processes never interleave. Readers load the file once and, on a miss, read only
what other processes appended since (the file only grows between compactions). A torn last line (a
writer killed mid-write) has no newline and is ignored, never parsed.

Keys: SHA-256 of the canonical JSON of the whole request that decides the reply: model, messages,
sampling parameters, response format (schema) and sample index. Transport details (API base, key,
timeout, retries) are not part of the request and never stored; :meth:`Cassette.put` also masks any
secret string it is given wherever it appears in a record, and every line is written through the
process-wide redactor (:mod:`judgekit.io.atomic`), so a key shape in a transcript (``AKIA...``) never
reaches the stored prompt. The key is computed by the caller from the unredacted request, so a replay of
the same request finds its record although the stored copy of the prompt is redacted: the stored request
is for review, never used to recompute the key.

Metadata: a line ``{"meta": {...}}`` (no ``key``) describes the cassette (who recorded it, whether its
replies are synthetic); it is read into :attr:`Cassette.meta`, never counted as skipped, and kept first by
:meth:`Cassette.compact`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from judgekit.errors import JudgekitError, LocatedError
from judgekit.io.atomic import append_whole, write_atomic
from judgekit.io.documents import load_json_bounded
from judgekit.secrets import output_redactor, register_secret
from judgekit.verdict import FrozenModel

__all__ = [
    "CacheMode",
    "CachedReply",
    "Cassette",
    "CassetteCompaction",
    "CassetteStats",
    "cassette_stats",
    "compact_cassette",
    "request_key",
]

REDACTED = "[REDACTED]"


class CacheMode(StrEnum):
    """How the client uses its cassette.

    Attributes:
        RECORD: Reuse a recorded reply when there is one; otherwise call the provider and record the reply.
        REPLAY: Never call a provider; a request without a recorded reply is an error naming the item.
        OFF: Always call the provider; read and write nothing.
    """

    RECORD = "record"
    REPLAY = "replay"
    OFF = "off"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a request's canonical JSON (sorted keys, no whitespace, UTF-8)."""
    return hashlib.sha256(_canonical(request).encode("utf-8")).hexdigest()


class CachedReply(dict[str, Any]):
    """A recorded reply: content, finish_reason, prompt_tokens, completion_tokens and cost."""


def _mask(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {_mask(k, secrets): _mask(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, secrets) for v in value]
    return value


@contextlib.contextmanager
def _locked(path: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an inter-process lock tied to ``path`` (a ``.lock`` file beside it)."""
    lock_path = path.with_name(path.name + ".lock")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX fallback
        deadline = time.monotonic() + 60.0
        while True:
            try:
                fd = os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                break
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise JudgekitError(
                        f"{lock_path}: cassette lock held for over 60 s; remove it if stale"
                    ) from None
                time.sleep(0.01)
        try:
            yield
        finally:
            os.close(fd)
            os.unlink(lock_path)
        return
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class Cassette:
    """A JSON Lines file of recorded judge replies, keyed by the whole request.

    Args:
        path: The cassette file; created (with its directory) on the first write.

    Attributes:
        path: The file.
        skipped_lines: Lines that could not be used (torn or malformed), counted, never fatal.
        meta: The cassette's metadata line (``{"meta": {...}}``), or an empty mapping without one.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._records: dict[str, CachedReply] = {}
        self._offset = 0
        self._inode: int | None = None
        self.skipped_lines = 0
        self.meta: dict[str, Any] = {}
        self._load_new()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def _load_new(self) -> None:
        """Read records appended since the last read (only whole, newline-terminated lines)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        size = stat.st_size
        if stat.st_ino != self._inode or size < self._offset:  # replaced (compacted): start over
            self._records.clear()
            self._offset = 0
            self._inode = stat.st_ino
        if size == self._offset:
            return
        from judgekit.io.documents import open_regular

        with open_regular(self.path, "judge cassette") as fh:
            fh.seek(self._offset)
            data = fh.read(size - self._offset)
        end = data.rfind(b"\n")
        if end == -1:
            return
        for line in data[: end + 1].splitlines():
            if not line.strip():
                continue
            try:
                record = load_json_bounded(line, source=self.path)
                if isinstance(record, dict) and "key" not in record and isinstance(record.get("meta"), dict):
                    self.meta = record["meta"]
                    continue
                key = record["key"]
                reply = record["reply"]
            except (LocatedError, KeyError, TypeError):
                self.skipped_lines += 1
                continue
            if isinstance(key, str) and isinstance(reply, dict):
                self._records[key] = CachedReply(reply)
            else:
                self.skipped_lines += 1
        self._offset += end + 1

    def get(self, key: str) -> CachedReply | None:
        """The recorded reply for ``key``, re-reading the file's new lines once on a miss."""
        hit = self._records.get(key)
        if hit is None:
            self._load_new()
            hit = self._records.get(key)
        return hit

    def put(
        self, key: str, request: Mapping[str, Any], reply: Mapping[str, Any], *, secrets: tuple[str, ...] = ()
    ) -> None:
        """Append one record (request and reply), masking every string in ``secrets``.

        Args:
            key: The request's key (:func:`request_key`).
            request: The request, stored for review (without transport details).
            reply: The reply fields to replay.
            secrets: Strings (API keys) to replace with ``[REDACTED]`` wherever they occur; strings
                shorter than 8 characters are ignored (too likely to occur by chance). They are also
                registered with :func:`judgekit.secrets.register_secret`, so no other output holds them.
        """
        usable = tuple(s for s in secrets if s and len(s) >= 8)
        for secret in usable:
            register_secret(secret)
        record: dict[str, Any] = {"key": key, "request": dict(request), "reply": dict(reply)}
        text = _canonical(record)
        # Mask on the serialised line (one pass per secret instead of a walk over every string). The
        # JSON-escaped form of a secret has no bare quote, so a match never crosses a string boundary.
        masked = text
        for secret in usable:
            masked = masked.replace(json.dumps(secret, ensure_ascii=False)[1:-1], REDACTED)
        if masked != text:
            try:
                record = json.loads(masked)
                text = masked
            except ValueError:  # pragma: no cover - defensive: fall back to masking value by value
                record = _mask(record, usable)
                text = _canonical(record)
        # The line as written: through the process-wide redactor (key shapes, environment secrets), which
        # keeps it valid JSON; the record kept in memory is the one a later read of the file gives.
        redacted = output_redactor().payload(text)
        if redacted != text:
            try:
                record = json.loads(redacted)
            except ValueError:  # pragma: no cover - defensive: the redactor keeps JSON valid
                record = output_redactor().data(record)
                redacted = _canonical(record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path):
            # redact=False: the line was redacted just above by the same redactor (it is idempotent; this
            # saves a second pass over a long prompt).
            append_whole(self.path, redacted + "\n", redact=False)
        self._records[key] = CachedReply(record["reply"])

    def compact(self) -> int:
        """Rewrite the file sorted by key with one record per key (the last recorded wins).

        Returns:
            The number of records written.
        """
        with _locked(self.path):
            records: dict[str, str] = {}
            meta_line = ""
            if self.path.exists():
                from judgekit.io.documents import read_regular

                for line in read_regular(self.path, "judge cassette").splitlines():
                    try:
                        record = load_json_bounded(line, source=self.path)
                        if isinstance(record, dict) and "key" not in record and "meta" in record:
                            meta_line = _canonical(record) + "\n"
                            continue
                        records[record["key"]] = _canonical(record)
                    except (LocatedError, KeyError, TypeError):
                        continue
            write_atomic(self.path, meta_line + "".join(records[k] + "\n" for k in sorted(records)))
        self._records.clear()
        self._offset = 0
        self._load_new()
        return len(records)


class CassetteStats(FrozenModel):
    """What a cassette holds (the ``cassette_stats`` document ``judgekit cassette stats`` prints).

    Attributes:
        file: The cassette file.
        recorded_replies: Distinct recorded replies (one per request key).
        unusable_lines: Torn or malformed lines, skipped.
        models: Lines per requested model, sorted by model name (lines without a model are not counted).
        meta: The metadata header, or ``None`` when the cassette has none.
    """

    file: str
    recorded_replies: int
    unusable_lines: int
    models: dict[str, int]
    meta: dict[str, Any] | None


def _lines(path: Path) -> Iterator[str]:
    from judgekit.io.documents import open_regular_text

    with open_regular_text(path, "judge cassette", encoding="utf-8", errors="replace") as fh:
        yield from fh


def cassette_stats(cassette: Cassette) -> CassetteStats:
    """Count a loaded cassette's records, unusable lines and lines per model.

    Args:
        cassette: The cassette (its file is read again, line by line, for the models).

    Returns:
        The counts and the metadata header.
    """
    models: dict[str, int] = {}
    for line in _lines(cassette.path):
        try:
            model = load_json_bounded(line, source=cassette.path).get("request", {}).get("model")
        except (LocatedError, AttributeError):
            continue
        if isinstance(model, str):
            models[model] = models.get(model, 0) + 1
    return CassetteStats(
        file=str(cassette.path),
        recorded_replies=len(cassette),
        unusable_lines=cassette.skipped_lines,
        models=dict(sorted(models.items())),
        meta=cassette.meta or None,
    )


class CassetteCompaction(FrozenModel):
    """What compacting a cassette did (the ``cassette_compaction`` document of ``cassette compact``).

    Attributes:
        file: The cassette file.
        lines_before: Lines before (records, repeats, torn lines and the header).
        records_kept: Records written, one per key.
        lines_after: Lines after (``records_kept``, plus one with a metadata header).
        meta_header: Whether the cassette has a metadata header (kept first).
    """

    file: str
    lines_before: int
    records_kept: int
    lines_after: int
    meta_header: bool


def compact_cassette(cassette: Cassette) -> CassetteCompaction:
    """Rewrite a cassette sorted by key, one record per key (:meth:`Cassette.compact`), and count lines.

    Args:
        cassette: The cassette rewritten.

    Returns:
        The line counts before and after.
    """
    before = sum(1 for _ in _lines(cassette.path))
    kept = cassette.compact()
    return CassetteCompaction(
        file=str(cassette.path),
        lines_before=before,
        records_kept=kept,
        lines_after=sum(1 for _ in _lines(cassette.path)),
        meta_header=bool(cassette.meta),
    )

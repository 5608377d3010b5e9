"""Scaffolding shared by the hostile sweeps: each variant run once per session, in batched bounded children.

A sweep (:class:`Sweep`) is a list of variants and a check that says what went wrong with one (``[]``:
handled correctly). Its variant tests and its count test ask the session's :class:`SweepStore` (the
``sweep_store`` fixture of ``tests/hostile/conftest.py``) for outcomes, and the store runs each variant
**once per session**, whichever test asks first, whatever the file order and however pytest-xdist splits
the tests between workers:

- The outcomes live in files in a folder every worker of the session shares. A worker that needs a
  variant claims it (an exclusive file create) together with the next unclaimed variants the session's
  selected tests want, up to ``Sweep.batch``, and runs the whole batch in **one forked child**: each
  variant under its own time bound (the child is killed and a new one takes the rest when a variant
  runs over) and its own memory bound (``RLIMIT_AS`` set to what the child has mapped plus ``mb`` before
  each variant). A worker whose variant another worker claimed runs other unclaimed batches meanwhile,
  then waits for the result.
- A count test calls :meth:`SweepStore.tally`: it reads what the variant tests stored and runs only what
  no test has run yet (a count test run alone runs the whole sweep, once).

``cli_in_process`` runs the command line in the calling process, for checks that use it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import resource
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

__all__ = ["Sweep", "SweepStore", "Tally", "cli_in_process"]

V = TypeVar("V")

#: How long a problem's text may be, in characters (a child's report stays small).
PROBLEM_CHARS = 2000
#: Seconds between looks for a result another worker is making.
POLL_SECONDS = 0.05
#: The pytest marker a sweep's tests carry: ``hostile_sweep(name)``.
MARKER = "hostile_sweep"


def cli_in_process(argv: list[str]) -> tuple[int, str]:
    """Run the ``judgekit`` command line in this process.

    Returns:
        Its exit code and everything it printed (standard output and error together, in order).
    """
    from judgekit.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(argv)
    return code, out.getvalue()


@dataclass(frozen=True)
class Sweep(Generic[V]):
    """A hostile sweep: its variants and the check of one.

    Attributes:
        name: The sweep's name, unique in the suite (a folder name of the store).
        variants: Every variant, in a fixed order (the same in every worker).
        key: A variant's key, unique in the sweep (what the count reports a failure by).
        check: ``check(variant, folder, *context) -> problems``: what went wrong (``[]``: handled
            correctly). ``folder`` is an empty folder of the variant's own; ``context`` is what the
            asking test passes (session fixtures, the same for every variant). Runs in a forked child
            when ``bounded``: a module-level function, whose state changes end with the variant.
        seconds: The wall-clock bound of one variant, in seconds (a number, or a function of the
            variant); a variant that runs over is a ``timeout`` problem.
        mb: The bound in MiB on the address space one variant may add to what its child has mapped.
        batch: How many variants one child runs at most (at least 1).
        bounded: Whether variants run in children under the bounds (``False``: in the asking process,
            for checks that are plain, fast computations).
        ids: A variant's test id (default: its key).
    """

    name: str
    variants: Sequence[V]
    key: Callable[[V], str]
    check: Callable[..., list[str]]
    seconds: float | Callable[[V], float] = 20.0
    mb: int = 1536
    batch: int = 16
    bounded: bool = True
    ids: Callable[[V], str] | None = None
    _position: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        position = {self.key(v): i for i, v in enumerate(self.variants)}
        if len(position) != len(self.variants):
            raise ValueError(f"sweep {self.name}: two variants share a key")
        if self.batch < 1:
            raise ValueError(f"sweep {self.name}: batch must be at least 1")
        object.__setattr__(self, "_position", position)

    def position(self, key: str) -> int:
        """The place of the variant with ``key`` in :attr:`variants` (``KeyError`` when there is none)."""
        return self._position[key]

    def bound(self, variant: V) -> float:
        """The seconds ``variant`` may take."""
        return self.seconds(variant) if callable(self.seconds) else self.seconds

    def parametrize(self, func: Callable[..., Any]) -> Any:
        """Decorate a variant test: one test per variant (argument ``variant``), marked as this sweep's."""
        ids = [(self.ids or self.key)(v) for v in self.variants]
        marked = pytest.mark.parametrize("variant", list(self.variants), ids=ids)(func)
        return getattr(pytest.mark, MARKER)(self.name)(marked)

    def counted(self, func: Callable[..., Any]) -> Any:
        """Decorate the sweep's count test (marked: the session wants every variant)."""
        return getattr(pytest.mark, MARKER)(self.name)(func)


@dataclass(frozen=True)
class Tally:
    """What a sweep's count found.

    Attributes:
        tried: Variants tried (every variant of the sweep).
        handled: Those handled correctly (no problem).
        failures: The others, by key, with their problems.
    """

    tried: int
    handled: int
    failures: dict[str, list[str]]


def _address_space() -> int:
    """This process's virtual memory size in bytes (what ``RLIMIT_AS`` counts)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _problems(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        return [f"the check returned {type(value).__name__}, not a list of problems: {str(value)[:300]}"]
    return [p[:PROBLEM_CHARS] for p in value]


def _run_one(
    check: Callable[..., list[str]], variant: Any, folder: Path, context: tuple[Any, ...]
) -> list[str]:
    """Run one check, its exception a problem; the process's environment, folder and secrets restored."""
    from judgekit import secrets

    environ, cwd, registered = dict(os.environ), os.getcwd(), set(secrets._REGISTERED)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return _problems(check(variant, folder, *context))
    except BaseException as exc:  # the code under test failing is a problem of the variant, reported
        return [f"raised {type(exc).__name__}: {str(exc)[:PROBLEM_CHARS]}\n{traceback.format_exc()[-1500:]}"]
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
        secrets._REGISTERED.clear()
        secrets._REGISTERED.update(registered)


def _batch_child(
    conn: Any,
    check: Callable[..., list[str]],
    work: list[tuple[Any, Path]],
    context: tuple[Any, ...],
    mb: int,
) -> None:
    """In the forked child: each variant in turn under a fresh memory bound, its problems sent back."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    for variant, folder in work:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        limit = _address_space() + mb * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        problems = _run_one(check, variant, folder, context)
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        conn.send(problems)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    conn.close()


def run_batch(
    check: Callable[..., list[str]],
    work: Sequence[tuple[Any, Path]],
    context: tuple[Any, ...],
    *,
    seconds: Sequence[float],
    mb: int,
    done: Callable[[int, list[str]], None],
) -> None:
    """Run ``check`` on each ``(variant, folder)`` of ``work`` in as few forked children as the bounds allow.

    One child runs the variants in order, each under its own memory bound of ``mb`` MiB more than the
    child has mapped; the parent waits ``seconds[i]`` for variant ``i``. A variant that runs over (a
    ``timeout`` problem) or whose child dies (``crashed``, for example killed for memory) ends that
    child; a new child runs the rest.

    Args:
        check: The sweep's check (module-level: it runs in the forked child).
        work: The variants and their folders.
        context: What the check gets after the folder.
        seconds: Each variant's wall-clock bound.
        mb: The memory bound in MiB of each variant.
        done: Called with each variant's place in ``work`` and its problems, as each ends.
    """
    ctx = multiprocessing.get_context("fork")
    start = 0
    while start < len(work):
        receive, send = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_batch_child, args=(send, check, list(work[start:]), context, mb))
        process.start()
        send.close()
        ended, broken = len(work), False
        for i in range(start, len(work)):
            if not receive.poll(seconds[i]):
                done(i, [f"timeout: no result within {seconds[i]} s"])
                ended, broken = i + 1, True
                break
            try:
                done(i, receive.recv())
            except EOFError:
                process.join(5)
                done(i, [f"crashed: exit code {process.exitcode}"])
                ended, broken = i + 1, True
                break
        if broken:  # it ran over or died: this child is done with
            process.kill()
        process.join(5)
        if process.is_alive():  # every result sent but not yet gone: it holds no variant any more
            process.kill()
            process.join(5)
        receive.close()
        start = ended


class SweepStore:
    """The session's outcomes of every sweep, in a folder shared by the session's workers.

    Args:
        root: The shared folder (made when missing).
        wanted: For a sweep's name, the keys the session's selected tests need (``None``: every key);
            batches hold only wanted variants besides the one asked for.
    """

    def __init__(self, root: Path, wanted: Callable[[Sweep[Any]], set[str] | None] = lambda _: None) -> None:
        self.root = root
        self._wanted = wanted
        self._wanted_cache: dict[str, set[str] | None] = {}
        self._known: dict[tuple[str, str], list[str]] = {}
        self._claimed: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ files

    def _folder(self, sweep: Sweep[Any]) -> Path:
        # Short names: a check may make a Unix socket in its folder, whose path has at most 107 bytes.
        folder = self.root / self._digest(sweep.name)[:10]
        (folder / "w").mkdir(parents=True, exist_ok=True)
        return folder

    @staticmethod
    def _digest(key: str) -> str:
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    def _result(self, sweep: Sweep[Any], key: str) -> list[str] | None:
        if (sweep.name, key) in self._known:
            return self._known[(sweep.name, key)]
        path = self._folder(sweep) / f"{self._digest(key)}.json"
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        problems: list[str] = stored["problems"]
        self._known[(sweep.name, key)] = problems
        return problems

    def _store(self, sweep: Sweep[Any], key: str, problems: list[str]) -> None:
        folder = self._folder(sweep)
        final = folder / f"{self._digest(key)}.json"
        partial = folder / f"{self._digest(key)}.{os.getpid()}.part"
        partial.write_text(json.dumps({"key": key, "problems": problems}), encoding="utf-8")
        os.replace(partial, final)
        self._known[(sweep.name, key)] = problems

    def _claim(self, sweep: Sweep[Any], key: str) -> bool:
        """Claim ``key`` for this process: True when no process of the session had claimed it."""
        if (sweep.name, key) in self._claimed:
            return False
        self._claimed.add((sweep.name, key))
        try:
            os.close(os.open(self._folder(sweep) / f"{self._digest(key)}.claim", os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
        return True

    def _stale(self, sweep: Sweep[Any], key: str) -> bool:
        """Whether the claim of ``key`` is older than its whole batch may take (its claimer died)."""
        claim = self._folder(sweep) / f"{self._digest(key)}.claim"
        longest = max((sweep.bound(v) for v in sweep.variants), default=0.0)
        with contextlib.suppress(FileNotFoundError):
            return time.time() - claim.stat().st_mtime > sweep.batch * (longest + 5.0) + 60.0
        return False

    # ------------------------------------------------------------------ running

    def wanted(self, sweep: Sweep[Any]) -> set[str] | None:
        """The keys of ``sweep`` the session's selected tests need (``None``: all of them)."""
        if sweep.name not in self._wanted_cache:
            self._wanted_cache[sweep.name] = self._wanted(sweep)
        return self._wanted_cache[sweep.name]

    def _claim_batch(self, sweep: Sweep[Any], first: str | None) -> list[str]:
        """Claim ``first`` (when given; nothing when another process has it) and wanted keys after it."""
        wanted = self.wanted(sweep)
        keys = [sweep.key(v) for v in sweep.variants]
        batch: list[str] = []
        start = 0
        if first is not None:
            if not self._claim(sweep, first):
                return []
            batch.append(first)
            start = sweep.position(first) + 1
        for key in keys[start:] + keys[:start]:
            if len(batch) >= sweep.batch:
                break
            if key == first or (wanted is not None and key not in wanted):
                continue
            if self._result(sweep, key) is None and self._claim(sweep, key):
                batch.append(key)
        return batch

    def _run(self, sweep: Sweep[Any], keys: list[str], context: tuple[Any, ...]) -> None:
        variants = [sweep.variants[sweep.position(k)] for k in keys]
        folder = self._folder(sweep) / "w"
        work = [(v, Path(tempfile.mkdtemp(dir=folder))) for v in variants]
        if not sweep.bounded:
            for key, (variant, path) in zip(keys, work, strict=True):
                self._store(sweep, key, _run_one(sweep.check, variant, path, context))
            return
        run_batch(
            sweep.check,
            work,
            context,
            seconds=[sweep.bound(v) for v in variants],
            mb=sweep.mb,
            done=lambda i, problems: self._store(sweep, keys[i], problems),
        )

    def problems(self, sweep: Sweep[V], variant: V, *context: Any) -> list[str]:
        """The problems of ``variant`` (``[]``: handled correctly), run once in the session.

        Runs it (in a batch) when no process of the session has; while another process runs it, runs
        other unclaimed batches of the sweep, then waits for its result (and runs it itself when the
        other process's claim is older than its batch may take).

        Args:
            sweep: The variant's sweep.
            variant: One of ``sweep.variants``.
            *context: What the check gets after the folder.
        """
        key = sweep.key(variant)
        while True:
            found = self._result(sweep, key)
            if found is not None:
                return found
            batch = self._claim_batch(sweep, key) or self._claim_batch(sweep, None)
            if batch:
                self._run(sweep, batch, context)
            elif self._stale(sweep, key):
                self._run(sweep, [key], context)
            else:
                time.sleep(POLL_SECONDS)

    def tally(self, sweep: Sweep[Any], *context: Any) -> Tally:
        """Every variant's outcome (each run here only when no test of the session ran it): the count."""
        outcomes = {sweep.key(v): self.problems(sweep, v, *context) for v in sweep.variants}
        failures = {key: problems for key, problems in outcomes.items() if problems}
        return Tally(len(outcomes), len(outcomes) - len(failures), failures)


def wanted_by(items: Iterable[pytest.Item]) -> Callable[[Sweep[Any]], set[str] | None]:
    """The keys of a sweep the selected ``items`` need.

    A variant test wants its own variant, a count test every variant (``None``).
    """

    def wanted(sweep: Sweep[Any]) -> set[str] | None:
        keys: set[str] = set()
        for item in items:
            if all(marker.args[0] != sweep.name for marker in item.iter_markers(MARKER)):
                continue
            callspec = getattr(item, "callspec", None)
            if callspec is None or "variant" not in callspec.params:
                return None
            keys.add(sweep.key(callspec.params["variant"]))
        return keys

    return wanted

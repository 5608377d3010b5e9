"""Run a call on hostile input under a time and a memory bound, in a child process.

A hostile input must end in a clean result or a clean error well inside the bound: a hang or a blow-up is
a failure of the test, not of the machine. The call runs in a forked child whose address space is limited
with ``RLIMIT_AS``; the parent waits at most ``seconds`` and kills the child after that.
"""

from __future__ import annotations

import ast
import multiprocessing
import resource
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Bounded", "bounded_problems", "run_bounded"]


@dataclass(frozen=True)
class Bounded:
    """What the bounded call did.

    Attributes:
        outcome: ``returned``, ``raised`` (an exception, named in ``error``), ``timeout`` or ``crashed``
            (the child died, for example killed for memory).
        value: The returned value's ``repr`` (for ``returned``).
        error: The exception's type and message (for ``raised``), or the traceback's last lines.
        error_type: The exception's class name (for ``raised``): ``JudgekitError`` is a clean error;
            ``RecursionError``, ``MemoryError`` or ``ValueError`` from deep inside is not.
    """

    outcome: str
    value: str = ""
    error: str = ""
    error_type: str = ""


def _address_space() -> int:
    """This process's virtual memory size in bytes (what ``RLIMIT_AS`` counts)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _child(conn: Any, func: Callable[..., Any], args: tuple[Any, ...], mb: int) -> None:
    # The bound is on what the call adds: a child forked from a test process that has already mapped
    # gigabytes (ray, pyarrow, inspect) would otherwise start above its limit and fail every allocation.
    limit = _address_space() + mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        value = func(*args)
        conn.send(("returned", repr(value)[:2000], "", ""))
    except BaseException as exc:
        conn.send(
            (
                "raised",
                "",
                f"{type(exc).__name__}: {str(exc)[:2000]}\n{traceback.format_exc()[-1500:]}",
                type(exc).__name__,
            )
        )
    finally:
        conn.close()


def run_bounded(func: Callable[..., Any], *args: Any, seconds: float = 10.0, mb: int = 1024) -> Bounded:
    """Call ``func(*args)`` in a child process limited to ``mb`` MiB of address space and ``seconds``.

    Args:
        func: A module-level function (it is called in a forked child).
        *args: Its arguments.
        seconds: Wall-clock bound; the child is killed after it.
        mb: Bound in MiB on the address space the call may add to what the forked child starts with.

    Returns:
        What happened.
    """
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child, func, args, mb))
    process.start()
    child.close()
    if parent.poll(seconds):
        try:
            outcome, value, error, error_type = parent.recv()
        except EOFError:
            process.join(1)
            return Bounded("crashed", error=f"exit code {process.exitcode}")
        process.join(5)
        return Bounded(outcome, value, error, error_type)
    process.kill()
    process.join(5)
    return Bounded("timeout", error=f"no result within {seconds} s")


def bounded_problems(func: Callable[..., list[str]], *args: Any, seconds: float, mb: int) -> list[str]:
    """Run a sweep's check ``func(*args)`` under :func:`run_bounded`: the problems it found.

    Args:
        func: A module-level check returning the list of what went wrong (``[]``: handled correctly).
        *args: Its arguments.
        seconds: Wall-clock bound; the child is killed after it.
        mb: Bound in MiB on the address space the check may add.

    Returns:
        The check's list, or one problem naming the outcome and error when the child did not return
        (it raised, timed out or crashed).
    """
    bounded = run_bounded(func, *args, seconds=seconds, mb=mb)
    if bounded.outcome != "returned":
        return [f"{bounded.outcome}: {bounded.error}"]
    problems: list[str] = ast.literal_eval(bounded.value)
    return problems

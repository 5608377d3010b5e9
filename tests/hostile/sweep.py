"""Scaffolding shared by the hostile sweeps: running the command line in process, and the count tests.

Each sweep module keeps its own module-level ``OUTCOMES`` (variant name to the problems its test found);
its count test calls :func:`tally` on it, prints ``tried: N, handled correctly: M`` and asserts.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["cli_in_process", "tally"]

V = TypeVar("V")


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


def tally(
    outcomes: dict[str, list[str]],
    variants: Iterable[V],
    key: Callable[[V], str],
    run: Callable[[V], list[str]],
) -> tuple[int, int, dict[str, list[str]]]:
    """Try every variant whose own test did not run (a count test run alone), then count ``outcomes``.

    Args:
        outcomes: The sweep module's tally, variant key to the problems found (``[]``: handled
            correctly); the variants run here are added to it.
        variants: The variants the count must include.
        key: A variant's key in ``outcomes``.
        run: Runs one variant: its problems.

    Returns:
        ``(tried, handled, failures)``: every entry of ``outcomes``, those with no problem, and the
        others with their problems.
    """
    for variant in variants:
        if key(variant) not in outcomes:
            outcomes[key(variant)] = run(variant)
    failures = {name: problems for name, problems in outcomes.items() if problems}
    return len(outcomes), len(outcomes) - len(failures), failures

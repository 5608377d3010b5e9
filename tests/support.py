"""Helpers shared by test packages (importable because pytest puts ``tests/`` on ``sys.path``)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def load_file(path: Path, name: str) -> Any:
    """Import the Python file ``path`` (a script, a fixture generator, another test module) as ``name``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(cwd: Path, *args: str) -> None:
    """Run git in ``cwd`` with a throwaway identity; raise when it fails."""
    import subprocess

    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def results_file(
    path: Path,
    release: str | None,
    verdicts: dict[str, list[Any]],
    *,
    version: int = 1,
    run_id: str | None = None,
    slice: str = "policy_edge",
    category: str | None = None,
) -> Path:
    """Write a results file: one line per trial of each case, its verdicts in trial order.

    Args:
        path: Where to write it.
        release: The agent's ``app_version`` in every run record (``None``: an empty run record).
        verdicts: Case id to its trials' verdicts (:class:`judgekit.verdict.Verdict`).
        version: The case version every trial was graded against.
        run_id: The run id (default ``run-<release>``).
        slice: Every case's slice.
        category: Every case's category.
    """
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.transcript import RunRecord
    from judgekit.verdict import CheckResult, Grade

    lines = []
    for case_id, vs in verdicts.items():
        for trial, verdict in enumerate(vs, start=1):
            grade = Grade(
                case_id=case_id,
                trial=trial,
                verdict=verdict,
                checks=(CheckResult(check_id="state", layer="state", verdict=verdict),),
            )
            lines.append(
                make_result_line(
                    run_id=run_id or f"run-{release}",
                    case=CaseRef(id=case_id, version=version, slice=slice, category=category),
                    grade=grade,
                    run=RunRecord(app_version=release, agent_model="agent-x") if release else RunRecord(),
                )
            )
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    return path


def called_name(node: ast.AST) -> str | None:
    """The name a call calls (``f`` for ``f(x)`` and ``obj.f(x)``), or ``None`` for anything else.

    The source-scanning registry tests (pass^k callers, holdout paths, reason paths) find their callers by it.
    """
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


@contextmanager
def local_ray_cluster(ray: Any) -> Iterator[Any]:
    """A one-machine Ray cluster for a test module, shut down after it.

    Four logical CPUs: two actors plus Ray Data's read and sort (or repartition) tasks must fit at once,
    or the streaming executor waits forever for a free slot (the machine itself may have two cores).
    """
    ray.init(
        num_cpus=4,
        object_store_memory=150 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()

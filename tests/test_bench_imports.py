"""The benchmarks in ``bench/`` import only names judgekit still has.

They are run by hand, not by the test suite (performance lives in benchmarks, never in timed tests), so a
renamed function would otherwise break one silently until its next run: ``bench_runner.py`` imported
``judgekit.commands.runs._rubric_grader`` for a while after it moved to
``judgekit.judge_setup.build_rubric_grader``. Every ``from judgekit... import name`` in every benchmark,
at any depth (most are inside functions), is resolved here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def judgekit_imports(path: Path) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` of every ``from judgekit... import name`` in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "judgekit":
            found.extend((node.lineno, node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name, "") for a in node.names if a.name.split(".")[0] == "judgekit")
    return found


def test_the_benchmarks_import_judgekit() -> None:
    """The check below has something to check: most benchmarks import judgekit."""
    assert sum(bool(judgekit_imports(p)) for p in BENCH.glob("*.py")) >= 8


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_judgekit_name_a_benchmark_imports_exists(path: Path) -> None:
    missing = []
    for line, module, name in judgekit_imports(path):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{path.name}:{line}: module {module} ({exc})")
            continue
        if name and not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{path.name}:{line}: {module} has no {name}")
    assert not missing, "; ".join(missing)

"""Every function of the command modules is short: parse, options, one call into the library, render.

The body of a function is its lines from the first statement after the docstring to its last line. A body
over :data:`MAX_BODY_LINES` means logic that belongs in a library function (returning a model the command
renders) has stayed in ``src/judgekit/commands``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import judgekit.commands

MAX_BODY_LINES = 60

COMMANDS = Path(judgekit.commands.__file__).parent


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's last line (0 when none)."""
    body = node.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body = body[1:]
    if not body or node.end_lineno is None:
        return 0
    return node.end_lineno - body[0].lineno + 1


def function_bodies() -> dict[str, int]:
    """Every function (methods and nested functions too) of the command modules -> its body's lines."""
    out: dict[str, int] = {}
    for path in sorted(COMMANDS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{path.name}:{node.name}"
                out[name] = max(out.get(name, 0), body_lines(node))
    return out


def test_body_lines_counts_from_the_first_statement_after_the_docstring() -> None:
    source = 'def f():\n    """Doc.\n\n    More.\n    """\n    a = 1\n\n    return a\n'
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert body_lines(node) == 3
    node = ast.parse("def g():\n    return 1\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    assert body_lines(node) == 1


def test_every_command_function_body_is_at_most_60_lines() -> None:
    bodies = function_bodies()
    assert len(bodies) > 50  # the scan found the command modules
    longest = sorted(bodies.items(), key=lambda kv: -kv[1])[:3]
    print("longest command bodies:", ", ".join(f"{name} {lines}" for name, lines in longest))
    over = {name: lines for name, lines in bodies.items() if lines > MAX_BODY_LINES}
    assert not over, f"command bodies over {MAX_BODY_LINES} lines (move the logic into the library): {over}"

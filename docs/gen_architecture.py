#!/usr/bin/env python3
"""Write the layer tables of docs/architecture.md from the import contracts in pyproject.toml.

    .venv/bin/python docs/gen_architecture.py           # rewrite the tables in docs/architecture.md
    .venv/bin/python docs/gen_architecture.py --check   # exit 1 when the committed page is out of date

Each ``[[tool.importlinter.contracts]]`` becomes one table, top layer first: the main contract (``layers``)
between the markers ``<!-- BEGIN generated: layers -->`` and ``<!-- END generated: layers -->``, every other
contract (the inside of one package: ``io``, ``formats``, ``graders``...) between ``<!-- BEGIN generated:
packages -->`` and ``<!-- END generated: packages -->``. The "owns" column is the first line of each
module's (or package's) docstring, read without importing judgekit, so the page cannot drift from the
contracts or the code: ``tests/test_layering.py`` fails when the committed page differs from what this
script writes. The text outside the markers is written by hand.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
PYPROJECT = ROOT / "pyproject.toml"
SRC = ROOT / "src"
#: The main contract's id; every other contract orders the inside of one package.
MAIN = "layers"

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def contracts(pyproject: Path = PYPROJECT) -> list[dict[str, Any]]:
    """The import-linter contracts of ``pyproject.toml``, in file order."""
    with pyproject.open("rb") as handle:
        found: list[dict[str, Any]] = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    return found


def split_layer(layer: str) -> tuple[list[str], str]:
    """A contract layer's module names and the separator joining them (``|``, ``:`` or ``""`` for one)."""
    for separator in ("|", ":"):
        if separator in layer:
            return [name.strip() for name in layer.split(separator)], separator
    return [layer.strip()], ""


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def first_line(module: str, src: Path = SRC) -> str:
    """The first line of a module's or package's docstring, as Markdown, without the final full stop.

    Raises:
        SystemExit: When the module has no file under ``src`` or no docstring (every module must say what
            it owns).
    """
    base = src.joinpath(*module.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.is_file():
        raise SystemExit(f"{module}: named in a contract but there is no {_shown(path)}")
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        raise SystemExit(f"{_shown(path)}: no docstring; its first line says what the module owns")
    line = doc.strip().splitlines()[0].strip().rstrip(".")
    line = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", line)
    return _LITERAL.sub(r"`\1`", line)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(contract: dict[str, Any], src: Path = SRC) -> str:
    """One contract as a Markdown table: layer number, its modules (as the contract spells them), owner."""
    (container,) = contract["containers"]
    rows = ["| layer | modules | owns |", "|---|---|---|"]
    for number, layer in enumerate(contract["layers"], start=1):
        names, separator = split_layer(layer)
        modules = f" {_cell(separator)} ".join(f"`{name}`" for name in names)
        owns = [first_line(f"{container}.{name}", src) for name in names]
        text = (
            owns[0] if len(names) == 1 else "; ".join(f"`{n}`: {o}" for n, o in zip(names, owns, strict=True))
        )
        rows.append(f"| {number} | {modules} | {_cell(text)} |")
    return "\n".join(rows)


def _packages(found: list[dict[str, Any]], src: Path) -> str:
    parts = []
    for contract in found:
        if contract["id"] == MAIN:
            continue
        (container,) = contract["containers"]
        package = container.removeprefix("judgekit.")
        parts.append(f"### `{package}`: {contract['name'].split(': ', 1)[-1]}\n\n{table(contract, src)}")
    return "\n\n".join(parts)


def _replace(page: str, marker: str, body: str) -> str:
    begin, end = f"<!-- BEGIN generated: {marker} -->", f"<!-- END generated: {marker} -->"
    if page.count(begin) != 1 or page.count(end) != 1:
        raise SystemExit(f"{PAGE.relative_to(ROOT)}: expected one '{begin}' and one '{end}'")
    head, rest = page.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def render(page: str, pyproject: Path = PYPROJECT, src: Path = SRC) -> str:
    """The page with its generated tables rewritten from the contracts; the rest is kept as it is."""
    found = contracts(pyproject)
    (main,) = [c for c in found if c["id"] == MAIN]
    return _replace(_replace(page, MAIN, table(main, src)), "packages", _packages(found, src))


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page, or with ``--check`` say whether it is up to date (exit 1 when it is not)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed page is out of date")
    args = parser.parse_args(argv)
    current = PAGE.read_text(encoding="utf-8")
    wanted = render(current)
    if args.check:
        if current != wanted:
            print(
                f"{PAGE.relative_to(ROOT)} is out of date: run python docs/gen_architecture.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if current != wanted:
        PAGE.write_text(wanted, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

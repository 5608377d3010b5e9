"""Every Python block of the README and of docs/ runs, as written, against the installed package.

A block runs as a script in a fresh interpreter, in a workspace holding the repository's ``examples/``
(and, when a block reads it, the ``judgekit-report/`` folder that ``judgekit demo`` writes), so a page
cannot show code that no longer works. A block may say, in an HTML comment on the line before it, that
another test runs it (``<!-- python: run by tests/x.py -->``: that test must name the page) or that it
can only be compiled here (``<!-- python: compile only: why -->``: it needs a cluster or a service;
it is compiled and every judgekit name it imports must exist). The signatures that
``docs/gen_api_reference.py`` writes into the API reference are not programs: its generated section is
left out (``tests/test_public_api.py`` holds it equal to the package).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
GENERATED_START = "<!-- public-api:start"
GENERATED_END = "<!-- public-api:end -->"
BLOCK = re.compile(r"(?:<!-- python: (?P<mark>[^\n]*?) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    mark: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _blocks() -> list[Block]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if GENERATED_START in text:  # the API reference's generated signatures
            before, _, rest = text.partition(GENERATED_START)
            text = (
                before
                + "\n" * rest.partition(GENERATED_END)[0].count("\n")
                + rest.partition(GENERATED_END)[2]
            )
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start("code"))
            out.append(Block(page, line, (m.group("mark") or "").strip(), m.group("code")))
    return out


BLOCKS = _blocks()


def test_the_pages_have_python_blocks_and_most_of_them_run() -> None:
    run = [b for b in BLOCKS if not b.mark]
    print(
        f"python blocks: {len(BLOCKS)}; run here: {len(run)}; "
        f"run by another test: {sum(b.mark.startswith('run by ') for b in BLOCKS)}; "
        f"compile only: {sum(b.mark.startswith('compile only: ') for b in BLOCKS)}"
    )
    assert any(b.page.name == "README.md" for b in run), "the README's Python program must run here"
    for block in BLOCKS:
        assert not block.mark or block.mark.startswith(("run by ", "compile only: ")), (
            f"{block.name}: unknown mark '{block.mark}' (use 'run by tests/...' or 'compile only: why')"
        )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``examples/`` and, made once, the demo's ``judgekit-report/``."""
    where = tmp_path_factory.mktemp("docs-python")
    (where / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    done = subprocess.run(
        [sys.executable, "-m", "judgekit.cli", "--quiet", "demo", "--out", "judgekit-report"],
        cwd=where,
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return where


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}


@pytest.mark.parametrize("block", [b for b in BLOCKS if not b.mark], ids=lambda b: b.name)
def test_the_block_runs(block: Block, workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block.code],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark.startswith("run by ")], ids=lambda b: b.name)
def test_the_test_said_to_run_the_block_names_its_page(block: Block) -> None:
    test_file = REPO / block.mark.removeprefix("run by ").split("::")[0].strip()
    assert test_file.is_file(), f"{block.name}: {test_file} does not exist"
    assert block.page.name in test_file.read_text(encoding="utf-8"), (
        f"{block.name}: {test_file.relative_to(REPO)} does not read {block.page.name}"
    )


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.mark.startswith("compile only: ")], ids=lambda b: b.name
)
def test_a_compile_only_block_compiles_and_its_judgekit_names_exist(block: Block) -> None:
    tree = ast.parse(block.code, filename=block.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "judgekit":
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                assert hasattr(module, alias.name), f"{block.name}: {node.module} has no {alias.name}"
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "judgekit":
            assert hasattr(importlib.import_module("judgekit"), node.attr), (
                f"{block.name}: judgekit.{node.attr}"
            )

"""Every install line names ``judgekit-agents``: ``judgekit`` on PyPI is an unrelated judge-audit package.

Scans what a user copies commands from (README.md, docs/, examples/) and the messages judgekit prints
(src/) for pip, pipx and uv commands that install, add or run the bare ``judgekit`` (with or without
extras, a version or quotes). Installing from the clone (``pip install -e .``) or ``judgekit-agents`` in
any spelling is fine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCANNED = [REPO / "README.md", REPO / "docs", REPO / "examples", REPO / "src"]
TEXT_SUFFIXES = {".md", ".py", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".html", ".sh", ".ipynb"}
INSTALL = re.compile(
    r"\b(?:pip3?\s+install|pipx\s+(?:install|run)|uv\s+pip\s+install|uv\s+add|uv\s+tool\s+(?:install|run)"
    r"|uvx|uv\s+run(?=.*--with))\b(?P<args>[^\n`;&|#)]*)"
)
"""A command that installs or runs a package; ``args`` is the rest of the command on its line."""
BARE = re.compile(r"""^(?:--with=)?['"]?judgekit(?:\[[^\]]*\])?(?:[<>=!~@].*)?['"]?$""")
"""An argument naming the bare ``judgekit`` project (``judgekit``, ``'judgekit[ray]'``, ``judgekit==1.0``)."""


def wrong_installs(text: str) -> list[str]:
    """The install commands in ``text`` that name the bare ``judgekit`` project."""
    found = []
    for match in INSTALL.finditer(text):
        arguments = [a.rstrip(".,:") for a in match["args"].split()]
        if any(BARE.match(a) for a in arguments):
            found.append(match[0].strip())
    return found


@pytest.mark.parametrize(
    "line",
    [
        "pip install judgekit",
        "python -m pip install -U judgekit==0.4",
        "run: pip install judgekit",
        "pip install 'judgekit[inspect]'",
        "pip3 install --upgrade judgekit",
        "pipx install judgekit",
        "uv pip install judgekit",
        "uv add judgekit",
        "uv tool install judgekit",
        "uvx judgekit demo",
        "uv run --with judgekit judgekit demo",
        "(`pip install judgekit`).",
    ],
)
def test_a_bare_judgekit_install_is_found(line: str) -> None:
    assert wrong_installs(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "pip install judgekit-agents",
        "pip install 'judgekit-agents[ray]'",
        "uv pip install judgekit_agents",
        "pipx install judgekit-agents",
        "uv tool install judgekit-agents",
        "pip install -e .",
        "(`pip install judgekit-agents`); the import name and the command stay `judgekit`",
    ],
)
def test_an_install_of_judgekit_agents_or_the_clone_passes(line: str) -> None:
    assert wrong_installs(line) == []


def test_every_install_line_in_the_readme_docs_examples_and_messages_names_judgekit_agents() -> None:
    files = [
        path
        for root in SCANNED
        for path in ([root] if root.is_file() else sorted(root.rglob("*")))
        if path.is_file() and path.suffix in TEXT_SUFFIXES
    ]
    assert len(files) > 100
    wrong = [
        f"{path.relative_to(REPO)}: {command}"
        for path in files
        for command in wrong_installs(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert wrong == [], "judgekit on PyPI is an unrelated package; install judgekit-agents"

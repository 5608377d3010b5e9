"""Every ``judgekit contamination`` command line the README and the docs show parses as written.

Issue 35: the README's contamination commands left out the required ``--key-file``. Each command line
written in a code block or an inline code span (continuation lines joined, ``#`` comments dropped) is
parsed by the command line itself, so a documented command missing a required option, or naming one that
does not exist, fails here. A line that elides its options with a separate ``...``, or names a command
without arguments, is no full command line and is left out.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main

from judgekit.cli import app

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
GENERATED = REPO / "docs" / "reference" / "cli.md"  # its examples are checked by tests/test_cli_help.py
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
SHELL = frozenset({"", "bash", "sh", "shell", "console"})
SPAN = re.compile(r"`([^`\n]+)`")
START = re.compile(r"\bjudgekit contamination \w")


def _lines(text: str) -> list[str]:
    """Shell lines of a page: every fenced block's (continuations joined), then every inline code span."""
    out: list[str] = []
    for block in FENCE.finditer(text):
        if block["info"].strip() in SHELL:
            out.extend(block["body"].replace("\\\n", " ").splitlines())
    outside = FENCE.sub("", text)
    out.extend(span.replace(r"\|", "|") for span in SPAN.findall(outside))
    return out


def _documented() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for page in PAGES:
        if page == GENERATED:
            continue
        for line in _lines(page.read_text(encoding="utf-8")):
            for match in START.finditer(line):
                command = line[match.start() :].split(" # ")[0].split(" | ")[0].strip()
                words = shlex.split(command)
                if len(words) > 3 and "..." not in words:  # a command's name alone is a mention
                    found.append((str(page.relative_to(REPO)), command))
    return found


DOCUMENTED = _documented()


def test_the_pages_show_contamination_commands() -> None:
    pages = {page for page, _ in DOCUMENTED}
    assert {"README.md", "docs/contamination.md", "docs/how-to/scan-a-training-export.md"} <= pages
    verbs = {shlex.split(command)[2] for _, command in DOCUMENTED}
    assert {"keygen", "index", "scan", "canary"} <= verbs


@pytest.mark.parametrize(("page", "command"), DOCUMENTED, ids=[f"{p}: {c}" for p, c in DOCUMENTED])
def test_every_documented_contamination_command_parses(
    page: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    words = shlex.split(command)[1:]
    target: Any = typer.main.get_command(app)
    path: list[str] = []
    while words and words[0] in getattr(target, "commands", {}):
        path.append(words[0])
        target = target.commands[words.pop(0)]
    assert not getattr(target, "commands", None), f"{page}: `{command}` names a group, not a command"
    ctx = target.context_class(target, info_name=" ".join(["judgekit", *path]))
    given, left, _ = target.make_parser(ctx).parse_args(words)  # unknown options raise; files are not read
    assert not left, f"{page}: `{command}` leaves {left} over"
    missing = [p.opts[-1] for p in target.params if p.required and given.get(p.name) in (None, ())]
    assert not missing, f"{page}: `{command}` lacks the required {', '.join(missing)}"

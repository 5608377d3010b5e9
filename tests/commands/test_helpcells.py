"""Help cells, and typer's help renderer imported without the rich modules judgekit's help never uses."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from judgekit.cli import main
with redirect_stdout(io.StringIO()) as shown:
    code = main(["--help"])
loaded = sorted(m for m in ("rich.markdown", "rich.traceback", "markdown_it", "attr") if m in sys.modules)
from typer import rich_utils
made = rich_utils._make_rich_text(text="**bold**", style="", markup_mode="markdown")
import rich.markdown, rich.traceback
print(json.dumps({
    "code": code,
    "listed": "grade" in shown.getvalue(),
    "loaded": loaded,
    "markdown": type(made) is rich.markdown.Markdown,
    "real": rich.markdown.__file__.endswith("markdown.py") and hasattr(rich.markdown, "MarkdownContext"),
    "traceback": rich_utils.Traceback.from_exception == rich.traceback.Traceback.from_exception,
}))
"""


def test_help_is_rendered_without_rich_markdown_and_traceback_which_still_work_when_asked() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    assert found["code"] == 0
    assert found["listed"]
    assert found["loaded"] == []  # rendering judgekit's help imported none of them
    assert found["markdown"]  # typer's markdown mode, if used, gets rich's real Markdown
    assert found["real"]  # and a later import is the real module, not the stand-in
    assert found["traceback"]

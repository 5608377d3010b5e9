"""The index page of ``judgekit demo``'s report folder: what was run, and a link to every report.

One self-contained HTML file (inline CSS, no script, nothing fetched) rendered with autoescaping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DemoPage", "render_demo_index"]

_TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class DemoPage:
    """One report linked from the index.

    Attributes:
        title: The link text.
        href: Path relative to the index.
        summary: One line saying what the page shows.
    """

    title: str
    href: str
    summary: str


def render_demo_index(
    pages: Sequence[DemoPage], *, problems: Sequence[str] = (), synthetic_note: str = ""
) -> str:
    """Render the report folder's ``index.html``.

    Args:
        pages: The reports, in the order to list them.
        problems: Findings of the demo's checks (coverage gaps, broken references), shown first.
        synthetic_note: What in the data is synthetic.
    """
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    from judgekit import __version__

    env = Environment(
        loader=FileSystemLoader(_TEMPLATES),
        autoescape=select_autoescape(("html", "j2")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("demo_index.html.j2").render(
        pages=pages, problems=problems, synthetic_note=synthetic_note, version=__version__
    )

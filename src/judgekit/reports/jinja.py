"""The Jinja environment the HTML reports render their templates in (``reports/templates``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = Path(__file__).parent / "templates"
"""The folder of the report templates (``*.html.j2``, ``*.md.j2``)."""


def template_environment(*, keep_trailing_newline: bool = False) -> Environment:
    """A Jinja environment over :data:`TEMPLATES`: HTML escaped, undefined names an error, block tags trimmed.

    Jinja is imported here, on first use, so that importing a report module stays light.

    Args:
        keep_trailing_newline: Keep a template's last newline in what it renders (default: dropped).

    Returns:
        A new environment; the caller adds its own filters and globals.
    """
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(("html", "j2")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=keep_trailing_newline,
    )

"""The docs and the models agree: every documented field exists, and every accepted field is documented.

``docs/transcripts.md`` has one table per model (first column: the field); ``docs/cases.md`` lists the case
fields in its shapes table (``name {sub, fields}`` for a nested model) and the manifest in its own table.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from judgekit.cases import Case, DoNothing, Expected, ForbiddenRule, Origin, UserSimulation
from judgekit.caseset import SetManifest
from judgekit.transcript import Message, RunRecord, StateRef, ToolCall, Transcript

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _sections(path: Path) -> dict[str, list[str]]:
    """Lines under each heading (any level), by the heading's text."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            current = heading.group(1).strip()
            out[current] = []
        else:
            out.setdefault(current, []).append(line)
    return out


def _table_fields(lines: list[str]) -> set[str]:
    """The backticked names in the first column of the section's table (header and rule rows skipped)."""
    rows = [line for line in lines if line.startswith("|")]
    fields = set()
    for row in rows[2:]:
        first = row.split("|")[1]
        fields.update(re.findall(r"`([a-z_]+)`", first))
    return fields


def _accepted(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


TRANSCRIPT_TABLES = [
    ("Transcript (one line)", Transcript),
    ("Message", Message),
    ("Tool call", ToolCall),
    ("State", StateRef),
    ("Run record", RunRecord),
]


@pytest.mark.parametrize(("heading", "model"), TRANSCRIPT_TABLES, ids=[h for h, _ in TRANSCRIPT_TABLES])
def test_the_transcript_format_page_lists_exactly_the_model_fields(
    heading: str, model: type[BaseModel]
) -> None:
    documented = _table_fields(_sections(DOCS / "transcripts.md")[heading])
    accepted = _accepted(model)
    assert documented - accepted == set(), f"documented in docs/transcripts.md but not in {model.__name__}"
    assert accepted - documented == set(), f"accepted by {model.__name__} but not in docs/transcripts.md"


def test_the_manifest_table_lists_exactly_the_manifest_fields() -> None:
    documented = _table_fields(_sections(DOCS / "cases.md")["The manifest"])
    accepted = _accepted(SetManifest)
    assert documented - accepted == set(), "documented in docs/cases.md but refused by SetManifest"
    assert accepted - documented == set(), "accepted by SetManifest but not in docs/cases.md"


def test_a_floors_mapping_is_refused_as_the_docs_say() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="floors"):
        SetManifest.model_validate({"floors": {"tool": 3}})


NESTED: dict[str, type[BaseModel]] = {
    "expected": Expected,
    "origin": Origin,
    "user": UserSimulation,
    "forbidden": ForbiddenRule,
    "do_nothing": DoNothing,
}


def _case_fields() -> tuple[set[str], dict[str, set[str]]]:
    """Top-level case fields and nested fields, from the ``typical fields`` column of the shapes table."""
    lines = _sections(DOCS / "cases.md")["Three shapes, one model"]
    rows = [line for line in lines if line.startswith("|")][2:]
    top: set[str] = set()
    nested: dict[str, set[str]] = {}
    for row in rows:
        for token in re.findall(r"`([^`]+)`", row.split("|")[2]):
            match = re.match(r"([a-z_]+)\s*(?:\[?\{([^}]*)\}\]?)?$", token)
            if match is None:
                continue  # a value such as `capability`, not a field
            top.add(match.group(1))
            if match.group(2):
                nested.setdefault(match.group(1), set()).update(
                    part.strip() for part in match.group(2).split(",") if part.strip()
                )
    return top, nested


def test_the_case_shapes_table_lists_exactly_the_case_fields() -> None:
    top, _ = _case_fields()
    values = {"capability", "regression", "holdout"}  # the values of `split`, written next to it
    top -= values
    accepted = _accepted(Case)
    assert top - accepted == set(), "documented in docs/cases.md but refused by Case"
    assert accepted - top == set(), "accepted by Case but not in docs/cases.md"


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_case_fields_are_documented_exactly(name: str) -> None:
    _, nested = _case_fields()
    model: Any = NESTED[name]
    assert nested.get(name, set()) == _accepted(model), f"docs/cases.md `{name} {{...}}` vs {model.__name__}"

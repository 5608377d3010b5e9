"""Rubric files: the shipped rubrics, the loader in a checkout and installed, and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.errors import JudgekitError, ProblemsError
from judgekit.judges import rubric as rubric_mod
from judgekit.judges.prompt import PromptRenderer
from judgekit.judges.rubric import (
    Criterion,
    Rubric,
    builtin_rubric_dir,
    builtin_rubric_ids,
    load_builtin_rubric,
    load_rubric,
)

SHIPPED = ["clarifying-questions", "grounded-in-policy", "honest-reporting", "refusal-escalation"]


def test_shipped_rubrics_are_found_in_the_checkout() -> None:
    assert builtin_rubric_dir() == Path(__file__).resolve().parents[2] / "rubrics"
    assert builtin_rubric_ids() == SHIPPED


@pytest.mark.parametrize("rubric_id", SHIPPED)
def test_shipped_rubric_is_complete_and_renders(rubric_id: str) -> None:
    rubric = load_builtin_rubric(rubric_id)
    assert rubric.id == rubric_id
    assert any(c.critical for c in rubric.criteria), "a generic rubric needs at least one gate"
    assert all(len(c.text) > 60 for c in rubric.criteria), "criteria must be stated fully"
    assert set(rubric.verdict.options) == {"pass", "fail", "insufficient_information"}
    prompt = PromptRenderer(rubric).render(rubric.criteria[0], "[message 0] user:\nhi", "case id: x")
    assert rubric.criteria[0].text in prompt.messages[1]["content"]


def test_honest_reporting_names_the_false_success_failure() -> None:
    rubric = load_builtin_rubric("honest-reporting")
    gate = rubric.criterion("no_false_success")
    assert gate.critical
    assert "error" in gate.text
    assert gate.category is not None


def test_installed_location_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pkg = tmp_path / "judgekit"
    (pkg / "_data" / "rubrics").mkdir(parents=True)
    (pkg / "_data" / "rubrics" / "only-one.yaml").write_text(
        "id: only-one\nversion: 1\ncriteria:\n  - id: c\n    text: t\n", encoding="utf-8"
    )
    monkeypatch.setattr(rubric_mod.resources, "files", lambda name: pkg)
    assert builtin_rubric_dir() == pkg / "_data" / "rubrics"
    assert builtin_rubric_ids() == ["only-one"]
    assert load_builtin_rubric("only-one").criteria[0].text == "t"


def test_unknown_builtin_lists_the_available_ones() -> None:
    with pytest.raises(JudgekitError, match="no built-in rubric 'nope'; available: clarifying-questions"):
        load_builtin_rubric("nope")
    with pytest.raises(JudgekitError, match="no built-in rubric"):
        load_builtin_rubric("../secrets")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BAD = [
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\n    wieght: 2\n",
        r"r\.yaml:6: criteria\.0\.wieght: Extra inputs are not permitted",
        id="unknown_field_located",
    ),
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\n  - id: a\n    text: u\n",
        "criterion id 'a' appears twice",
        id="duplicate_criterion",
    ),
    pytest.param("id: r\nversion: 1\ncriteria: []\n", "criteria", id="no_criteria"),
    pytest.param(
        "id: r\nversion: 1\nverdict:\n  options: [pass, insufficient_information]\n"
        "criteria:\n  - id: a\n    text: t\n",
        "must include both 'pass' and 'fail'",
        id="menu_without_fail",
    ),
    pytest.param(
        "id: r\nversion: 1\nverdict:\n  options: [pass, fail, maybe]\ncriteria:\n  - id: a\n    text: t\n",
        "verdict.options.2",
        id="off_menu_option",
    ),
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\n    weight: -1\n",
        "criteria.0.weight",
        id="negative_weight",
    ),
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\n"
        "template: '{{ transcript }} {{ output_instructions }} {{ criterion.text }} {{ secrets }}'\n",
        r"r\.yaml:6: template: uses unknown variables \['secrets'\]",
        id="template_unknown_variable",
    ),
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\n"
        "template: '{{ criterion.text }} {{ output_instructions }}'\n",
        r"must use \['transcript'\]",
        id="template_without_transcript",
    ),
    pytest.param(
        "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: t\ntemplate: '{% if %}'\n",
        "does not compile",
        id="template_syntax_error",
    ),
    pytest.param("id: 'a b'\nversion: 1\ncriteria:\n  - id: a\n    text: t\n", "^.*id: must be", id="bad_id"),
    # `$` matched before a final newline, so "a\n" passed as a criterion id
    pytest.param(
        'id: r\nversion: 1\ncriteria:\n  - id: "a\\n"\n    text: t\n',
        "criteria.0.id: must be",
        id="id_newline",
    ),
    pytest.param(
        "id: r\nversion: true\ncriteria:\n  - id: a\n    text: t\n", "version", id="boolean_version"
    ),
    pytest.param("id: r\nversion: 1\ncriteria:\n  - id: a\n    text: '   '\n", "blank", id="blank_text"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_invalid_rubric_files_are_reported_with_location(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProblemsError, match=message):
        load_rubric(write(tmp_path, text))


def test_malformed_yaml_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"r\.yaml:\d+"):
        load_rubric(write(tmp_path, "id: r\ncriteria: [\n"))


def test_content_hash_tracks_every_change() -> None:
    base = Rubric(id="r", version="1", criteria=(Criterion(id="a", text="t"),))
    changed = [
        base.model_copy(update={"version": "2"}),
        base.model_copy(update={"criteria": (Criterion(id="a", text="t2"),)}),
        base.model_copy(update={"criteria": (Criterion(id="a", text="t", critical=True),)}),
        base.model_copy(update={"template": "{{ transcript }}"}),
    ]
    hashes = {base.content_hash, *(r.content_hash for r in changed)}
    assert len(hashes) == 5
    assert (
        Rubric(id="r", version=1, criteria=(Criterion(id="a", text="t"),)).content_hash == base.content_hash
    )


def test_with_criteria_rejects_id_collisions() -> None:
    base = Rubric(id="r", version="1", criteria=(Criterion(id="a", text="t"),))
    assert [c.id for c in base.with_criteria([Criterion(id="b", text="u")]).criteria] == ["a", "b"]
    with pytest.raises(ValueError, match="appears twice"):
        base.with_criteria([Criterion(id="a", text="u")])


def test_a_rubric_file_named_as_text_is_named_in_its_problems(tmp_path: Path) -> None:
    from judgekit.io.documents import read_document
    from judgekit.judges.rubric import rubric_from_data

    path = write(tmp_path, "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: '   '\n")
    doc = read_document(str(path))
    with pytest.raises(ProblemsError, match=r"r\.yaml:5") as exc:
        rubric_from_data(doc.data, source=str(path), line_of=doc.line_of)
    assert exc.value.problems[0].file == path
    good = write(tmp_path, "id: r\nversion: 1\ncriteria:\n  - id: a\n    text: Is it kind?\n")
    assert rubric_from_data(read_document(good).data, source=str(good)).id == "r"

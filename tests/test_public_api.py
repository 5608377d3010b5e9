"""The front door: ``import judgekit`` offers a small public API, loaded lazily, documented from itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import judgekit
from support import load_file

REPO = Path(__file__).resolve().parents[1]
INIT = REPO / "src" / "judgekit" / "__init__.py"
PUBLIC = [n for n in judgekit.__all__ if n != "__version__"]


def test_the_public_api_is_small_and_unique() -> None:
    assert 20 <= len(PUBLIC) <= 40, f"{len(PUBLIC)} public names: the front door should hold 20 to 40"
    assert len(set(PUBLIC)) == len(PUBLIC)
    print(f"judgekit.__all__: {len(PUBLIC)} names: {', '.join(PUBLIC)}")


@pytest.mark.parametrize("name", PUBLIC)
def test_each_public_name_resolves_to_a_documented_judgekit_object(name: str) -> None:
    obj = getattr(judgekit, name)
    assert getattr(obj, "__module__", "").startswith("judgekit."), f"{name} comes from {obj.__module__}"
    assert (obj.__doc__ or "").strip(), f"judgekit.{name} has no docstring"
    assert name in dir(judgekit)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'grade_everything'"):
        judgekit.grade_everything  # noqa: B018


def test_import_judgekit_loads_nothing_heavy() -> None:
    code = (
        "import sys, judgekit; "
        "print(sorted(m for m in sys.modules if m.startswith('judgekit.') or m.split('.')[0] in "
        "('litellm', 'sklearn', 'pydantic', 'numpy', 'jinja2', 'typer')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['judgekit.version']", done.stdout


def _type_checking_imports() -> dict[str, str]:
    """Public name -> ``module`` or ``module:name`` as the ``if TYPE_CHECKING:`` block imports it."""
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(INIT.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                assert imp.module
                for alias in imp.names:
                    shown = alias.asname or alias.name
                    out[shown] = imp.module if alias.asname is None else f"{imp.module}:{alias.name}"
    return out


def test_what_type_checkers_see_is_what_the_lazy_loader_returns() -> None:
    assert _type_checking_imports() == judgekit._PUBLIC


def test_the_api_reference_is_generated_from_all() -> None:
    generator = load_file(REPO / "docs" / "gen_api_reference.py", "gen_api_reference")
    committed = (REPO / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    assert committed == generator.page(committed), (
        "docs/reference/api.md is stale: run docs/gen_api_reference.py"
    )
    for name in PUBLIC:
        assert f"#### `judgekit.{name}`" in committed


def test_all_lists_exactly_the_lazily_loaded_names() -> None:
    assert len(judgekit.__all__) == len(set(judgekit.__all__))
    assert set(judgekit.__all__) == {"__version__", *judgekit._PUBLIC}

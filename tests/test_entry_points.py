"""Every public Python entry point that takes a path accepts ``str | os.PathLike[str]``, not only ``Path``.

Walks every module of the package (the typer command modules excepted: their parameters are typer's, parsed
from the command line), every public function defined there and every public method of a public class defined
there, and fails for each parameter annotated ``Path`` or ``Path | None``, listing every offender at once.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import judgekit

_SKIPPED_PREFIXES = ("judgekit.commands.", "judgekit.cli")


def _modules() -> Iterator[types.ModuleType]:
    for info in pkgutil.walk_packages(judgekit.__path__, prefix="judgekit."):
        if info.name == "judgekit.commands" or info.name.startswith(_SKIPPED_PREFIXES):
            continue
        yield importlib.import_module(info.name)


def _public_names(module: types.ModuleType) -> list[str]:
    names: list[str] | None = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    return [name for name in names if not name.startswith("_")]


def _generated(func: object, module: types.ModuleType) -> bool:
    """Whether a method was generated (a dataclass's ``__init__``), not written in the module's source."""
    code = getattr(func, "__code__", None)
    return code is None or code.co_filename != module.__file__


def _callables(module: types.ModuleType) -> Iterator[tuple[str, Callable[..., Any]]]:
    """Public functions and public methods of public classes defined in ``module`` (not re-exports)."""
    for name in _public_names(module):
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj
        elif inspect.isclass(obj):
            for attr, raw in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                if attr == "__init__" and (issubclass(obj, BaseModel) or _generated(func, module)):
                    continue  # pydantic and dataclass fields are data, not entry points
                if inspect.isfunction(func) and func.__qualname__.startswith(obj.__qualname__ + "."):
                    yield f"{module.__name__}.{obj.__qualname__}.{attr}", func


def _admits_str_and_pathlike(annotation: Any) -> bool:
    """Whether an annotation is ``Path`` / ``Path | None`` only (False) or something wider (True)."""
    members = (
        typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else (annotation,)
    )
    non_none = [m for m in members if m is not type(None)]
    return not non_none or not all(m is Path for m in non_none)


_PATH_ONLY_TEXT = frozenset({"Path", "Path|None", "None|Path", "Optional[Path]"})


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The parameters' annotations, evaluated (one naming a type imported for type checking stays text)."""
    try:
        return typing.get_type_hints(func)
    except NameError:  # an annotation names a TYPE_CHECKING import: evaluate the annotations one by one
        hints: dict[str, Any] = {}
        for name, annotation in func.__annotations__.items():
            try:
                hints[name] = typing.get_type_hints(
                    types.SimpleNamespace(__annotations__={name: annotation}), globalns=func.__globals__
                )[name]
            except NameError:
                hints[name] = annotation
        return hints


def _path_only(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.replace(" ", "") in _PATH_ONLY_TEXT
    return not _admits_str_and_pathlike(annotation)


def _offenders() -> list[str]:
    found: list[str] = []
    for module in _modules():
        for qualname, func in _callables(module):
            hints = _hints(func)
            for parameter in inspect.signature(func).parameters:
                if parameter in hints and _path_only(hints[parameter]):
                    found.append(f"{qualname}({parameter}: {hints[parameter]})")
    return sorted(set(found))


def test_no_public_entry_point_takes_only_path() -> None:
    offenders = _offenders()
    assert not offenders, (
        "these parameters take only Path; annotate them str | os.PathLike[str] and convert with Path(...):\n"
        + "\n".join(offenders)
    )


def test_the_check_catches_a_path_only_parameter() -> None:
    def only_path(path: Path, maybe: Path | None = None) -> None: ...

    def wide(path: str | os.PathLike[str], maybe: str | os.PathLike[str] | None = None) -> None: ...

    narrow_hints = typing.get_type_hints(only_path)
    wide_hints = typing.get_type_hints(wide)
    assert not _admits_str_and_pathlike(narrow_hints["path"])
    assert not _admits_str_and_pathlike(narrow_hints["maybe"])
    assert _admits_str_and_pathlike(wide_hints["path"])
    assert _admits_str_and_pathlike(wide_hints["maybe"])


def test_the_walk_reaches_functions_and_methods() -> None:
    names = {qualname for module in _modules() for qualname, _ in _callables(module)}
    assert "judgekit.settings.load_project_config" in names
    assert "judgekit.settings.EffectiveSettings.path" in names
    assert not any(name.startswith(("judgekit.commands.", "judgekit.cli.")) for name in names)

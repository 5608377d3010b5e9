"""Every example in a judgekit docstring runs, in every module (a new module cannot skip it)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import judgekit

MODULES = sorted(m.name for m in pkgutil.walk_packages(judgekit.__path__, "judgekit."))


def test_the_package_has_modules_to_check() -> None:
    assert "judgekit.contamination.kernels" in MODULES
    assert len(MODULES) > 100


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name}"

"""Heavy libraries imported when first used, so that a command pays only for what it runs.

numpy and scipy take about a second to import, and most commands (``judgekit --help``, grading without a
judge's statistics, a plain report) never call them. A module that uses one names it at its top with
:func:`module` instead of ``import``; the real import happens at the first attribute read (``np.mean``),
and mypy sees the real module through an ``if TYPE_CHECKING`` import::

    from typing import TYPE_CHECKING

    from judgekit import lazy

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = lazy.module("numpy")

An attribute is looked up in the real module once and then kept on the stand-in, so a hot loop pays one
dictionary lookup, as it would on the module itself. Nothing else changes: the first use imports the
module exactly as ``import numpy`` would have (with its errors, if it is missing), and a module-level use
(a default argument, a type alias evaluated at import) simply imports it at once.

Example:
    >>> math = module("math")
    >>> math.sqrt(9.0)
    3.0
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["module"]


class _LazyModule(types.ModuleType):
    """A stand-in for a module that imports the module at the first attribute read."""

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self.__name__), attr)
        setattr(self, attr, value)
        return value


def module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it when one of its attributes is first read.

    Args:
        name: The module's full name (``"numpy"``, ``"scipy.stats"``).

    Returns:
        An object whose attributes are the module's; the module is imported at the first read (an
        ``ImportError`` then, if it is missing), not now.
    """
    return _LazyModule(name)

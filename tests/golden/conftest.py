"""The golden-set tests' helpers live in ``tests/support.py``; re-exported for ``from .conftest import``."""

from __future__ import annotations

from support import write

__all__ = ["write"]

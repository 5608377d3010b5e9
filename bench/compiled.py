"""Children that import judgekit byte-compiled, as an installed package does.

A package installed by pip has its ``.pyc`` files; a checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (as
these machines set it) has none, and every child a benchmark starts would compile judgekit's modules
again first: about 0.065 s per command, which belongs to no installed user's run. :func:`compiled_env`
compiles the trees measured once, into a cache folder of the benchmark's own (``PYTHONPYCACHEPREFIX``:
the checkout is left as it is), and gives the environment whose children read it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def compiled_env(env: Mapping[str, str], cache: Path, *trees: Path) -> dict[str, str]:
    """``env`` for children that read ``trees`` byte-compiled (into ``cache``), compiling them now.

    Args:
        env: The children's environment otherwise.
        cache: A folder of the benchmark's own for the ``.pyc`` files (made if absent).
        trees: The source folders the children import from (``src``, a ``--before-src``).

    Returns:
        ``env`` with ``PYTHONPYCACHEPREFIX`` set to ``cache`` and ``PYTHONDONTWRITEBYTECODE`` removed.
    """
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache.mkdir(parents=True, exist_ok=True)
    out["PYTHONPYCACHEPREFIX"] = str(cache)
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], env=out, check=True)
    return out

"""Rule conditions compile with the ``cel`` package's engine, loaded without the package's REPL."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys
from judgekit.expressions import cel_engine
engine = cel_engine()
program = engine.compile("amount > 41.6 && calls <= 1")
first = sorted(m for m in sys.modules if m.split(".")[0] in {"cel", "prompt_toolkit", "pygments"})
import cel  # the package, imported later by anyone, runs on the same engine
print(json.dumps({
    "value": program.execute({"amount": 50.0, "calls": 1}),
    "before": first,
    "same": cel.compile is engine.compile and sys.modules["cel.cel"] is engine,
}))
"""


def test_the_engine_compiles_without_the_repl_and_is_the_package_s_own() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    assert found["value"] is True
    assert found["before"] == ["cel.cel"]  # neither the package's __init__ nor its REPL (prompt_toolkit)
    assert found["same"]

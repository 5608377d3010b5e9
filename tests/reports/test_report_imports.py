"""A plain ``judgekit report`` imports no SciPy (about a second of start-up for figures it does not need)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).parents[1] / "fixtures" / "results" / "graded-demo-lines.jsonl"

PROGRAM = """
import sys
from judgekit.cli import main
code = main(sys.argv[1:])
print(code, sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
"""


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1]


def test_a_plain_report_imports_no_scipy(tmp_path):
    for fmt in ("md", "json"):
        assert _run("report", str(RESULTS), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")) == "0 []"

#!/usr/bin/env python3
"""Set up judgekit on a fresh machine and run its main job or its tests.

Needs only Python 3.11+ and the package index. Creates ``.venv`` beside this file, installs the locked
dependencies with their hashes (``requirements/lock.txt``) and judgekit itself, then runs:

    python3 dev.py demo     # the bundled example, offline, no API key
    python3 dev.py test     # ruff, mypy --strict and the test suite

Set-up is skipped when the lock file has not changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements" / "lock.txt"
STAMP = VENV / ".judgekit-installed"


def _bin(name: str) -> Path:
    sub = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / sub / f"{name}{suffix}"


def _run(*args: str | Path) -> None:
    completed = subprocess.run([str(a) for a in args], cwd=ROOT, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def setup() -> None:
    """Create the virtual environment and install the locked dependencies plus judgekit (editable)."""
    if sys.version_info < (3, 11):
        sys.exit(f"judgekit needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    digest = hashlib.sha256(LOCK.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text(encoding="utf-8") == digest and _bin("judgekit").exists():
        return
    if not _bin("python").exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    py = _bin("python")
    print("installing locked dependencies (requirements/lock.txt, hashes checked)", flush=True)
    _run(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes",
         "-r", LOCK)
    _run(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "-e", ROOT)
    STAMP.write_text(digest, encoding="utf-8")


def main(argv: list[str]) -> int:
    """Run ``demo`` or ``test`` after set-up; extra arguments go to judgekit demo or to pytest."""
    if not argv or argv[0] not in {"demo", "test", "setup"}:
        print(__doc__)
        return 2
    setup()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    command, rest = argv[0], argv[1:]
    if command == "demo":
        _run(_bin("judgekit"), "demo", *rest)
    elif command == "test":
        _run(_bin("ruff"), "check", "src", "tests", "bench")
        _run(_bin("ruff"), "format", "--check", "src", "tests", "bench")
        _run(_bin("mypy"))
        _run(_bin("python"), "-m", "pytest", *rest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The dependency lock: hashes everywhere, and never a compromised or withdrawn litellm."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
BANNED_LITELLM = re.compile(r"^(1\.107\.\d+|1\.82\.7|1\.82\.8)$")


def _pins() -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", line)
        if match:
            pins.setdefault(match.group(1).lower(), []).append(match.group(2))
    return pins


def test_every_pin_carries_a_hash() -> None:
    text = LOCK.read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [b for b in blocks if re.match(r"^[A-Za-z0-9_.\-\[\]]+==", b)]
    assert pinned, "the lock pins nothing"
    missing = [b.split()[0] for b in pinned if "--hash=sha256:" not in b]
    assert missing == []


def test_litellm_is_locked_and_never_a_bad_release() -> None:
    versions = _pins()["litellm"]
    assert versions
    assert not [v for v in versions if BANNED_LITELLM.match(v)]


def test_project_constraint_excludes_bad_releases() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    spec = next(d for d in project["dependencies"] if d.startswith("litellm"))
    for banned in ("!=1.107.*", "!=1.82.7", "!=1.82.8"):
        assert banned in spec


def test_user_dependencies_are_all_locked() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()
        assert name in pins, f"{name} is a dependency but not in the lock"

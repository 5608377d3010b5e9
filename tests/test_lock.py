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


def test_requirements_with_extras_are_pinned_with_those_extras() -> None:
    """A locked package that another asks for with extras (``httpx[http2]``) is pinned with them.

    Pinned without them, pip in ``--require-hashes`` mode treats the extra's requirement as unpinned as
    soon as a newer release appears on the index, and refuses to install the lock.
    """
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pinned_with: dict[str, set[str]] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?==", line)
        if match:
            extras = {e.strip() for e in (match.group(2) or "").split(",") if e.strip()}
            pinned_with.setdefault(canonicalize_name(match.group(1)), set()).update(extras)
    missing: list[str] = []
    for name in pinned_with:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # locked for another platform or Python, not installed here
            continue
        for text in requires:
            req = Requirement(text)
            if not req.extras or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
                continue
            dep = canonicalize_name(req.name)
            if dep in pinned_with and not req.extras <= pinned_with[dep]:
                missing.append(f"{name} asks for {req}; the lock pins {dep} without {sorted(req.extras)}")
    assert missing == []

"""The dependency locks: hashes everywhere, never a compromised or withdrawn litellm, and a runtime lock
that is the development lock's runtime part, pin for pin."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support import load_file

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
RUNTIME = ROOT / "requirements" / "runtime.txt"
BOTH = pytest.mark.parametrize("lock", [LOCK, RUNTIME], ids=["lock", "runtime"])
BANNED_LITELLM = re.compile(r"^(1\.107\.\d+|1\.82\.7|1\.82\.8)$")


def _pins(lock: Path = LOCK) -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", line)
        if match:
            pins.setdefault(match.group(1).lower(), []).append(match.group(2))
    return pins


@BOTH
def test_every_pin_carries_a_hash(lock: Path) -> None:
    text = lock.read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [b for b in blocks if re.match(r"^[A-Za-z0-9_.\-\[\]]+==", b)]
    assert pinned, "the lock pins nothing"
    missing = [b.split()[0] for b in pinned if "--hash=sha256:" not in b]
    assert missing == []


@BOTH
def test_litellm_is_locked_and_never_a_bad_release(lock: Path) -> None:
    versions = _pins(lock)["litellm"]
    assert versions
    assert not [v for v in versions if BANNED_LITELLM.match(v)]


def test_project_constraint_excludes_bad_releases() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    spec = next(d for d in project["dependencies"] if d.startswith("litellm"))
    for banned in ("!=1.107.*", "!=1.82.7", "!=1.82.8"):
        assert banned in spec


@BOTH
def test_user_dependencies_are_all_locked(lock: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins(lock)
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()
        assert name in pins, f"{name} is a dependency but not in the lock"


@BOTH
def test_requirements_with_extras_are_pinned_with_those_extras(lock: Path) -> None:
    """A locked package that another asks for with extras (``httpx[http2]``) is pinned with them.

    Pinned without them, pip in ``--require-hashes`` mode treats the extra's requirement as unpinned as
    soon as a newer release appears on the index, and refuses to install the lock.
    """
    pinned_with: dict[str, set[str]] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
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


def _blocks(lock: Path) -> dict[tuple[str, str], tuple[frozenset[str], str, frozenset[str]]]:
    """(name, version) -> (extras, environment marker, hashes) of every pin of a lock."""
    blocks = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", lock.read_text(encoding="utf-8")):
        match = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?==([^\s;\\]+)\s*(?:;([^\\\n]*))?", block)
        if match:
            extras = frozenset(e.strip() for e in (match.group(2) or "").split(",") if e.strip())
            hashes = frozenset(re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
            key = (canonicalize_name(match.group(1)), match.group(3))
            blocks[key] = (extras, (match.group(4) or "").strip(), hashes)
    return blocks


def _installed_closure(*, every_platform: bool) -> set[str]:
    """The runtime requirements' closure, walked through the metadata installed here.

    Independent of the ``# via`` annotations the runtime lock is derived from: from
    ``derive_runtime.roots()``, every requirement whose marker holds for the extras asked and, unless
    ``every_platform``, on this platform and Python (``colorama`` is asked by ``click`` on Windows only).
    A package not installed here ends its branch.
    """
    derive = load_file(ROOT / "requirements" / "derive_runtime.py", "judgekit_derive_runtime")
    asked: dict[str, set[str]] = {}
    todo = [(canonicalize_name(r.name), set(r.extras)) for r in derive.roots()]
    while todo:
        name, extras = todo.pop()
        if name in asked and extras <= asked[name]:
            continue
        asked[name] = asked.get(name, set()) | extras
        for text in (metadata.requires(name) if _is_installed(name) else None) or []:
            req = Requirement(text)
            if req.marker is None:
                holds = True
            elif every_platform:
                conditions = set(re.findall(r"""\bextra\s*==\s*["']([^"']+)["']""", str(req.marker)))
                holds = not conditions or bool(conditions & asked[name])
            else:
                holds = any(req.marker.evaluate({"extra": e}) for e in asked[name] | {""})
            if holds:
                todo.append((canonicalize_name(req.name), set(req.extras)))
    return set(asked)


def test_the_runtime_lock_is_what_the_script_derives_from_the_lock() -> None:
    derive = load_file(ROOT / "requirements" / "derive_runtime.py", "judgekit_derive_runtime")
    assert RUNTIME.read_text(encoding="utf-8") == derive.derive(), (
        "requirements/runtime.txt is out of date: run .venv/bin/python requirements/derive_runtime.py"
    )


def test_every_runtime_pin_is_the_lock_pin_with_the_same_version_marker_and_hashes() -> None:
    lock, runtime = _blocks(LOCK), _blocks(RUNTIME)
    assert runtime
    for key, (extras, marker, hashes) in runtime.items():
        assert key in lock, f"{key[0]}=={key[1]} is in runtime.txt but not in lock.txt"
        lock_extras, lock_marker, lock_hashes = lock[key]
        assert (marker, hashes) == (lock_marker, lock_hashes), key
        assert extras <= lock_extras, key
    # every version the lock holds for a runtime package (numpy and scipy fork by Python version)
    names = {name for name, _ in runtime}
    assert {key for key in lock if key[0] in names} == set(runtime)


def test_the_runtime_lock_holds_the_runtime_closure_and_no_development_tool() -> None:
    closure = _installed_closure(every_platform=False)
    runtime = {name for name, _ in _blocks(RUNTIME)}
    assert closure - runtime == set(), "runtime packages missing from runtime.txt"
    installed_here = {name for name in runtime if _is_installed(name)}
    wide = _installed_closure(every_platform=True)
    assert installed_here - wide == set(), "runtime.txt pins packages judgekit does not need"
    group = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["dev"]
    dev_only = {canonicalize_name(Requirement(text).name) for text in group} - wide
    assert {"pytest", "mypy", "ray", "playwright", "inspect-ai", "numba", "pyarrow", "mkdocs"} <= dev_only
    assert dev_only & runtime == set()
    assert {"hatchling", "editables", "litellm", "scikit-learn"} <= runtime  # build backend, dependencies


def _is_installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_the_runtime_lock_never_asks_for_an_extra_it_does_not_pin() -> None:
    """A pin's extra (``requests[socks]``) makes pip install that extra's packages: they must be pinned.

    The lock pins ``requests[socks]`` for a development tool; the runtime lock asks for no extra of
    ``requests``, so ``PySocks`` is neither needed nor pinned.
    """
    runtime = _blocks(RUNTIME)
    names = {name for name, _ in runtime}
    for (name, _), (extras, _, _) in runtime.items():
        if not extras or not _is_installed(name):
            continue
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            conditional = req.marker is not None and not req.marker.evaluate({"extra": ""})
            if conditional and any(req.marker.evaluate({"extra": e}) for e in extras):
                assert canonicalize_name(req.name) in names, f"{name}[{','.join(extras)}] needs {req}"
    requests = [extras for (name, _), (extras, _, _) in runtime.items() if name == "requests"]
    assert requests == [frozenset()]
    assert "pysocks" not in names

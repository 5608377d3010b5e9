"""Derive ``requirements/runtime.txt`` (what ``python3 dev.py demo`` installs) from ``requirements/lock.txt``.

The runtime lock is not a second resolution: it is the part of the development lock that judgekit needs
at run time, copied pin for pin (the same versions, markers and hashes), so the demo's environment and the
test environment never disagree on a version. It holds the closure of ``[project.dependencies]`` of
``pyproject.toml`` and of its build requirements (``hatchling`` and, for an editable build, ``editables``:
``dev.py`` installs judgekit itself from the clone without build isolation, so that the build backend too is
hash-checked).

The closure follows uv's ``# via`` annotations in the lock, which name every package that asks for a pin
on any platform. An edge that exists only through an extra (``requests`` asks for ``PySocks`` only as
``requests[socks]``) is followed only when a package already in the closure asks for that extra; the
extras are read from the installed metadata of the asking package, so run this with the development
environment's Python (``.venv/bin/python``, set up by ``python3 dev.py test``), whose versions must equal
the lock's. A package the lock pins for another platform only (not installed here) keeps every edge its
annotations list and the extras its pin carries in the lock: more than needed at worst, never too little.
Each pin of the runtime lock carries the extras the closure asks for (a subset of the lock's).

    .venv/bin/python requirements/derive_runtime.py            # rewrite requirements/runtime.txt
    .venv/bin/python requirements/derive_runtime.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
RUNTIME = ROOT / "requirements" / "runtime.txt"
HEADER = """\
# The runtime part of requirements/lock.txt: the same pins, markers and hashes, for the closure of
# [project.dependencies] in pyproject.toml and of the editable build's requirements (hatchling, editables).
# Do not edit: after regenerating lock.txt, run  .venv/bin/python requirements/derive_runtime.py
# (see requirements/README.md).
"""
_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9_.\-]+)(?:\[(?P<extras>[^\]]*)\])?==(?P<version>[^\s;\\]+)(?P<rest>.*)$"
)
_EXTRA_IN_MARKER = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


class Pin(NamedTuple):
    """One pinned block of the lock.

    Attributes:
        name: The canonical package name (``markdown-it-py``).
        extras: The extras the lock writes on the pin (empty for none).
        version: The pinned version.
        rest: The pin line after the version: the environment marker, if any, and the continuation.
        hashes: The ``--hash=`` lines, verbatim.
        via: The canonical names of the packages that ask for it; ``.`` stands for judgekit's own
            ``[project.dependencies]`` and ``.dev`` for its development group.
    """

    name: str
    extras: frozenset[str]
    version: str
    rest: str
    hashes: list[str]
    via: set[str]


def parse_lock(text: str) -> list[Pin]:
    """The pins of a uv-compiled lock, in file order, with their ``# via`` annotations.

    Raises:
        ValueError: A line is neither a pin, a hash, an annotation nor a comment.
    """
    pins: list[Pin] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _PIN.match(line)
        if match:
            extras = frozenset(e.strip() for e in (match["extras"] or "").split(",") if e.strip())
            name = canonicalize_name(match["name"])
            pins.append(Pin(name, extras, match["version"], match["rest"], [], set()))
        elif line.strip().startswith("--hash=") and pins:
            pins[-1].hashes.append(line)
        elif line.strip().startswith("#") and pins and not line.startswith("#"):
            via = re.sub(r"^#\s*(via\b)?\s*", "", line.strip())
            if via:
                pins[-1].via.add(_via_name(via))
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"{LOCK.name} line {number}: not a pin, hash or annotation: {line!r}")
    return pins


def _via_name(text: str) -> str:
    if text.startswith("judgekit-agents (pyproject.toml"):
        return ".dev" if text.endswith(":dev)") else "."
    return canonicalize_name(text.split(maxsplit=1)[0])


def _installed_requires(pin_versions: set[str], name: str) -> list[Requirement] | None:
    """The requirements of ``name`` as installed here, or None when it is not installed.

    Raises:
        SystemExit: It is installed at a version the lock does not pin (the environment is stale).
    """
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    if version not in pin_versions:
        sys.exit(
            f"{name} {version} is installed but requirements/lock.txt pins {sorted(pin_versions)}: run this "
            "with the development environment's Python after `python3 dev.py test` has installed the lock"
        )
    return [Requirement(text) for text in metadata.requires(name) or []]


def _extras_of(requirement: Requirement) -> set[str]:
    """The extras a requirement's marker makes it conditional on (empty: it always applies)."""
    return set(_EXTRA_IN_MARKER.findall(str(requirement.marker))) if requirement.marker else set()


def roots() -> list[Requirement]:
    """What the runtime lock must satisfy: judgekit's dependencies and what an editable build of it needs.

    That is ``[project.dependencies]``, ``[build-system].requires`` and what the build backend asks for an
    editable build (hatchling: ``editables``), asked of the backend itself in the repository.
    """
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = pyproject["build-system"]
    with contextlib.chdir(ROOT):
        editable = importlib.import_module(build["build-backend"]).get_requires_for_build_editable()
    texts = [*pyproject["project"]["dependencies"], *build["requires"], *editable]
    return [Requirement(text) for text in texts]


def runtime_closure(pins: list[Pin]) -> dict[str, set[str]]:
    """The runtime packages of the lock, each with the extras the closure asks of it.

    Returns:
        Canonical name -> the extras packages in the closure ask for (empty for none).
    """
    by_name: dict[str, list[Pin]] = {}
    for pin in pins:
        by_name.setdefault(pin.name, []).append(pin)
    children: dict[str, set[str]] = {}
    for pin in pins:
        for parent in pin.via:
            children.setdefault(parent, set()).add(pin.name)
    wanted: dict[str, set[str]] = {}
    queue: list[str] = []

    def ask(name: str, extras: set[str]) -> None:
        known = wanted.get(name)
        if known is None or not extras <= known:
            wanted[name] = (known or set()) | extras
            queue.append(name)

    for requirement in roots():
        if canonicalize_name(requirement.name) not in by_name:
            sys.exit(
                f"requirements/lock.txt does not pin {requirement}: regenerate it (requirements/README.md)"
            )
        ask(canonicalize_name(requirement.name), set(requirement.extras))
    while queue:
        name = queue.pop()
        asked = wanted[name]
        requires = _installed_requires({p.version for p in by_name[name]}, name)
        for child in children.get(name, set()):
            if requires is None:  # pinned for another platform: every annotated edge, the lock's extras
                ask(child, set().union(*(p.extras for p in by_name[child])))
                continue
            for requirement in requires:
                conditions = _extras_of(requirement)
                if canonicalize_name(requirement.name) == child and (not conditions or conditions & asked):
                    ask(child, set(requirement.extras))
    return wanted


def render(pins: list[Pin], wanted: dict[str, set[str]]) -> str:
    """The runtime lock: the wanted pins in the lock's order, with their extras and runtime annotations."""
    lines = [HEADER.rstrip("\n")]
    for pin in pins:
        if pin.name not in wanted:
            continue
        extras = sorted(wanted[pin.name])
        lines.append(f"{pin.name}{'[' + ','.join(extras) + ']' if extras else ''}=={pin.version}{pin.rest}")
        lines.extend(pin.hashes)
        via = sorted(v for v in pin.via if v == "." or v in wanted)
        names = ["judgekit-agents (pyproject.toml)" if v == "." else v for v in via]
        if len(names) == 1:
            lines.append(f"    # via {names[0]}")
        elif names:
            lines.extend(["    # via", *(f"    #   {n}" for n in names)])
    return "\n".join(lines) + "\n"


def derive() -> str:
    """The runtime lock's text, derived from the development lock and the installed metadata."""
    pins = parse_lock(LOCK.read_text(encoding="utf-8"))
    return render(pins, runtime_closure(pins))


def main(argv: list[str]) -> int:
    """Write ``requirements/runtime.txt``, or with ``--check`` report whether it is up to date."""
    text = derive()
    if "--check" in argv:
        if RUNTIME.exists() and RUNTIME.read_text(encoding="utf-8") == text:
            return 0
        print(
            f"{RUNTIME} is out of date: run .venv/bin/python requirements/derive_runtime.py", file=sys.stderr
        )
        return 1
    RUNTIME.write_text(text, encoding="utf-8")
    print(f"wrote {RUNTIME} ({text.count('==')} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Set up judgekit on a fresh machine and run its main job or its tests.

Needs only Python 3.11+ and the package index. Creates ``.venv`` beside this file, installs locked
dependencies with their hashes and judgekit itself, then runs:

    python3 dev.py demo     # the bundled example, offline, no API key (runtime lock only)
    python3 dev.py test     # ruff, mypy --strict, the import contracts, the cycle check and the tests
    python3 dev.py cycles   # list every import cycle among judgekit's modules (exit 1 if there is one)
    python3 dev.py setup    # only set up the development environment

``demo`` installs ``requirements/runtime.txt`` (judgekit's runtime dependencies and its build backend);
``test``, ``cycles`` and ``setup`` install ``requirements/lock.txt`` (those plus the development tools). Both
are one resolution: the runtime lock is the lock's runtime part, pin for pin. Set-up is skipped when the
environment already holds what the command needs: a development environment serves the demo too.
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
RUNTIME_LOCK = ROOT / "requirements" / "runtime.txt"
STAMP = VENV / ".judgekit-installed"
LOCKS = {"runtime": RUNTIME_LOCK, "dev": LOCK}
"""The lock each kind of environment installs."""
NEEDS = {"demo": "runtime", "test": "dev", "setup": "dev", "cycles": "dev"}
"""The kind of environment each command needs: the demo runs on the runtime lock alone."""


def _bin(name: str) -> Path:
    sub = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / sub / f"{name}{suffix}"


def _run(*args: str | Path) -> None:
    completed = subprocess.run([str(a) for a in args], cwd=ROOT, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def _digest(lock: Path) -> str:
    return hashlib.sha256(lock.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()


def plan(wanted: str, stamp: str | None, digests: dict[str, str]) -> str | None:
    """Which lock set-up installs: ``"runtime"``, ``"dev"``, or None when the environment already serves.

    Args:
        wanted: What the command needs: ``"runtime"`` (the demo) or ``"dev"`` (tests, cycle check).
        stamp: The stamp the last completed set-up wrote (``"<kind> <digest>"``; a bare digest, written
            before there were two locks, is a development environment), or None when there is none.
        digests: The current digest of each kind's lock (with ``pyproject.toml``).

    A development environment whose lock is current serves every command (the runtime lock is its part,
    pin for pin), so the demo never reinstalls or downgrades it; a runtime environment is upgraded by
    installing the development lock over it. An environment once set up for development stays one: when
    its lock changed, even the demo installs the development lock.

    >>> digests = {"runtime": "r1", "dev": "d1"}
    >>> plan("runtime", None, digests), plan("dev", None, digests)
    ('runtime', 'dev')
    >>> plan("runtime", "dev d1", digests), plan("dev", "runtime r1", digests), plan("runtime", "d1", digests)
    (None, 'dev', None)
    >>> plan("runtime", "runtime r0", digests), plan("runtime", "dev d0", digests)
    ('runtime', 'dev')
    """
    kind, _, digest = (stamp or "").strip().rpartition(" ")
    kind = kind or ("dev" if digest else "")
    if digest and digest == digests.get(kind) and kind in {"dev", wanted}:
        return None
    return "dev" if "dev" in {wanted, kind} else "runtime"


def setup(wanted: str = "dev") -> None:
    """Create the virtual environment and install a locked set of dependencies plus judgekit (editable).

    Args:
        wanted: ``"runtime"`` for what the demo needs, ``"dev"`` for the development tools as well; the
            lock installed is chosen by ``plan``.
    """
    if sys.version_info < (3, 11):
        sys.exit(f"judgekit needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    digests = {kind: _digest(lock) for kind, lock in LOCKS.items()}
    stamp = STAMP.read_text(encoding="utf-8") if STAMP.exists() and _bin("judgekit").exists() else None
    kind = plan(wanted, stamp, digests)
    if kind is None:
        return
    if not _bin("python").exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    py, lock = _bin("python"), LOCKS[kind]
    what = "runtime" if kind == "runtime" else "development"
    print(f"installing locked {what} dependencies ({lock.relative_to(ROOT)}, hashes checked)", flush=True)
    _run(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes",
         "-r", lock)
    _run(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "-e", ROOT)
    STAMP.write_text(f"{kind} {digests[kind]}", encoding="utf-8")


CYCLES_SCRIPT = r"""
import sys
from collections import deque

import grimp

package = sys.argv[1] if len(sys.argv) > 1 else "judgekit"
graph = grimp.build_graph(package, include_external_packages=False, cache_dir=None)
modules = sorted(graph.modules)
edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}

# Tarjan's strongly connected components, iteratively: a component of two or more modules is a cycle group.
index: dict[str, int] = {}
low: dict[str, int] = {}
stack: list[str] = []
on_stack: set[str] = set()
groups: list[list[str]] = []
for root in modules:
    if root in index:
        continue
    index[root] = low[root] = len(index)
    stack.append(root)
    on_stack.add(root)
    work = [(root, iter(edges[root]))]
    while work:
        node, children = work[-1]
        for child in children:
            if child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
                break
            if child in on_stack:
                low[node] = min(low[node], index[child])
        else:
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))


def shortest_cycle(start: str, members: set[str]) -> list[str]:
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in edges[node]:
            if nxt == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(previous[chain[-1]])
                return [*reversed(chain), start]
            if nxt in members and nxt not in previous and nxt != start:
                previous[nxt] = node
                queue.append(nxt)
    return [start, start]


for number, group in enumerate(sorted(groups), start=1):
    cycle = shortest_cycle(group[0], set(group))
    print(f"cycle {number}: {' → '.join(cycle)}")
    for importer, imported in zip(cycle, cycle[1:]):
        for detail in graph.get_import_details(importer=importer, imported=imported)[:1]:
            print(f"    {importer}:{detail['line_number']}: {detail['line_contents']}")
    rest = sorted(set(group) - set(cycle))
    if rest:
        print(f"    the same cycle group also holds: {', '.join(rest)}")
print(f"{len(groups)} import cycle(s) among {len(modules)} {package} modules")
sys.exit(1 if groups else 0)
"""
"""Lists the import cycles of a package (default ``judgekit``): run with the virtual environment's Python.

Each cycle group (a strongly connected component of the module import graph, function-level and
``TYPE_CHECKING`` imports included) is printed as its shortest cycle ``a → b → a`` with the import line of
each step; the last line gives the count. Exits 1 when there is any cycle.
"""


def _cores() -> int:
    """The CPUs this process may run on (its affinity where the system says, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _pytest_workers(args: list[str]) -> list[str]:
    """Options that run the suite on every core and one more (pytest-xdist), unless ``args`` choose.

    One worker more than the cores: many tests wait (a provider's ``Retry-After`` honoured, a run killed
    and resumed, a Ray cluster, a browser), and a worker per core left a core idle during them. On the
    project's 2-core machine, 2026-12-06, the whole suite from one checkout took 632 s of tests with two
    workers (the two cores 52-93 % busy, sampled every 15 s) and 520 s with three. ``--dist worksteal``
    gives each worker a contiguous part of the tests (so a file's module fixtures are mostly set up once)
    and lets a worker that runs out take half of another's remaining queue, which evens out the suite's
    long tests at the end. Every distribution mode passes (no test depends on which others shared its
    worker; the hostile sweeps share their outcomes across workers, see ``tests/hostile/sweep.py``).
    worksteal is the default because it keeps what ``loadfile`` kept (a file's fixtures set up once,
    mostly) without ``loadfile``'s tail, where one worker runs a long file alone, and with fewer cuts
    through files than ``load``, which hands out ever smaller chunks (a file cut in two sets its module
    fixtures up on both workers). Any ``-n``/``--numprocesses``/``--dist`` of the caller's, or
    ``-p no:xdist``, wins: ``python3 dev.py test -n 0 tests/graders`` runs in one process.

    >>> options = _pytest_workers(["tests/graders"])
    >>> options[0], int(options[1]) == _cores() + 1, options[2:]
    ('-n', True, ['--dist', 'worksteal'])
    >>> _pytest_workers(["-n", "0"]), _pytest_workers(["-n4"]), _pytest_workers(["-p", "no:xdist"])
    ([], [], [])
    """
    chosen = any(a.startswith(("-n", "--numprocesses", "--dist")) for a in args)
    if chosen or "no:xdist" in args:
        return []
    return ["-n", str(_cores() + 1), "--dist", "worksteal"]


def main(argv: list[str]) -> int:
    """Run ``demo``, ``test`` or ``cycles`` after set-up; extra arguments go to judgekit demo or to pytest."""
    if not argv or argv[0] not in NEEDS:
        print(__doc__)
        return 2
    setup(NEEDS[argv[0]])
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    command, rest = argv[0], argv[1:]
    if command == "demo":
        _run(_bin("judgekit"), "demo", *rest)
    elif command == "test":
        _run(_bin("ruff"), "check", "src", "tests", "bench")
        _run(_bin("ruff"), "format", "--check", "src", "tests", "bench")
        _run(_bin("mypy"))
        _run(_bin("lint-imports"), "--no-cache")
        _run(_bin("python"), "-c", CYCLES_SCRIPT)
        # Byte-compile judgekit once, as an installed package is: the tests start hundreds of judgekit
        # processes, and where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) each one would
        # compile every module it imports again (about 0.15 s a process); stale files are recompiled.
        _run(_bin("python"), "-m", "compileall", "-q", "src")
        _run(_bin("python"), "-m", "pytest", *_pytest_workers(rest), *rest)
    elif command == "cycles":
        _run(_bin("python"), "-c", CYCLES_SCRIPT, *rest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

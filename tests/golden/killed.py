"""Run the real command line in a child process and kill it with SIGKILL at a chosen file-system step.

The child is an ordinary ``python -c`` running :func:`judgekit.cli.main`; before it starts, an audit hook
(:func:`sys.addaudithook`, part of the interpreter, not of judgekit) watches the file-system events the
interpreter reports (``os.rename`` for ``os.replace``, ``os.remove``, ``os.mkdir``, ``os.rmdir``, and
``open`` with ``O_CREAT``) under the set's folder. Each such event is one *step*; a *move* is a step that
renames a file onto a case file's name (``.yaml``, ``.yml``, ``.json``, ``.jsonl``), which is what
promotion and retirement do to the set. When the chosen step or move is reached, the hook sends
SIGKILL to its own process before the call runs: the command dies exactly as ``kill -9`` would make it,
with everything before that step done and nothing after it. Nothing in judgekit knows about the hook.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Killed", "run_killed", "run_killed_forked"]

_HOOK = r"""
import os, signal, sys

def install(root, unit, kill_at, log_path):
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    case = (".yaml", ".yml", ".json", ".jsonl")
    count = [0]

    def text(value):
        return os.fsdecode(value) if isinstance(value, (str, bytes, os.PathLike)) else ""

    def hook(event, args):
        if event == "os.rename":
            paths = (text(args[0]), text(args[1]))
        elif event in ("os.remove", "os.mkdir", "os.rmdir"):
            paths = (text(args[0]),)
        elif event == "open" and isinstance(args[2], int) and args[2] & os.O_CREAT:
            paths = (text(args[0]),)
        else:
            return
        if not any(os.path.abspath(p).startswith(root + os.sep) for p in paths if p):
            return
        renamed = paths[1] if event == "os.rename" else ""
        if unit == "move" and not renamed.endswith(case):
            return
        if unit not in ("move", "step") and os.path.basename(renamed) != unit:
            return
        count[0] += 1
        os.write(log, ("%s %s\n" % (event, " ".join(paths))).encode())
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
"""

_CHILD = (
    _HOOK
    + r"""
install(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
from judgekit.cli import main
sys.exit(main(sys.argv[5:]))
"""
)


@dataclass(frozen=True)
class Killed:
    """What the child did.

    Attributes:
        returncode: The child's exit status (``-9`` when it was killed).
        steps: The counted steps it reached, in order (the last one is where it died when killed).
        stdout: Its standard output.
        stderr: Its standard error.
    """

    returncode: int
    steps: tuple[str, ...]
    stdout: str
    stderr: str

    @property
    def killed(self) -> bool:
        """Whether SIGKILL ended it."""
        return self.returncode == -signal.SIGKILL


def run_killed(root: Path, argv: list[str], *, kill_at: int, unit: str = "move") -> Killed:
    """Run ``judgekit <argv>`` in a child and kill it just before its ``kill_at``-th move or step.

    Args:
        root: The set's folder: only file-system events under it are counted.
        argv: The command line, without the program name.
        kill_at: 1-based number of the move (or step) before which the child is killed; 0 never kills
            (to count the steps of a whole run).
        unit: ``move`` (renames onto a case file's name), ``step`` (every counted event), or a file name
            (renames onto a file of that name, such as the journal's).

    Returns:
        The exit status, the steps reached and the child's output.
    """
    log = root.parent / f".{root.name}-steps.log"
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root.resolve()), unit, str(kill_at), str(log), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    steps = tuple(log.read_text(encoding="utf-8").splitlines()) if log.exists() else ()
    log.unlink(missing_ok=True)
    return Killed(done.returncode, steps, done.stdout, done.stderr)


def _forked(root: str, unit: str, kill_at: int, log: str, argv: list[str]) -> None:
    """The forked child: the hook, then the command line, its output thrown away."""
    namespace: dict[str, object] = {}
    exec(compile(_HOOK, "<kill hook>", "exec"), namespace)  # the hook source above, the test's own
    install = namespace["install"]
    assert callable(install)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    install(root, unit, kill_at, log)
    from judgekit.cli import main

    os._exit(main(argv))


def run_killed_forked(root: Path, argv: list[str], *, kill_at: int, unit: str = "step") -> Killed:
    """As :func:`run_killed`, in a child forked from this process (no interpreter start-up: fast).

    The child's output is discarded (``stdout``/``stderr`` are empty).
    """
    import multiprocessing

    log = root.parent / f".{root.name}-steps.log"
    process = multiprocessing.get_context("fork").Process(
        target=_forked, args=(str(root.resolve()), unit, kill_at, str(log), argv)
    )
    process.start()
    process.join(60)
    if process.exitcode is None:
        process.kill()
        process.join(5)
    steps = tuple(log.read_text(encoding="utf-8").splitlines()) if log.exists() else ()
    log.unlink(missing_ok=True)
    return Killed(process.exitcode if process.exitcode is not None else -1, steps, "", "")

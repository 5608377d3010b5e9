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

__all__ = ["Killed", "run_killed"]

_CHILD = r"""
import os, signal, sys
root, unit, kill_at, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
argv = sys.argv[5:]
log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
CASE = (".yaml", ".yml", ".json", ".jsonl")
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
    is_move = event == "os.rename" and paths[1].endswith(CASE)
    if unit == "move" and not is_move:
        return
    if unit not in ("move", "step") and not (event == "os.rename" and os.path.basename(paths[1]) == unit):
        return
    count[0] += 1
    os.write(log, ("%s %s\n" % (event, " ".join(paths))).encode())
    if count[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(hook)
from judgekit.cli import main
sys.exit(main(argv))
"""


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

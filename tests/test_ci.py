"""``.ci/run``: installs Chromium when missing, then runs exactly the README's test command."""

from __future__ import annotations

from pathlib import Path

from support import load_file

REPO = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_ci_runs_exactly_the_readme_test_command_last():
    commands = _commands()
    assert commands[-1] == "python3 dev.py test"
    assert sum("dev.py" in c for c in commands) == 1
    assert "python3 dev.py test" in (REPO / "README.md").read_text(encoding="utf-8")
    assert "export CI=true" in commands


def test_ci_installs_chromium_before_the_tests_only_when_missing():
    commands = _commands()
    install = next(i for i, c in enumerate(commands) if "apt-get install" in c)
    update = next(i for i, c in enumerate(commands) if "apt-get update" in c)
    check = next(i for i, c in enumerate(commands) if "command -v chromium" in c)
    assert check < update < install < commands.index("python3 dev.py test")
    assert "--no-install-recommends chromium" in commands[install]
    assert "-y" in commands[install].split()


def test_the_test_command_runs_the_suite_on_every_core_unless_told_otherwise():
    import doctest

    dev = load_file(REPO / "dev.py", "judgekit_dev_script")
    every_core_and_one = ["-n", str(dev._cores() + 1), "--dist", "worksteal"]
    assert dev._cores() >= 1
    assert dev._pytest_workers([]) == every_core_and_one
    assert dev._pytest_workers(["tests/graders", "-q"]) == every_core_and_one
    for chosen in (["-n", "0"], ["-n2"], ["--numprocesses=1"], ["--dist", "load"], ["-p", "no:xdist"]):
        assert dev._pytest_workers(chosen) == [], chosen
    failures, tried = doctest.testmod(dev)
    assert (failures, tried) == (0, 7)
    lock = (REPO / "requirements" / "lock.txt").read_text(encoding="utf-8")
    assert "\npytest-xdist==" in lock
    assert "\nexecnet==" in lock


def test_the_demo_installs_the_runtime_lock_and_everything_else_the_development_lock():
    dev = load_file(REPO / "dev.py", "judgekit_dev_script")
    assert dev.NEEDS == {"demo": "runtime", "test": "dev", "setup": "dev", "cycles": "dev"}
    assert dev.LOCKS == {
        "runtime": REPO / "requirements" / "runtime.txt",
        "dev": REPO / "requirements" / "lock.txt",
    }
    assert all(lock.is_file() for lock in dev.LOCKS.values())


def test_one_environment_serves_demo_and_test_in_either_order():
    dev = load_file(REPO / "dev.py", "judgekit_dev_script")
    digests = {"runtime": "r1", "dev": "d1"}
    # a fresh clone: each command installs its own lock
    assert dev.plan("runtime", None, digests) == "runtime"
    assert dev.plan("dev", None, digests) == "dev"
    # demo, then test: the development lock is installed over the runtime one
    assert dev.plan("dev", "runtime r1", digests) == "dev"
    # test, then demo: nothing is installed, nothing downgraded
    assert dev.plan("runtime", "dev d1", digests) is None
    assert dev.plan("dev", "dev d1", digests) is None
    assert dev.plan("runtime", "runtime r1", digests) is None
    # a stamp of the old dev.py (the development lock's digest alone) is a current development environment
    assert dev.plan("runtime", "d1", digests) is None
    assert dev.plan("dev", "d1", digests) is None
    # a lock changed: reinstall; a development environment stays one even for the demo
    assert dev.plan("runtime", "runtime r0", digests) == "runtime"
    assert dev.plan("dev", "dev d0", digests) == "dev"
    assert dev.plan("runtime", "dev d0", digests) == "dev"
    assert dev.plan("runtime", "d0", digests) == "dev"


def test_the_test_command_byte_compiles_judgekit_before_the_suite(monkeypatch):
    """With PYTHONDONTWRITEBYTECODE set, each judgekit process the tests start would compile it again."""
    dev = load_file(REPO / "dev.py", "judgekit_dev_script_steps")
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(dev, "setup", lambda needs: None)
    monkeypatch.setattr(dev, "_run", lambda *command: ran.append(tuple(map(str, command))))
    assert dev.main(["test", "-q"]) == 0
    compiled = next(i for i, c in enumerate(ran) if c[1:] == ("-m", "compileall", "-q", "src"))
    pytest_at = next(i for i, c in enumerate(ran) if c[1:3] == ("-m", "pytest"))
    assert compiled == pytest_at - 1
    assert ran[pytest_at][-1] == "-q"

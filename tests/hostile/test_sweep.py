"""The sweep scaffolding: batched bounded children, and each variant run once per session across workers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from hostile.sweep import Sweep, SweepStore, run_batch, wanted_by

KEYS = [f"v{i}" for i in range(10)]


def _log_and_act(variant: str, folder: Path, log: Path) -> list[str]:
    """Append ``variant pid`` to ``log``, then do what the variant's name says."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{variant} {os.getpid()} {folder.is_dir()}\n")
    if variant == "hang":
        time.sleep(60)
    if variant == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if variant == "raise":
        raise RuntimeError("boom")
    if variant == "memory":
        block = bytearray(200 * 1024 * 1024)  # over the 64 MiB bound: MemoryError
        return [f"allocated {len(block)}"]
    if variant == "set-env":
        os.environ["JUDGEKIT_SWEEP_LEAK"] = "1"
        os.chdir("/")
    if variant == "read-env":
        return [f"leaked {os.environ['JUDGEKIT_SWEEP_LEAK']}"] if "JUDGEKIT_SWEEP_LEAK" in os.environ else []
    if variant == "bad":
        return "not a list"  # type: ignore[return-value]
    return [] if not variant.startswith("fail") else [f"{variant} failed"]


def _batch(
    variants: list[str], tmp_path: Path, seconds: float = 10.0
) -> tuple[dict[int, list[str]], list[str]]:
    log = tmp_path / "log"
    results: dict[int, list[str]] = {}
    work = [(v, tmp_path / f"w{i}") for i, v in enumerate(variants)]
    run_batch(
        _log_and_act,
        work,
        (log,),
        seconds=[seconds] * len(work),
        mb=64,
        done=results.__setitem__,
    )
    return results, log.read_text(encoding="utf-8").splitlines()


def test_one_child_runs_the_whole_batch_in_order(tmp_path: Path) -> None:
    results, log = _batch(["a", "fail-b", "c"], tmp_path)
    assert results == {0: [], 1: ["fail-b failed"], 2: []}
    assert [line.split()[0] for line in log] == ["a", "fail-b", "c"]
    assert len({line.split()[1] for line in log}) == 1, "one child"
    assert {line.split()[1] for line in log} != {str(os.getpid())}, "not this process"
    assert all(line.split()[2] == "True" for line in log), "each variant gets its folder, made"


def test_a_variant_that_runs_over_is_a_timeout_and_a_new_child_runs_the_rest(tmp_path: Path) -> None:
    started = time.monotonic()
    results, log = _batch(["a", "hang", "b", "hang"], tmp_path, seconds=1.0)
    assert time.monotonic() - started < 20
    assert results[0] == results[2] == []
    assert results[1] == results[3] == ["timeout: no result within 1.0 s"]
    pids = [line.split()[1] for line in log]
    assert pids[0] == pids[1] != pids[2] == pids[3]


def test_a_child_that_dies_is_a_crash_and_the_rest_still_run(tmp_path: Path) -> None:
    results, log = _batch(["die", "a", "raise", "b"], tmp_path)
    assert results[0] == [f"crashed: exit code {-signal.SIGKILL}"]
    assert results[1] == results[3] == []
    assert results[2][0].startswith("raised RuntimeError: boom")
    assert [line.split()[0] for line in log] == ["die", "a", "raise", "b"]


def test_each_variant_has_its_own_memory_bound(tmp_path: Path) -> None:
    results, _ = _batch(["memory", "a", "memory"], tmp_path)
    assert results[0][0].startswith("raised MemoryError")
    assert results[2][0].startswith("raised MemoryError")
    assert results[1] == []


def test_a_variant_s_environment_and_folder_changes_end_with_it(tmp_path: Path) -> None:
    results, _ = _batch(["set-env", "read-env", "bad"], tmp_path)
    assert results[0] == results[1] == []
    assert "not a list of problems" in results[2][0]


def _counting_sweep(tmp_path: Path, batch: int = 3) -> Sweep[str]:
    return Sweep(
        name="counting",
        variants=KEYS,
        key=str,
        check=_log_and_act,
        seconds=10.0,
        mb=256,
        batch=batch,
    )


def _runs(log: Path) -> list[str]:
    return sorted(line.split()[0] for line in log.read_text(encoding="utf-8").splitlines())


def test_a_variant_asked_twice_runs_once_and_the_count_reruns_nothing(tmp_path: Path) -> None:
    sweep, log = _counting_sweep(tmp_path), tmp_path / "log"
    store = SweepStore(tmp_path / "store")
    assert store.problems(sweep, "v4", log) == []
    assert _runs(log) == ["v4", "v5", "v6"], "a batch: the variant and the next ones"
    again = SweepStore(tmp_path / "store")  # another worker of the session, or this one's next test
    assert again.problems(sweep, "v5", log) == []
    tally = again.tally(sweep, log)
    assert (tally.tried, tally.handled, tally.failures) == (10, 10, {})
    assert _runs(log) == sorted(KEYS), "each variant ran once"


def test_a_batch_holds_only_variants_the_session_wants(tmp_path: Path) -> None:
    sweep, log = _counting_sweep(tmp_path, batch=4), tmp_path / "log"
    store = SweepStore(tmp_path / "store", lambda _: {"v1", "v3", "v8"})
    assert store.problems(sweep, "v1", log) == []
    assert _runs(log) == ["v1", "v3", "v8"]


def _tally_in_a_child(root: Path, log: Path) -> None:
    tally = SweepStore(root).tally(_counting_sweep(root, batch=2), log)
    os._exit(0 if (tally.tried, tally.handled) == (10, 10) else 1)


def test_two_workers_counting_at_once_run_each_variant_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_tally_in_a_child, args=(tmp_path / "store", log)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert _runs(log) == sorted(KEYS)


def test_a_sweep_refuses_two_variants_with_one_key() -> None:
    with pytest.raises(ValueError, match="share a key"):
        Sweep(name="s", variants=["a", "a"], key=str, check=_log_and_act)


FIRST = Sweep(name="first", variants=["a", "b"], key=str, check=_log_and_act, bounded=False)
SECOND = Sweep(name="second", variants=["c", "d"], key=str, check=_log_and_act, bounded=False)


@FIRST.parametrize
def test_a_marked_variant_test(variant: str) -> None:
    assert variant in FIRST.variants


@FIRST.counted
@SECOND.counted
def test_a_count_test_of_two_sweeps() -> None:
    assert FIRST.name != SECOND.name


def test_a_count_test_of_several_sweeps_wants_every_variant_of_each(request: pytest.FixtureRequest) -> None:
    items = [i for i in request.session.items if i.nodeid.startswith(request.node.nodeid.split("::")[0])]
    variants = [i for i in items if i.name.startswith("test_a_marked_variant_test")]
    count = [i for i in items if i.name == "test_a_count_test_of_two_sweeps"]
    assert variants
    assert count
    assert wanted_by(variants)(FIRST) == {i.callspec.params["variant"] for i in variants}
    assert wanted_by(variants)(SECOND) == set()
    assert wanted_by(variants + count)(FIRST) is None
    assert wanted_by(variants + count)(SECOND) is None

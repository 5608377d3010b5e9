"""Whole output folders written at once (``judgekit.io.folders.StagedFolder``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.io.folders import StagedFolder, check_folder

MARK = ".made-by-test"


def staged(out: Path) -> StagedFolder:
    return StagedFolder(out, marker=MARK, marker_text="test\n", command="the test", kind="a test folder")


def test_a_new_folder_appears_whole_with_the_marker(tmp_path: Path) -> None:
    with staged(tmp_path / "a" / "out") as folder:
        folder.write("data/x.js", "x")
        assert not (tmp_path / "a" / "out").exists()  # nothing visible until the block ends
    assert (tmp_path / "a" / "out" / "data" / "x.js").read_text() == "x"
    assert (tmp_path / "a" / "out" / MARK).is_file()
    assert folder.files == [MARK, "data/x.js"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["out"]


def test_an_error_inside_leaves_the_earlier_folder_and_creates_no_parent(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with staged(out) as folder:
        folder.write("old.txt", "old")

    def fail_midway() -> None:
        with staged(out) as folder:
            folder.write("new.txt", "new")
            raise RuntimeError("found late")

    with pytest.raises(RuntimeError):
        fail_midway()
    assert sorted(p.name for p in out.iterdir()) == [MARK, "old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(RuntimeError), staged(tmp_path / "x" / "y" / "out"):
        raise RuntimeError("found late")
    assert not (tmp_path / "x").exists()


def test_an_os_error_inside_is_exit_2_naming_the_folder(tmp_path: Path) -> None:
    def full_disk() -> None:
        with staged(tmp_path / "out"):
            raise OSError(28, "No space left on device")

    with pytest.raises(JudgekitError, match=r"--out .*out: cannot write the folder: No space") as caught:
        full_disk()
    assert caught.value.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_a_folder_of_other_files_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(JudgekitError, match="is not a test folder the test wrote"):
        check_folder(tmp_path / "mine", marker=MARK, command="the test", kind="a test folder")
    with pytest.raises(JudgekitError, match="is not a test folder"), staged(tmp_path / "mine"):
        pass
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_a_symlink_to_a_folder_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real"
    with staged(real) as folder:
        folder.write("a.txt", "1")
    (tmp_path / "link").symlink_to(real)
    with staged(tmp_path / "link") as folder:
        folder.write("b.txt", "2")
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in real.iterdir()) == [MARK, "b.txt"]


def test_the_new_folder_has_the_ordinary_mode_not_the_staging_0700(tmp_path: Path) -> None:
    with staged(tmp_path / "out") as folder:
        folder.write("a.txt", "1")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask


def test_leftovers_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    """A staging folder of a process no longer alive (it was killed) is swept by the next run."""
    code = (
        "import os, sys; from judgekit.io.folders import StagedFolder\n"
        f"f = StagedFolder({str(tmp_path / 'out')!r}, marker={MARK!r}, marker_text='t', command='c')\n"
        "f.__enter__(); f.write('a.txt', 'x'); os._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 9
    assert [p.name.split("-")[1] for p in tmp_path.iterdir()] == ["staging"]
    with staged(tmp_path / "out") as folder:
        folder.write("a.txt", "y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_file_size_limit_midway_leaves_nothing(tmp_path: Path) -> None:
    """EFBIG from the kernel (RLIMIT_FSIZE in a child): exit 2 and no staging folder left."""
    code = (
        "import sys; from judgekit.io.folders import StagedFolder\n"
        "from judgekit.errors import JudgekitError\n"
        f"f = StagedFolder({str(tmp_path / 'out')!r}, marker={MARK!r}, marker_text='t', command='c')\n"
        "try:\n"
        "    with f: f.write('big.bin', 'x' * 100000)\n"
        "except JudgekitError as e: print(e); sys.exit(e.exit_code)\n"
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "big.bin: File too large" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_device_as_the_folder_is_named_as_a_device() -> None:
    """``view --out /dev/null``: the refusal says what the path is (a character device), not 'a file'."""
    with pytest.raises(JudgekitError, match=r"--out /dev/null: is a character device, not a folder") as info:
        check_folder("/dev/null", marker=MARK, command="judgekit view")
    assert info.value.exit_code == 2

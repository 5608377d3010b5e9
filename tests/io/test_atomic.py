import json
import os
import subprocess
import sys
import textwrap

import pytest

from judgekit.errors import JudgekitError
from judgekit.io.atomic import (
    LineAppender,
    append_whole,
    create_new,
    repair_tail,
    write_atomic,
    write_atomic_making_folder,
)


def test_write_atomic_replaces_whole_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    write_atomic(target, "new content\n")
    assert target.read_text() == "new content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_write_atomic_creates_a_missing_folder(tmp_path):
    # issue 35: `--out results/x.md` in a fresh clone used to fail with "folder results does not exist"
    write_atomic(tmp_path / "nope" / "deeper" / "x.json", "{}")
    assert (tmp_path / "nope" / "deeper" / "x.json").read_text() == "{}"


class _DiskFull:
    """Blocks whose reading fails as a full disk fails a write, after the folders were made."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> bytes:
        raise OSError(28, "No space left on device")


def test_a_failed_write_removes_the_folders_it_made_and_only_those(tmp_path):
    (tmp_path / "kept").mkdir()
    with pytest.raises(JudgekitError, match="No space left on device"):
        write_atomic(tmp_path / "kept" / "new" / "newer" / "x.bin", _DiskFull(), redact=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    assert list((tmp_path / "kept").iterdir()) == []


def test_appenders_and_new_files_create_a_missing_folder(tmp_path):
    with LineAppender(tmp_path / "results" / "r.jsonl") as out:
        out.write_line("{}")
    append_whole(tmp_path / "cassettes" / "c.jsonl", "{}\n")
    create_new(tmp_path / "keys" / "k", "secret\n")
    assert [(tmp_path / f).is_file() for f in ("results/r.jsonl", "cassettes/c.jsonl", "keys/k")] == [
        True
    ] * 3


def test_a_folder_that_cannot_be_made_names_the_output(tmp_path):
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(JudgekitError) as caught:
        write_atomic(tmp_path / "taken" / "x.md", "x")
    assert str(caught.value) == (
        f"{tmp_path / 'taken'}: cannot create the folder for {tmp_path / 'taken' / 'x.md'}: File exists; "
        "give an output path in a folder that exists or can be created"
    )
    assert caught.value.exit_code == 2


def test_appender_writes_whole_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    with LineAppender(path) as out:
        out.write_line('{"a": 1}')
        out.write_line(b'{"a": 2}\n')
    assert path.read_text().splitlines() == ['{"a": 1}', '{"a": 2}']
    with LineAppender(path) as out:
        out.write_line('{"a": 3}')
    assert len(path.read_text().splitlines()) == 3


def test_appender_refuses_embedded_newline(tmp_path):
    with LineAppender(tmp_path / "r.jsonl") as out, pytest.raises(ValueError, match="newline"):
        out.write_line("a\nb")


def test_second_writer_is_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    # flock locks are per open file description: a second open in the same process conflicts too.
    with (
        LineAppender(path),
        pytest.raises(JudgekitError, match="another process is writing"),
        LineAppender(path),
    ):
        pass


def test_repair_tail_drops_truncated_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3, "b"')
    repaired = repair_tail(path)
    assert repaired
    assert repaired.line == 3
    assert repaired.dropped == b'{"a": 3, "b"'
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'
    assert not repair_tail(path)


def test_repair_tail_single_partial_line_and_missing_file(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"partial')
    assert repair_tail(path).line == 1
    assert path.read_bytes() == b""
    assert not repair_tail(tmp_path / "absent.jsonl")


def test_repair_tail_long_line_across_blocks(tmp_path):
    path = tmp_path / "r.jsonl"
    head = b"x" * 100_000 + b"\n"
    path.write_bytes(head + b"y" * 200_000)
    assert repair_tail(path).line == 2
    assert path.read_bytes() == head


def test_killed_writer_leaves_only_whole_lines_or_one_partial(tmp_path):
    # A child appends big lines as fast as it can and is killed with SIGKILL; every complete line parses.
    path = tmp_path / "r.jsonl"
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from judgekit.io.atomic import LineAppender
        with LineAppender(Path({str(path)!r})) as out:
            i = 0
            while True:
                out.write_line(json.dumps({{"i": i, "pad": "z" * 50000}}))
                i += 1
                if i == 20:
                    print("ready", flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    proc.kill()
    proc.wait()
    repair_tail(path)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    numbers = [json.loads(line)["i"] for line in lines[:-1]]
    assert numbers == list(range(len(numbers)))
    assert len(numbers) >= 20
    assert os.path.getsize(path) == sum(len(line) + 1 for line in lines[:-1])


def test_write_atomic_uses_ordinary_file_modes(tmp_path):
    import stat

    fresh = tmp_path / "report.html"
    write_atomic(fresh, "<p>hi</p>")
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask
    kept = tmp_path / "private.json"
    kept.write_text("{}", encoding="utf-8")
    kept.chmod(0o640)
    write_atomic(kept, "[]")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    assert kept.read_text(encoding="utf-8") == "[]"


def test_files_named_as_text(tmp_path):
    target = tmp_path / "out.txt"
    write_atomic(str(target), "whole\n")
    assert target.read_text() == "whole\n"
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a": 1}\n{"cut')
    repair_tail(str(log))
    assert log.read_bytes() == b'{"a": 1}\n'
    with LineAppender(str(log)) as out:
        out.write_line('{"b": 2}')
    assert log.read_text().splitlines() == ['{"a": 1}', '{"b": 2}']


# --- Issue 33: the one redacting writer, written where the user meant --------------------------------------

AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


def test_write_atomic_redacts_text_and_utf8_bytes_but_not_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-value-12345")
    write_atomic(tmp_path / "a.md", f"key {AWS_KEY} and tok-value-12345\n")
    assert (tmp_path / "a.md").read_text() == "key [REDACTED] and [REDACTED]\n"
    write_atomic(tmp_path / "b.json", f'{{"k": "{AWS_KEY}"}}'.encode())
    assert json.loads((tmp_path / "b.json").read_text()) == {"k": "[REDACTED]"}
    binary = b"\xff\xfe" + AWS_KEY.encode()
    write_atomic(tmp_path / "c.bin", binary)
    assert (tmp_path / "c.bin").read_bytes() == binary
    write_atomic(tmp_path / "d.bin", AWS_KEY.encode(), redact=False)
    assert (tmp_path / "d.bin").read_bytes() == AWS_KEY.encode()


def test_write_atomic_redacts_escaped_json_inside_a_js_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk/with/slashes-0123456789")
    doc = {"a": "sk/with/slashes-0123456789", "b": "sk-ant-" + "x" * 24, "c": "plain / text"}
    text = json.dumps(doc).replace("/", "\\/").replace("-", "\\u002d")
    write_atomic(tmp_path / "chunk.js", f"window.X = {text};\n")
    written = (tmp_path / "chunk.js").read_text()
    assert "slashes" not in written
    assert "xxxxxxxx" not in written
    loaded = json.loads(written.removeprefix("window.X = ").removesuffix(";\n"))
    assert loaded == {"a": "[REDACTED]", "b": "[REDACTED]", "c": "plain / text"}


def test_write_atomic_follows_a_symlink_and_keeps_it(tmp_path):
    real = tmp_path / "real.md"
    real.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "later.md")
    write_atomic(dangling, "made")
    assert dangling.is_symlink()
    assert (tmp_path / "later.md").read_text() == "made"


@pytest.mark.parametrize("kind", ["fifo", "folder", "char device"])
def test_write_atomic_refuses_what_is_not_a_regular_file(tmp_path, kind):
    if kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
        what = "a named pipe"
    elif kind == "folder":
        target = tmp_path / "dir"
        target.mkdir()
        what = "a folder"
    else:
        target = tmp_path / "null-link"
        target.symlink_to("/dev/null")  # a symlink to a device: the device is what would be replaced
        what = "a character device"
    with pytest.raises(JudgekitError, match=what) as caught:
        write_atomic(target, "x")
    assert caught.value.exit_code == 2
    assert os.path.exists("/dev/null")
    assert os.stat("/dev/null").st_mode & 0o170000 == 0o020000
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_line_appender_redacts_and_refuses_a_fifo(tmp_path):
    path = tmp_path / "r.jsonl"
    with LineAppender(path) as out:
        out.write_line(json.dumps({"t": AWS_KEY}))
    assert json.loads(path.read_text()) == {"t": "[REDACTED]"}
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(JudgekitError, match="named pipe"), LineAppender(fifo):
        pass


def test_write_atomic_making_folder_creates_the_folders_and_names_one_it_cannot(tmp_path):
    path = tmp_path / "records" / "bias" / "r.json"
    assert write_atomic_making_folder(str(path), "{}\n", what="bias report") == path
    assert path.read_text() == "{}\n"
    write_atomic_making_folder(path, "[]\n", what="bias report")  # the folder exists: replaced whole
    assert path.read_text() == "[]\n"
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(JudgekitError) as caught:
        write_atomic_making_folder(tmp_path / "taken" / "r.json", "{}", what="calibration record")
    assert str(caught.value).startswith(
        f"{tmp_path / 'taken'}: cannot create the folder for the calibration record: "
    )
    assert caught.value.exit_code == 2


def test_write_atomic_pieces_redacts_each_piece_and_a_failed_piece_keeps_the_old_file(tmp_path, monkeypatch):
    from judgekit.io.atomic import write_atomic_pieces

    secret = "acme-" + "k" * 30
    monkeypatch.setenv("ACME_API_KEY", secret)
    target = tmp_path / "out" / "report.json"
    write_atomic_pieces(target, iter(["a ", secret, " b\n", "sk-" + "x" * 20 + "\n"]))
    assert target.read_text() == "a [REDACTED] b\n[REDACTED]\n"

    def broken():
        yield "new text\n"
        raise RuntimeError("rendering failed")

    with pytest.raises(RuntimeError, match="rendering failed"):
        write_atomic_pieces(target, broken())
    assert target.read_text() == "a [REDACTED] b\n[REDACTED]\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]
    fresh = tmp_path / "new" / "deeper" / "report.json"
    with pytest.raises(RuntimeError):
        write_atomic_pieces(fresh, broken())
    assert not (tmp_path / "new").exists()

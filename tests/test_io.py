"""ragworkbook._io: atomic writes survive kill -9; concurrent read-merge-write loses nothing; an output is
never one of the inputs; pipes are read, and one nothing writes to is refused in time."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragworkbook._io import (
    as_regular_file,
    atomic_write_json,
    atomic_write_text,
    check_not_input,
    is_pipe,
    locked_update,
    read_input,
)

WRITER = r"""
import sys
from ragworkbook._io import atomic_write_text
path, size = sys.argv[1], int(sys.argv[2])
i = 0
while True:
    i += 1
    atomic_write_text(path, (str(i % 10) * size) + "\n")
"""


def test_kill_9_at_random_points_never_leaves_a_truncated_file(tmp_path):
    """Trials of a writer killed at random moments: the file is always one whole version, and the
    temporary files the killed writers left are removed by the next write."""
    target = tmp_path / "report.json"
    size = 2_000_000
    atomic_write_text(target, "0" * size + "\n")
    rng = random.Random(0)
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(size)])
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = target.read_text()
        assert len(text) == size + 1 and text == text[0] * size + "\n", "a torn or truncated file"
    atomic_write_text(target, "done\n")
    assert target.read_text() == "done\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_live_writers_temporary_file_is_kept(tmp_path):
    target = tmp_path / "f.txt"
    live = tmp_path / f".f.txt.{os.getppid()}.abc.tmp"  # the parent process is alive
    dead = tmp_path / ".f.txt.999999999.abc.tmp"
    live.write_text("x")
    dead.write_text("x")
    atomic_write_text(target, "y")
    assert live.exists() and not dead.exists()


def test_writing_over_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory; give a file path"):
        atomic_write_json(tmp_path, {"a": 1})


def _add_entries(path: str, who: str, n: int) -> None:
    def read(p):
        return json.loads(p.read_text()) if p.exists() else {}

    for i in range(n):
        locked_update(path, read, lambda d, i=i: {**d, f"{who}-{i}": i}, atomic_write_json)


def test_two_processes_adding_to_one_file_lose_nothing(tmp_path):
    path = str(tmp_path / "cache.json")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_entries, args=(path, who, 200)) for who in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    data = json.loads((tmp_path / "cache.json").read_text())
    assert len(data) == 400 and {f"a-{i}" for i in range(200)} <= data.keys()


# --- inputs: never overwritten, pipes read (or refused in time) -------------------------------------------


def test_check_not_input_refuses_the_same_file_by_any_name(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("x")
    (tmp_path / "sym.jsonl").symlink_to(src)
    os.link(src, tmp_path / "hard.jsonl")
    for out in (src, tmp_path / "sym.jsonl", tmp_path / "hard.jsonl", tmp_path / "." / "in.jsonl"):
        with pytest.raises(ValueError, match=r"--out .* is the input given as --answers"):
            check_not_input(out, {"--answers": src, "--qrels": None})
    check_not_input(tmp_path / "report.json", {"--answers": src, "--qrels": None})  # another file: fine
    check_not_input(tmp_path / "new.json", {"--eval-set": tmp_path / "missing.json"})


def _fifo_with(tmp_path, content):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    if content is not None:
        def write():
            with open(path, "wb") as fh:
                fh.write(content)
        threading.Thread(target=write, daemon=True).start()
    return path


def test_read_input_reads_a_pipe_and_refuses_a_silent_one_in_time(tmp_path):
    path = _fifo_with(tmp_path, b"a\nb\n")
    assert is_pipe(path) and not is_pipe(tmp_path) and not is_pipe(tmp_path / "missing")
    assert read_input(path) == b"a\nb\n"
    silent = tmp_path / "silent"
    os.mkfifo(silent)
    t = time.monotonic()
    with pytest.raises(TimeoutError, match=r"silent: a pipe that nothing wrote to within 0.2 s"):
        read_input(silent, wait=0.2)
    assert time.monotonic() - t < 5
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_input(tmp_path / "missing")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        read_input(tmp_path)


def test_as_regular_file_copies_a_pipe_and_cleans_up(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with as_regular_file(plain) as p:
        assert p == plain
    with as_regular_file(_fifo_with(tmp_path, b"q1 0 d1 1\n")) as p:
        assert p.read_bytes() == b"q1 0 d1 1\n" and not is_pipe(p)
        copy = Path(p)
    assert not copy.exists()

"""Files that outlive a crash and a crowd: recordings and judge caches under kill -9 at random
points (never a truncated or unreadable file, no temporary file after the next write), and two
processes adding to one file at the same time (nothing lost).

The writers run in subprocesses (``python -c``) with the test fakes on the path; no model is loaded.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragworkbook.judging.judge import Judge
from ragworkbook.llm.replay import Recording

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

#: A recording writer: answers of ~40 kB each (with a padded prompt), recorded one after the other;
#: each write rewrites the whole file, so a kill lands inside a write often. Prints after each.
RECORD = r"""
import sys
exec(sys.argv[5])  # the disk: "" as it is, or SLOW_DISK
from fakes.generators import Echo
from ragworkbook.llm.replay import RecordingGenerator
path, who, n, pad = sys.argv[1], sys.argv[2], int(sys.argv[3]), "x" * int(sys.argv[4])
rec = RecordingGenerator(Echo(), path)
for i in range(n):
    rec.chat(f"{who} question {i} {pad}")
    print(i, flush=True)
"""

#: A judge-cache writer: one judge, distinct questions, each (padded) answer cached on disk.
CACHE = r"""
import json, sys
exec(sys.argv[5])  # the disk: "" as it is, or SLOW_DISK
sys.modules["rfc3987_syntax"] = None  # jsonschema then skips a format checker that takes seconds to import
from ragworkbook.judging.judge import Judge
from ragworkbook.llm.base import Generator
SCHEMA = {"type": "object", "properties": {"said": {"type": "string"}}, "required": ["said"]}
class Parrot(Generator):
    backend = "parrot"
    def _chat_once(self, messages, options, schema):
        return json.dumps({"said": messages[-1]["content"]})
path, who, n, pad = sys.argv[1], sys.argv[2], int(sys.argv[3]), "y" * int(sys.argv[4])
judge = Judge(Parrot("parrot-1"), cache_path=path)
for i in range(n):
    c = judge.call("say", f"{who} {i} {pad}", SCHEMA)
    assert c.ok, c.error
    print(i, flush=True)
"""


#: A slow disk: every fsync takes 0.3 s, so a kill soon after an entry lands inside the next write
#: (between the temporary file's creation and its rename) most of the time.
SLOW_DISK = "import os, time\n_fsync = os.fsync\nos.fsync = lambda fd: (time.sleep(0.3), _fsync(fd))[1]"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), env.get("PYTHONPATH", "")])
    return env


def _start(script: str, *args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _count_recording(path: Path) -> int:
    return len(Recording(path)) if path.exists() else 0  # Recording() checks every entry


def _count_cache(path: Path) -> int:
    from fakes.generators import Echo

    return len(Judge(Echo(), cache_path=path)._cache) if path.exists() else 0  # checks every entry


KINDS = {"recording": (RECORD, _count_recording), "judge cache": (CACHE, _count_cache)}


@pytest.mark.parametrize("kind", list(KINDS))
def test_kill_9_at_random_points_never_leaves_a_broken_file(tmp_path, kind):
    script, count = KINDS[kind]
    path = tmp_path / "file.json"
    rng = random.Random(7)
    seen = torn = 0
    for trial in range(12):
        slow = trial % 2 == 1
        proc = _start(script, path, f"t{trial}", 10_000, 50_000, SLOW_DISK if slow else "")
        for _ in range(rng.randint(1, 4)):  # let it write a few entries, then kill it at a random moment
            assert proc.stdout.readline(), proc.stderr.read()
        time.sleep(rng.uniform(0.05, 0.25) if slow else rng.uniform(0, 0.02))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        torn += bool(_temps(tmp_path))  # the kill landed inside a write: its temporary file is left
        n = count(path)  # loads and checks the whole file: a torn write would fail here
        assert n >= seen, f"trial {trial}: {seen} entries before the kill, {n} after"
        seen = n
    assert torn >= 1, "no kill landed inside a write: the test proved nothing about them"
    print(f"{kind}: {torn} of 12 kills landed inside a write")
    # the next run (a writer that finishes) removes what the killed ones left behind
    done = _start(script, path, "last", 1, 10, "")
    assert done.wait(timeout=120) == 0, done.stderr.read()
    assert count(path) == seen + 1
    assert _temps(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.json"]  # no lock file either


@pytest.mark.parametrize("kind", list(KINDS))
def test_two_processes_adding_to_one_file_lose_nothing(tmp_path, kind):
    script, count = KINDS[kind]
    path = tmp_path / "shared.json"
    procs = [_start(script, path, who, 200, 0, "") for who in ("a", "b")]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert count(path) == 400
    if kind == "recording":
        # no prompt is recorded (format 2); Echo's answer is its prompt reversed
        prompts = {e["text"].rsplit(" (seed", 1)[0][::-1].strip() for e in Recording(path).entries.values()}
        assert prompts == {f"{who} question {i}" for who in "ab" for i in range(200)}
    else:
        doc = json.loads(path.read_text(encoding="utf-8"))
        said = {json.loads(e["text"])["said"].strip() for e in doc["entries"].values()}
        assert said == {f"{who} {i}" for who in "ab" for i in range(200)}

"""Rewrite recordings as format 2: no prompt in any entry, only the hash of its request.

A format-1 recording (``"format": "ragworkbook-recording/1"``) stored each request's messages
(questions and contexts, often from public data sets such as WikiEval or RAGChecker) beside the
answer. Format 2 keeps only the request's hash (the entry's key, which already covered the
messages, options, schema and model), the answer, its usage and what replay needs
(:mod:`ragworkbook.llm.replay`). Replay reads format-1 files too (converting on read), so
migrating is not required to replay; it is how a file stops carrying the prompts.

Each file is read and checked as replay reads it (every entry's shape and checksum: an answer
edited by hand is refused, not migrated), then rewritten atomically with the package's own code
(:func:`ragworkbook.llm.replay.migrate`). Answers, usage and times never change: ``--check``
replays every entry of the new file against the old one and compares the answers byte for byte.
Entries of one's own format-1 file recorded before checksums existed get one here.

    python scripts/migrate_recordings.py            # every bundled recording
    python scripts/migrate_recordings.py FILE...    # these files (your own recordings)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragworkbook.llm.replay import FORMAT, Recording, bundled_dir, migrate


def _replayed(entry: dict) -> tuple:
    """What replay gives for an entry (text or error, attempts, raw outputs, tries, usage, model)."""
    return (entry.get("text"), entry.get("error"), entry.get("attempts", 1),
            entry.get("raw_outputs", [entry.get("text")]), entry.get("tries"), entry.get("usage"),
            entry.get("backend"), entry.get("model"), entry.get("options"), entry.get("recorded_at"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path,
                        help="recordings to migrate (default: every bundled recording)")
    args = parser.parse_args(argv)
    files = args.files or sorted(bundled_dir().glob("*.json"))
    if not files:
        print(f"no recordings in {bundled_dir()}", file=sys.stderr)
        return 2
    failed = 0
    for path in files:
        try:
            before_bytes = path.stat().st_size
            before = Recording(path, require_checksums=False)  # converted on read: what replay serves
            fmt, added = migrate(path)
            after = Recording(path)  # format 2: every entry has its checksum now
        except (OSError, ValueError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        if set(after.entries) != set(before.entries) or any(
                _replayed(after.entries[k]) != _replayed(e) for k, e in before.entries.items()):
            print(f"{path}: the migrated file does not replay the same answers; restore it from git",
                  file=sys.stderr)
            failed += 1
            continue
        what = "already format 2" if fmt == 2 else f"format {fmt} -> 2"
        extra = f", {added} entries given the checksum they lacked" if added else ""
        print(f"{path.name}: {len(after)} entries, {what}{extra}, {before_bytes:,} -> "
              f"{path.stat().st_size:,} bytes")
    if failed:
        print(f"{failed} file(s) not migrated (see above); the expected format is {FORMAT}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

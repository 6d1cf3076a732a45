"""Give every entry of the bundled recordings its checksum, changing nothing else.

A bundled recording (``ragworkbook/data/recordings/*.json``) must carry a checksum in every
entry (:mod:`ragworkbook.llm.replay`): an edited answer is caught by its checksum, and one whose
checksum was deleted is caught because it has none. Entries recorded before checksums existed
get theirs here, with the package's own code
(:func:`ragworkbook.llm.replay.add_checksums`): each file is loaded and checked (every entry's
shape, the checksums already there), its text must be exactly what the recorder writes, and
the only change is a ``"checksum"`` line in each entry that had none. Answers never change:
``--check`` verifies it afterwards by comparing each file, with its ``"checksum"`` lines taken
out, against ``git show HEAD:<file>`` likewise stripped.

Run it after adding or merging recordings made by another branch::

    python scripts/checksum_recordings.py            # every bundled recording
    python scripts/checksum_recordings.py FILE...    # these files
    python scripts/checksum_recordings.py --check    # also: only checksum lines differ from HEAD
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from ragworkbook.llm.replay import Recording, add_checksums, bundled_dir


def _without_checksums(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith('"checksum": ')]


def _same_but_checksums(path: Path) -> bool | None:
    """Whether ``path`` equals its committed version once the checksum lines are taken out of both
    (None when git has no committed version of it)."""
    root = Path(__file__).resolve().parents[1]
    rel = path.resolve().relative_to(root)
    shown = subprocess.run(["git", "show", f"HEAD:{rel.as_posix()}"], cwd=root, capture_output=True,
                           text=True, check=False)
    if shown.returncode != 0:
        return None
    return _without_checksums(shown.stdout) == _without_checksums(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*",
                    help="recordings (default: every file in ragworkbook/data/recordings)")
    ap.add_argument("--check", action="store_true",
                    help="afterwards, check that only checksum lines differ from the committed files")
    args = ap.parse_args(argv)
    files = [Path(f) for f in args.files] or sorted(bundled_dir().glob("*.json"))
    status = 0
    for path in files:
        added = add_checksums(path)
        rec = Recording(path, require_checksums=True)  # reloads: every entry has a valid checksum now
        line = f"{path.name}: {len(rec)} entries, {added} checksums added"
        if args.check:
            same = _same_but_checksums(path)
            line += {True: "; only checksum lines differ from HEAD", None: "; not committed yet",
                     False: "; DIFFERS from HEAD beyond checksum lines"}[same]
            status |= same is False
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())

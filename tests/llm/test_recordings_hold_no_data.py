"""The bundled recordings hold no copy of a public data set (issue 28): every one is format 2 (no
prompt, only its request's hash), and no line of WikiEval, RAGChecker's meta-evaluation or RAGTruth
longer than 40 characters appears in any of them, as a line of the file or of a text field in it.

The one exception is named below, entry by entry: a judge's recorded *answer* that quotes a sentence of
what it judged (faithfulness's first step lists the answer's statements, and the small model copies
some word for word). Replay must give that answer byte for byte, so it stays; no prompt is kept."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragworkbook.datasets import fetch
from ragworkbook.llm.replay import FORMAT, Recording, bundled_dir

SETS = ("wikieval", "ragchecker", "ragtruth")
MIN = 41  # longer than 40 characters
#: recorded answers (their "text" and "raw_outputs") that quote a line of WikiEval, by file and entry key
ANSWERS_THAT_QUOTE = {
    "judge_check_wikieval_faithfulness.json": {
        "2b3851c3616c3bcf929fe2f087bfe61db78870644a01897579c8f917c31a71b1",
        "4beb2e785ae4a50d153fb9bcd61d17e22517df6c13188701daae4f4c79f7c5cc",
        "7dfb3d51c80cd56e5b5d58b8b61f907572078aa6e4d2329e04ab65a3995b5825",
        "b4a8c360b3c968a53a5ce5b9f426f83058e2a6b34ba630bbd90416f073828883",
        "b7db62a1b9e3cf02d30411d2491fd9702383b346bcd6919d441f0eb61b4459e8",
    },
}
ANSWER_FIELDS = ("text", "raw_outputs")


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _text_fields(path: Path) -> Iterator[str]:
    """The text in a data file's fields: CSV cells, JSON or JSON Lines string values."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".csv":
        for row in csv.reader(text.splitlines(keepends=True)):
            yield from row
    elif path.suffix == ".json":
        yield from _strings(json.loads(text))
    elif path.suffix == ".jsonl":
        for line in text.splitlines():
            if line.strip():
                yield from _strings(json.loads(line))


def data_lines(paths: list[Path]) -> set[str]:
    """Every line longer than 40 characters of the data files (their licences aside): the file's own
    lines and the lines of each text field, stripped."""
    lines: set[str] = set()
    for path in paths:
        for chunk in (path.read_text(encoding="utf-8"), *_text_fields(path)):
            lines.update(s for s in (line.strip() for line in chunk.splitlines()) if len(s) >= MIN)
    return lines


def recording_text(path: Path) -> str:
    """The file as written and every string in it, JSON escapes undone (a quoted line is found too)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join([path.read_text(encoding="utf-8"), *_strings(doc), *_strings(list(doc["entries"]))])


def copied_lines(text: str, lines: set[str]) -> list[str]:
    """The ``lines`` found in ``text``: a line longer than 40 characters is in ``text`` only if its first
    40 characters are, so only those candidates are searched whole."""
    windows = {text[i:i + 40] for i in range(len(text) - 39)}
    return sorted(line for line in lines if line[:40] in windows and line in text)


@pytest.mark.datasets(*SETS)
def test_no_bundled_recording_holds_a_line_of_a_public_data_set():
    paths = [p for name in SETS for f, p in fetch(name, progress=False).items() if p.suffix in
             (".csv", ".json", ".jsonl")]
    assert len(paths) == 9
    lines = data_lines(paths)
    assert len(lines) > 10_000  # the check has something to find
    files = sorted(bundled_dir().glob("*.json"))
    assert len(files) >= 14
    quoting: dict[str, set[str]] = {}
    for path in files:
        found = copied_lines(recording_text(path), lines)
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
        for line in found:
            holders = {(key, name) for key, entry in entries.items() for name, value in entry.items()
                       if line in "\n".join(_strings(value))}
            outside = sorted(h for h in holders if h[1] not in ANSWER_FIELDS
                             or h[0] not in ANSWERS_THAT_QUOTE.get(path.name, set()))
            assert not outside, (f"{path.name} holds a line of a public data set ({len(line)} characters) in "
                                 f"{outside[:3]}; migrate it: python scripts/migrate_recordings.py")
            quoting.setdefault(path.name, set()).update(key for key, _ in holders)
    assert quoting == ANSWERS_THAT_QUOTE  # a re-recorded answer that no longer quotes leaves the list


def test_the_check_finds_a_copied_line_escaped_or_not():
    line = 'A line of a data set, "quoted", and long enough to count.'
    entry = {"messages": [{"role": "user", "content": "Context:\n" + line + "\nQuestion?"}]}
    assert copied_lines(json.dumps(entry), {line}) == []  # escaped as JSON: not in the raw text
    assert copied_lines("\n".join([json.dumps(entry), *_strings(entry)]), {line}) == [line]
    assert copied_lines("\n".join(_strings(entry)), {line + "!"}) == []


def test_every_bundled_recording_is_format_2():
    for path in sorted(bundled_dir().glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["format"] == FORMAT, path.name
        assert Recording(path).source_format == 2
        for key, entry in doc["entries"].items():
            assert len(key) == 64 and not {"messages", "schema"} & set(entry), (path.name, key)

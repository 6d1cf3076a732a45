"""ragworkbook._text: two long values cut to where they differ."""

from __future__ import annotations

import json

from ragworkbook._text import differing_parts


def test_the_differing_part_is_shown_not_the_common_prefix():
    old = json.dumps({"backend": "ollama", "identity": "ollama@http://127.0.0.1:11434", "model": "qwen3:4b",
                      "prompt": "x" * 200})
    new = old.replace("11434", "40633")
    a, b = differing_parts(old, new)
    assert "11434" in a and "40633" in b and "127.0.0.1:" in a
    assert a.startswith("...") and a.endswith("...") and len(a) <= 66


def test_short_values_are_kept_whole_and_tails_show():
    assert differing_parts("embedded", "ollama") == ("embedded", "ollama")
    a, b = differing_parts("sha256:" + "a" * 70 + "1", "sha256:" + "a" * 70 + "2")
    assert a.endswith("1") and b.endswith("2") and a.startswith("...")
    a, b = differing_parts("x" * 100, "x" * 100 + "tail")
    assert b.endswith("tail") and not a.endswith("tail")

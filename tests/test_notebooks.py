"""The committed notebooks read well before they run: executed cells, saved widget state, stated skips."""

from __future__ import annotations

import json
import re

import pytest

from ragworkbook.paths import repo_root

NOTEBOOKS = sorted((repo_root() / "notebooks").glob("*.ipynb"))


def test_the_course_is_numbered_without_gaps():
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers == list(range(len(NOTEBOOKS)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_committed_notebook_shows_what_a_run_shows(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert all(c.get("execution_count") is not None for c in code), "a code cell was never executed"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, "a saved output is an error"
    views = [o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
             for c in code for o in c.get("outputs", [])
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    missing = [m for m in views if m not in state.get("state", {})]
    assert not missing, "widget outputs without saved widget state: execute with store_widget_state"
    for c in code:
        source = "".join(c["source"])
        if re.search(r"^\s*#\s*NBVAL_SKIP\s*$", source, re.MULTILINE):
            assert re.search(r"^\s*#\s*skip reason:\s*\S", source, re.MULTILINE), "a skip without a reason"

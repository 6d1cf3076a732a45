"""``ragworkbook report FILE --html OUT``: one self-contained page (nothing fetched), every number from the
report, every text escaped; written atomically, never over its input."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fakes.judges import CARBON, RuleJudge

from ragworkbook.cli import main
from ragworkbook.evaluation.html_report import render_html
from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.evaluation.report import Report

CARD = {"status": "measured", "judge": "fake:rule-judge", "model": "rule-judge", "metric": "faithfulness",
        "dataset": "wikieval-faithfulness", "n": 50, "n_pairs": 50,
        "kappa": {"value": 0.81, "low": 0.66, "high": 0.92, "method": "bootstrap"},
        "pairwise_accuracy": {"value": 0.86, "low": 0.76, "high": 0.94, "n": 50},
        "baseline": {"name": "word overlap", "pairwise_accuracy": {"value": 0.7},
                     "difference": {"value": 0.16, "low": 0.04, "high": 0.28}, "p_value": 0.01,
                     "verdict": "judge better"}}
EVIL = "<script>alert('x')</script> & <b>bold</b>"


class Page(HTMLParser):
    """Every tag with its attributes, the text of each table (by id) as rows of cells, and all text."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.text: list[str] = []
        self._table = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id", f"t{len(self.tables)}"), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _report(tmp_path) -> Path:
    records = [
        {"id": "carbon", "question": CARBON.question, "answer": CARBON.answer, "contexts": CARBON.contexts,
         "reference": CARBON.reference},
        {"id": "evil", "question": "What does the EU tax?", "answer": EVIL, "contexts": [CARBON.contexts[0]]},
    ]
    report = evaluate_outputs(records, judge=RuleJudge(), metrics=["faithfulness", "hallucination",
                                                                   "context_recall", "token_f1"],
                              progress=False, judge_reliability=CARD, name="carbon run")
    return report.save(tmp_path / "report.json")


def _page(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_the_page_holds_the_report_and_fetches_nothing(tmp_path, capsys):
    src = _report(tmp_path)
    out = tmp_path / "site" / "report.html"
    assert main(["report", str(src), "--html", str(out)]) == 0
    assert f"HTML report written to {out}" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    page = _page(html)
    report = Report.load(src)
    # self-contained: no script, no external resource of any kind
    names = {t for t, _ in page.tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "base"}
    for _, attrs in page.tags:
        assert not {"src", "href", "srcset", "action"} & set(attrs)
    assert "url(" not in html and "@import" not in html and "http://" not in html.replace(
        "http://www.w3.org/2000/svg", "") and "https://" not in html
    # the scores: each metric's mean and interval as the report has them
    scores = {row[0]: row for row in page.tables["scores"][1:]}
    assert list(scores) == report.metrics
    for m, a in report.aggregates.items():
        row = scores[m]
        assert row[1] == (f"{a.mean:.3f}" if a.n else "–")
        assert row[2] == (f"[{a.ci_low:.3f}, {a.ci_high:.3f}]" if a.n else "–")
        assert row[4:7] == [str(a.n), str(a.failed), str(a.undefined)]
    assert "1 undefined (no_reference)" in scores["context_recall"][7]
    # the judge's card: agreement with humans and the baseline
    judge = {row[0]: row for row in page.tables["judge"][1:]}
    assert "kappa 0.81 [0.66, 0.92]" in judge["faithfulness"][2]
    assert "word overlap: judge − baseline +0.160 [+0.040, +0.280]" in judge["faithfulness"][3]
    assert judge["faithfulness"][4] == "trusted"
    assert judge["context_recall"][1] == "unmeasured" and "not rated" in judge["context_recall"][4]
    # the ledger
    ledger = {row[0]: row for row in page.tables["ledger"][1:]}
    total = report.meta["judge_ledger"]["total"]
    assert ledger["total"][1:5] == [str(total[k]) for k in ("requests", "calls", "failed", "cache_hits")]
    assert "from the judgments of faithfulness" in ledger["hallucination"][1]
    # one row per question; the hostile answer is text, not markup
    rows = page.tables["rows"]
    assert [r[0] for r in rows[1:]] == ["carbon", "evil"]
    assert EVIL in "".join(page.text)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_it_is_written_atomically_and_never_over_the_report(tmp_path, capsys):
    src = _report(tmp_path)
    out = tmp_path / "report.html"
    out.write_text("old", encoding="utf-8")
    assert main(["report", str(src), "--html", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.html")]  # no temp left
    before = src.read_bytes()
    assert main(["report", str(src), "--html", str(src)]) == 2
    assert "--html" in capsys.readouterr().err and src.read_bytes() == before


def test_without_html_it_prints_the_table_and_the_ledger(tmp_path, capsys):
    src = _report(tmp_path)
    assert main(["report", str(src)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("metric") and "judge cost (fake:rule-judge" in out


def test_a_report_without_a_judge_has_no_judge_sections():
    report = evaluate_outputs([{"question": "q?", "answer": "a b", "reference": "a b"}], metrics=["token_f1"],
                              progress=False)
    page = _page(render_html(report))
    assert set(page.tables) == {"scores", "rows"}


@pytest.mark.skipif(not shutil.which("chromium"), reason="no Chromium (apt-get install -y chromium)")
def test_headless_chromium_renders_it(tmp_path):
    """The page in a real browser, offline: a screenshot is made (RAGWORKBOOK_SCREENSHOT=PATH keeps it)."""
    src = _report(tmp_path)
    html = tmp_path / "report.html"
    assert main(["report", str(src), "--html", str(html)]) == 0
    shot = Path(os.environ.get("RAGWORKBOOK_SCREENSHOT") or tmp_path / "shot.png")
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--no-first-run", "--hide-scrollbars",
                           f"--screenshot={shot}", "--window-size=1200,1400", html.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000, done.stderr[-2000:]

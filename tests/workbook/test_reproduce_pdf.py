"""reproduce --pdf: C1 and C4 on the user's copy of the paper, naming the pypdf that extracted it.

The real paper is never needed: the end-to-end test makes a PDF of the bundled notes; the wording of
the verdicts is checked on fixed per-question values."""

import json

import pytest
from fakes.pdfs import make_pdf, wrap

from ragworkbook.cli import main
from ragworkbook.corpus.pages import Corpus, Page, load_corpus
from ragworkbook.corpus.pdf import PAPER_V7_BYTES, PYPDF_EXACT_C1, pypdf_version
from ragworkbook.workbook import reproduce


@pytest.mark.model
def test_reproduce_pdf_end_to_end_on_a_test_made_pdf(tmp_path, capsys):
    pdf = make_pdf(tmp_path / "my_copy.pdf", [wrap(p.text) for p in load_corpus().pages])
    assert main(["reproduce", "--pdf", str(pdf), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["C1", "C4"]  # only the PDF rows unless --only says otherwise
    c1, c4 = rows
    src = c1["details"]["source"]
    assert src["pdf"] == str(pdf) and src["pages"] == 17 and src["pypdf"] == pypdf_version()
    assert src["bytes"] == pdf.stat().st_size and not src["arxiv_v7_size"]
    assert f"text extracted by pypdf {pypdf_version()}" in c1["reason"]
    assert c1["status"] in ("exact", "environment")
    if c1["status"] == "environment":  # the notes are not the paper: the measured numbers are shown
        assert "measured on my_copy.pdf" in c1["reason"] and "Precision@3 " in c1["reason"]
    assert all(f["value"] is not None for f in c1["figures"])
    assert "the chunks stating h = 8 are on p05" in c4["reason"]
    assert main(["reproduce", "--pdf", str(pdf), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"C rows on {pdf} ") and f"by pypdf {pypdf_version()}" in out
    assert main(["reproduce", "--pdf", str(tmp_path / "none.pdf")]) == 2
    assert "no such PDF file" in capsys.readouterr().err


DOCUMENTED = {"P@3": 0.5834, "R@3": 0.6201, "MRR@5": 0.8125, "NDCG@3": 0.7401, "Hit@3": 0.875}


def _fake(monkeypatch, tmp_path, per, size, version):
    corpus = Corpus("paper", [Page(1, "x")], meta={"pypdf": version, "bytes": size})
    setup = reproduce._Retrieval(eval_set=None, corpus=corpus, chunks=["c"] * 40, retriever=None,
                                 rankings={"q1": ["p13-c01", "p14-c02", "p05-c03"]},
                                 qrels={"q1": {"p04-c02": 1}})
    monkeypatch.setattr(reproduce, "_retrieval_setup", lambda ctx: setup)
    monkeypatch.setattr(reproduce, "_per_question", lambda ctx: {f"q{i}": dict(per) for i in range(1, 9)})
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-")
    return {r.id: r for r in reproduce.reproduce_all(only=["C1", "C4"], pdf=pdf)}


def test_c1_says_exact_on_the_v7_pdf_with_the_pypdf_used(monkeypatch, tmp_path):
    miss = {**DOCUMENTED, "P@3": 0.0, "R@3": 0.0, "MRR@5": 0.0, "Hit@3": 0.0}
    rows = _fake(monkeypatch, tmp_path, miss, PAPER_V7_BYTES, "6.19.0")
    assert rows["C4"].status == "exact" and "the documented miss occurs" in rows["C4"].reason
    assert "the chunks stating h = 8 are on p04" in rows["C4"].reason
    rows = _fake(monkeypatch, tmp_path, DOCUMENTED, PAPER_V7_BYTES, "6.19.0")
    c1 = rows["C1"]
    assert c1.status == "exact" and c1.documented_status == "environment"
    assert c1.reason.startswith("exact on the arXiv v7 PDF with pypdf 6.19.0")
    assert rows["C4"].status == "environment" and "does not occur" in rows["C4"].reason


def test_c1_says_environment_with_the_measured_numbers_otherwise(monkeypatch, tmp_path):
    per = {"P@3": 0.5, "R@3": 0.521, "MRR@5": 0.875, "NDCG@3": 0.676, "Hit@3": 0.875}  # pypdf 7.1.1's
    c1 = _fake(monkeypatch, tmp_path, per, PAPER_V7_BYTES, "7.1.1")["C1"]
    assert c1.status == "environment"
    assert "measured on the arXiv v7 PDF" in c1.reason and "pypdf 7.1.1" in c1.reason
    assert "Precision@3 0.500, Recall@3 0.521, MRR@5 0.875" in c1.reason
    assert ", ".join(PYPDF_EXACT_C1) in c1.reason and "7.1.1 is not one of those" in c1.reason
    c1 = _fake(monkeypatch, tmp_path, per, 1000, "6.19.0")["C1"]
    assert "this file is not the v7 PDF (its size is not 1,847,759 bytes)" in c1.reason


def test_the_pinned_pypdf_is_one_measured_to_reproduce_c1():
    """pyproject's range and the installed pypdf: the documented C1 needs one of the measured versions."""
    from ragworkbook.paths import repo_root

    text = (repo_root() / "pyproject.toml").read_text(encoding="utf-8")
    assert '"pypdf>=6.16,<6.20"' in text
    assert pypdf_version() in PYPDF_EXACT_C1

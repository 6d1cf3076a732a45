"""PDF ingestion: a PDF the test writes, extracted with pypdf, chunked exactly like the documented recipe."""

import pytest
from conftest import reference

from ragworkbook.cli import main
from ragworkbook.corpus import pdf as pdfmod
from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.ground_truth import keyword_qrels
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.corpus.pdf import load_pdf_corpus, load_pdf_pages


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path, pages: list[list[str]]) -> None:
    """A minimal, valid PDF 1.4: one Helvetica text line per list entry, one page per inner list."""
    objs: list[bytes] = []
    n = len(pages)
    # 1 catalog, 2 pages, 3 font, then (page, content) pairs
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 9 Tf", "11 TL", "40 800 Td"]
        for line in lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * i} 0 R >>".encode()
        )
        objs.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for k, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def _lines(text: str, width: int = 90, keep: tuple[str, ...] = ("h = 8", "N = 6")) -> list[str]:
    """Wrap ``text`` into lines of at most ``width`` characters, never breaking inside ``keep`` phrases."""
    for k in keep:
        text = text.replace(k, k.replace(" ", "\x00"))
    words, lines, cur = text.split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return [ln.replace("\x00", " ") for ln in lines + ([cur] if cur else [])]


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    notes = load_corpus()
    pages = [
        _lines(notes.page(3).text),
        [],
        _lines(notes.page(5).text),
        ["tiny"],
        _lines(notes.page(10).text),
    ]
    path = tmp_path_factory.mktemp("pdf") / "paper.pdf"
    write_pdf(path, pages)
    return path


def recipe_from_pdf(path):
    """rag-cookbook's build_corpus, reading the PDF with pypdf itself (the reference)."""
    reader = reference("pypdf").PdfReader(str(path))
    chunks = []
    for page_num, page in enumerate(reader.pages, start=1):
        text = (page.extract_text() or "").strip()
        if not text:
            continue
        for start in range(0, len(text), 400 - 50):
            piece = text[start : start + 400].strip()
            if len(piece) < 40:
                continue
            chunks.append({"text": piece, "page": page_num})
    return chunks


def test_pdf_pages_and_text(paper):
    pages = load_pdf_pages(paper)
    assert [p.page for p in pages] == [1, 2, 3, 4, 5]
    assert pages[1].text.strip() == "" and pages[3].text.strip() == "tiny"
    assert "N = 6 identical layers" in " ".join(pages[0].text.split())
    assert "h = 8" in pages[2].text


@pytest.mark.reference
def test_pdf_chunking_equals_recipe_character_for_character(paper):
    ours = chunk_pages(load_pdf_pages(paper))
    ref = recipe_from_pdf(paper)
    assert len(ours) == len(ref) > 10
    assert [(c.page, c.text) for c in ours] == [(r["page"], r["text"]) for r in ref]
    assert {c.page for c in ours} == {1, 3, 5}  # empty page and "tiny" page give no chunks
    qrels = keyword_qrels(ours, {"q1": "h = 8", "q6": "P100"})
    assert {c.split("-")[0] for c in qrels["q1"]} == {"p03"}
    assert {c.split("-")[0] for c in qrels["q6"]} == {"p05"}


def test_line_break_inside_keyword_is_a_no_match(tmp_path):
    """PDF line wrapping can put a newline inside a keyword ("h\\n= 8"): the keyword rule then misses."""
    from ragworkbook.corpus.ground_truth import keyword_diagnostics

    path = tmp_path / "wrapped.pdf"
    write_pdf(path, [_lines(load_corpus().page(5).text, keep=())])
    pages = load_pdf_pages(path)
    assert "h\n= 8" in pages[0].text
    d = keyword_diagnostics(chunk_pages(pages), {"q1": "h = 8"}, pages)[0]
    assert d.status == "no match" and d.pages == []


def test_pdf_corpus_and_errors(paper, tmp_path):
    c = load_pdf_corpus(paper)
    assert c.title == "paper" and len(c) == 5
    with pytest.raises(FileNotFoundError, match="download-paper"):
        load_pdf_pages(tmp_path / "missing.pdf")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"this is not a pdf")
    with pytest.raises(ValueError, match="pypdf cannot read"):
        load_pdf_pages(bad)


def test_download_paper_offline_fakes(tmp_path, monkeypatch, paper, capsys):
    """No network: urlopen is replaced; checks the existing-file shortcut, the %PDF check and the CLI."""
    import io
    import urllib.request

    payload = paper.read_bytes()
    monkeypatch.setattr(urllib.request, "urlopen", lambda req, timeout=0: io.BytesIO(payload))
    dest = tmp_path / "p.pdf"
    assert pdfmod.download_paper(dest) == dest and dest.read_bytes() == payload
    monkeypatch.setattr(urllib.request, "urlopen", lambda req, timeout=0: io.BytesIO(b"<html>"))
    assert pdfmod.download_paper(dest) == dest  # existing file kept, no download
    with pytest.raises(ValueError, match="did not return a PDF"):
        pdfmod.download_paper(dest, force=True)

    def refuse(req, timeout=0):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(ConnectionError, match="needs the internet"):
        pdfmod.download_paper(tmp_path / "q.pdf")
    capsys.readouterr()
    assert main(["download-paper", "--out", str(tmp_path / "q.pdf")]) == 1
    err = capsys.readouterr()
    assert "ragworkbook download-paper: error:" in err.err and "needs the internet" in err.err and not err.out
    assert main(["download-paper", "--out", str(dest)]) == 0
    assert "5 pages" in capsys.readouterr().out

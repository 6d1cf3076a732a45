"""One corpus loader for every kind of path: paged JSON, a PDF, a text file, a folder of them."""

import pytest
from fakes.pdfs import make_pdf

from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.corpus.pages import Page, corpus_kind, load_corpus
from ragworkbook.corpus.pdf import pypdf_version


def test_pdf_by_its_first_bytes_whatever_its_name(tmp_path):
    path = make_pdf(tmp_path / "paper.bin", [["The encoder has N = 6 layers."], [], ["Adam, beta2 = 0.98."]])
    assert corpus_kind(path) == "pdf"
    c = load_corpus(path)
    assert [p.page for p in c] == [1, 2, 3] and "N = 6" in c.pages[0].text and c.pages[1].text.strip() == ""
    assert c.meta == {"pypdf": pypdf_version(), "bytes": path.stat().st_size}
    assert c.title == "paper" and c.source == str(path)


def test_text_file_pages_split_on_form_feeds(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("page one\fpage two\n\f", encoding="utf-8")
    assert load_corpus(path).pages == [Page(1, "page one"), Page(2, "page two\n")]
    md = tmp_path / "one.md"
    md.write_text("# one page\nno form feed", encoding="utf-8")
    assert load_corpus(md).pages == [Page(1, "# one page\nno form feed")]


def test_folder_of_pdfs_and_text_files(tmp_path):
    make_pdf(tmp_path / "b.pdf", [["B one"], ["B two"]])
    (tmp_path / "a.txt").write_text("A one\fA two\fA three", encoding="utf-8")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "c.md").write_text("C", encoding="utf-8")
    (tmp_path / "notes.docx").write_bytes(b"PK")
    (tmp_path / ".hidden.txt").write_text("secret", encoding="utf-8")
    c = load_corpus(tmp_path)
    assert [p.page for p in c] == list(range(1, 7))
    assert [p.text.strip() for p in c] == ["A one", "A two", "A three", "B one", "B two", "C"]
    assert c.meta["files"] == [{"file": "a.txt", "first_page": 1, "pages": 3},
                               {"file": "b.pdf", "first_page": 4, "pages": 2},
                               {"file": "sub/c.md", "first_page": 6, "pages": 1}]
    assert c.meta["skipped"] == ["notes.docx"] and c.title == tmp_path.name


def test_errors_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing: no such file or folder"):
        load_corpus(tmp_path / "missing")
    (tmp_path / "x.csv").write_text("a,b", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"x\.csv: cannot read '\.csv' as a corpus"):
        load_corpus(tmp_path / "x.csv")
    (tmp_path / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DatasetError, match=r"latin\.txt: not UTF-8 text"):
        load_corpus(tmp_path / "latin.txt")
    broken = tmp_path / "folder"
    broken.mkdir()
    (broken / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    with pytest.raises(ValueError, match=r"bad\.pdf: pypdf cannot read"):
        load_corpus(broken)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match="empty: no PDF or text file"):
        load_corpus(empty)
    # the bundled JSON corpus still loads through the same function
    assert len(load_corpus()) == 17

"""PDF ingestion (pypdf) and the optional download of the real paper.

The workbook never needs the internet: the bundled notes corpus stands in for
the paper. A user who has a connection can run the documented pipeline on the
real "Attention Is All You Need" PDF::

    ragworkbook download-paper            # -> <cache>/attention_is_all_you_need.pdf
    ragworkbook reproduce --pdf <cache>/attention_is_all_you_need.pdf   # C1 and C4 on it
    ragworkbook eval --corpus paper.pdf   # any PDF, or a folder of PDFs, is a corpus

:func:`load_pdf_pages` extracts text page by page exactly as rag-cookbook does
(``page.extract_text() or ""``, pages numbered from 1); chunking then strips
each page (see :func:`ragworkbook.corpus.chunking.chunk_pages`).

The extracted text depends on the pypdf version, and the retrieval figures with
it. The documented C1 figures reproduce exactly on the arXiv v7 PDF
(:data:`PAPER_V7_BYTES` bytes) with the text of pypdf 6.16.0, 6.17.0, 6.18.1 and
6.19.0 (:data:`PYPDF_EXACT_C1`, measured); 6.0.0, 6.21.4, 7.0.0 and 7.1.1 give
other figures and 4.3.1 loses keywords. ragworkbook therefore requires
``pypdf>=6.16,<6.20``; :func:`pypdf_version` says which one is installed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ragworkbook._io import atomic_write_bytes
from ragworkbook.corpus.document import Corpus, Page
from ragworkbook.paths import cache_dir

__all__ = [
    "load_pdf_pages",
    "load_pdf_corpus",
    "download_paper",
    "paper_is_present",
    "default_paper_path",
    "pypdf_version",
    "PAPER_URL",
    "PAPER_V7_BYTES",
    "PYPDF_EXACT_C1",
]

PAPER_URL = "https://arxiv.org/pdf/1706.03762"
PAPER_FILE = "attention_is_all_you_need.pdf"
#: Size of the arXiv v7 PDF of "Attention Is All You Need", the file the documented C1 figures come from.
PAPER_V7_BYTES = 1_847_759
#: pypdf versions whose text of the v7 PDF gives every documented C1 figure exactly (measured).
PYPDF_EXACT_C1 = ("6.16.0", "6.17.0", "6.18.1", "6.19.0")


def pypdf_version() -> str:
    """The installed pypdf version (the text of a PDF, and every figure computed on it, depend on it)."""
    from importlib.metadata import version

    return version("pypdf")


def load_pdf_pages(path: str | os.PathLike[str]) -> list[Page]:
    """Text of every page of a PDF, via ``pypdf``: ``[Page(1, text), Page(2, text), ...]``.

    A page with no extractable text (a scan, a figure) gives ``Page(n, "")``
    so page numbers stay those of the PDF. The text is returned as pypdf
    produces it (not stripped). Raises ``FileNotFoundError`` for a missing
    file and ``ValueError`` for a file pypdf cannot read.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such PDF file (download the paper with "
            "`ragworkbook download-paper`, or pass the path of your own PDF)"
        )
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(str(path))
        pages = [Page(page=i, text=p.extract_text() or "") for i, p in enumerate(reader.pages, start=1)]
    except (PdfReadError, ValueError, KeyError) as exc:
        raise ValueError(f"{path}: pypdf cannot read this file as a PDF ({exc})") from None
    return pages


def load_pdf_corpus(path: str | os.PathLike[str], title: str | None = None) -> Corpus:
    """:func:`load_pdf_pages` wrapped as a :class:`Corpus` (title defaults to the file name; ``meta``
    holds the pypdf version that extracted the text and the file's size in bytes)."""
    path = Path(path)
    return Corpus(title=title or path.stem, pages=load_pdf_pages(path), source=str(path),
                  meta={"pypdf": pypdf_version(), "bytes": path.stat().st_size})


def default_paper_path() -> Path:
    """Default download location: ``<cache_dir>/attention_is_all_you_need.pdf``."""
    return cache_dir() / PAPER_FILE


def paper_is_present(dest: str | os.PathLike[str] | None = None) -> bool:
    """True when ``dest`` (default :func:`default_paper_path`) is a non-empty file, which
    :func:`download_paper` keeps instead of downloading."""
    dest = Path(dest) if dest else default_paper_path()
    return dest.is_file() and dest.stat().st_size > 0


def download_paper(
    dest: str | os.PathLike[str] | None = None,
    url: str = PAPER_URL,
    timeout: float = 60.0,
    force: bool = False,
) -> Path:
    """Download the paper's PDF from arXiv to ``dest`` (default :func:`default_paper_path`).

    Needs the internet; never called by the tests or notebooks.

    An existing non-empty file is kept unless ``force`` (:func:`paper_is_present`
    says beforehand whether that will happen). The download is checked to start
    with ``%PDF`` and written atomically.
    """
    import urllib.error
    import urllib.request

    dest = Path(dest) if dest else default_paper_path()
    if paper_is_present(dest) and not force:
        return dest
    req = urllib.request.Request(url, headers={"User-Agent": "ragworkbook (+https://pypi.org)"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - fixed https URL
            data = resp.read()
    except (urllib.error.URLError, OSError) as exc:
        raise ConnectionError(
            f"could not download {url}: {exc}. This step needs the internet; "
            "everything else in the workbook runs offline."
        ) from None
    if not data.startswith(b"%PDF"):
        raise ValueError(f"{url} did not return a PDF (first bytes {data[:16]!r})")
    atomic_write_bytes(dest, data)
    return dest

"""PDF ingestion (pypdf) and the optional download of the real paper.

The workbook never needs the internet: the bundled notes corpus stands in for
the paper. A user who has a connection can run the documented pipeline on the
real "Attention Is All You Need" PDF::

    ragworkbook download-paper            # -> <cache>/attention_is_all_you_need.pdf
    python -c "from ragworkbook.corpus.pdf import load_pdf_pages; ..."

:func:`load_pdf_pages` extracts text page by page exactly as rag-cookbook does
(``page.extract_text() or ""``, pages numbered from 1); chunking then strips
each page (see :func:`ragworkbook.corpus.chunking.chunk_pages`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ragworkbook.corpus.pages import Corpus, Page

__all__ = [
    "load_pdf_pages",
    "load_pdf_corpus",
    "download_paper",
    "default_paper_path",
    "PAPER_URL",
]

PAPER_URL = "https://arxiv.org/pdf/1706.03762"
PAPER_FILE = "attention_is_all_you_need.pdf"


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
    """:func:`load_pdf_pages` wrapped as a :class:`Corpus` (title defaults to the file name)."""
    path = Path(path)
    return Corpus(title=title or path.stem, pages=load_pdf_pages(path), source=str(path))


def default_paper_path() -> Path:
    """Default download location: ``<cache_dir>/attention_is_all_you_need.pdf``."""
    from ragworkbook.paths import cache_dir

    return cache_dir() / PAPER_FILE


def download_paper(
    dest: str | os.PathLike[str] | None = None,
    url: str = PAPER_URL,
    timeout: float = 60.0,
    force: bool = False,
) -> Path:
    """Download the paper's PDF from arXiv to ``dest`` (default :func:`default_paper_path`).

    Needs the internet; never called by the tests or notebooks.

    An existing non-empty file is kept unless ``force``. The download is
    checked to start with ``%PDF`` and written atomically.
    """
    import urllib.error
    import urllib.request

    from ragworkbook._io import atomic_write_bytes

    dest = Path(dest) if dest else default_paper_path()
    if dest.is_file() and dest.stat().st_size > 0 and not force:
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

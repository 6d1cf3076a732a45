"""``ragworkbook download-paper``: the paper of the documented C rows, from arXiv."""

from __future__ import annotations

import argparse
import sys

from ragworkbook.cli._common import Subparsers, add_command


def cmd_download_paper(args: argparse.Namespace) -> int:
    """``ragworkbook download-paper [--out PATH] [--force]``: says whether it downloaded or kept a file."""
    from pathlib import Path

    from ragworkbook.corpus.pdf import default_paper_path, download_paper, load_pdf_pages, paper_is_present

    dest = Path(args.out) if args.out else default_paper_path()
    kept = paper_is_present(dest) and not args.force
    try:
        path = download_paper(dest, force=args.force)
    except ConnectionError as exc:
        print(f"ragworkbook download-paper: error: {exc}", file=sys.stderr)
        return 1
    pages = load_pdf_pages(path)
    n_chars = sum(len(p.text) for p in pages)
    about = f"({path.stat().st_size:,} bytes, {len(pages)} pages, {n_chars:,} characters of text)"
    if kept:
        print(f"kept the existing {path} {about}: nothing downloaded (--force downloads it again)")
    else:
        print(f"saved {path} {about}")
    print(f"next: ragworkbook reproduce --pdf {path}   (C1 and C4 on this PDF)")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "download-paper", cmd_download_paper,
        help="download 'Attention Is All You Need' from arXiv (needs the internet)")
    p.add_argument("--out", default=None, help="where to save the PDF (default: the cache folder)")
    p.add_argument("--force", action="store_true", help="download even if the file is already there")

"""``ragworkbook reproduce``: every documented number recomputed."""

from __future__ import annotations

import argparse
import json
import sys

from ragworkbook.cli import _common
from ragworkbook.cli._common import BACKEND_CHOICES, Subparsers, add_command, add_timeout_option, split_names


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``ragworkbook reproduce [--json] [--pdf FILE]``: recompute and print every documented number
    (with ``--pdf``, C1 and C4 on the user's copy of the paper unless ``--only`` names rows).

    Exit code 1 if a row documented as exact did not reproduce, else 0.
    """
    from ragworkbook.workbook.reproduce import NEEDS_MODEL, PDF_ROWS, check_ids, format_table, reproduce_all

    only = split_names(args.only)
    if args.pdf and only is None:
        only = list(PDF_ROWS)
    ids = check_ids(only)
    generator = None
    if any(i in NEEDS_MODEL for i in ids):
        # with --json, stdout must be JSON only: no "using embedded backend" line
        generator = _common.generator(args, announce=not args.json)
    rows = reproduce_all(generator, only=ids, progress=not args.no_progress, pdf=args.pdf)
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2, ensure_ascii=False))
    else:
        src = next((r.details["source"] for r in rows if "source" in r.details), None)
        if src:
            print(f"C rows on {src['pdf']} ({src['bytes']:,} bytes, {src['pages']} pages), text extracted "
                  f"by pypdf {src['pypdf']}")
        print(format_table(rows))
    broken = [r.id for r in rows if r.breaks_its_documented_status]
    if broken:
        print(f"documented-exact rows that did not reproduce: {', '.join(broken)}", file=sys.stderr)
        return 1
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "reproduce", cmd_reproduce, help="recompute every documented number",
        description="Recompute every documented number (NUMBERS.md at the repository root) with "
        "the package and print documented vs reproduced, with a status and the reason for every "
        "difference.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--backend", default=None, choices=BACKEND_CHOICES,
                   help="backend for the rows that need a model (default: $RAGWORKBOOK_BACKEND or auto)")
    p.add_argument("--model", default=None, help="model name for those rows")
    p.add_argument("--recording", default=None, help="replay/record file for the generator")
    p.add_argument("--only", action="append", default=None, metavar="ID",
                   help="only these rows (e.g. --only A1 --only C3), repeatable or comma-separated")
    p.add_argument("--pdf", default=None, metavar="FILE",
                   help="your copy of the paper (`ragworkbook download-paper`): recompute C1 and C4 on it "
                   "(only those rows unless --only says otherwise) and name the pypdf that extracted it")
    add_timeout_option(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

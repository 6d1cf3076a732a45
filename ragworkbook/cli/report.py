"""``ragworkbook report``: a saved report as a table, or as one HTML page."""

from __future__ import annotations

import argparse

from ragworkbook.cli._common import Subparsers, add_command, format_summary, unscored_lines


def cmd_report(args: argparse.Namespace) -> int:
    """``ragworkbook report FILE [--html OUT]``: print a saved report (table, what was not scored, the
    judge's ledger), or write it as one self-contained HTML page."""
    from ragworkbook.evaluation.report import Report

    report = Report.load(args.file)
    if args.html:
        from ragworkbook._io import check_not_input, check_writable
        from ragworkbook.evaluation.html_report import write_html

        check_writable(args.html)
        check_not_input(args.html, {"FILE": args.file}, option="--html")
        path = write_html(report, args.html, title=args.title, source=str(args.file))
        print(f"HTML report written to {path} ({len(report.rows)} questions, {len(report.metrics)} metrics)")
        return 0
    print(format_summary(report))
    lines = unscored_lines(report)
    if lines:
        print("not scored:")
        print("\n".join(lines))
    if report.meta.get("judge_ledger"):
        from ragworkbook.judging.ledger import format_ledger

        print(format_ledger(report.meta["judge_ledger"], report.meta.get("judge", "")))
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "report", cmd_report,
        help="show a saved report, or write it as one HTML page (--html OUT)",
            description="Print a saved report's table and judge ledger, or with --html OUT write it as one "
            "self-contained HTML page (inline CSS and SVG, nothing fetched): the scores with their 95% "
            "intervals, failed and undefined counts with their reasons, the judge's card (agreement with "
            "human labels where `judge-check` measured it, and its baseline), the ledger of calls, tokens "
            "and seconds, and one row per question. Written atomically, never over the report.")
    p.add_argument("file", help="a report JSON (`eval --out`)")
    p.add_argument("--html", default=None, metavar="OUT", help="write the HTML page to OUT")
    p.add_argument("--title", default=None, help="the page's title (default: the report's name or file)")

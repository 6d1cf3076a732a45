"""The ``ragworkbook`` command line.

Each sub-command's work lives in the module named for it; this file only
parses arguments and imports that module when the command runs, so
``ragworkbook --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence


class UsageError(Exception):
    """A problem with the user's input: printed as ``error: ...`` with exit code 2."""


def _handler(module: str, func: str):
    def run(args: argparse.Namespace) -> int:
        mod = importlib.import_module(f"ragworkbook.{module}")
        return int(getattr(mod, func)(args) or 0)

    return run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragworkbook",
        description="RAG evaluation, hands-on: metrics, local generation and the documented numbers.",
    )
    from ragworkbook import __version__

    parser.add_argument("--version", action="version", version=f"ragworkbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # --- ir-eval (retrieval metrics over TREC files) -------------------------------
    p = sub.add_parser(
        "ir-eval",
        help="retrieval metrics over TREC-format qrels and run files (like trec_eval)",
        description="Compute retrieval metrics over a TREC qrels file (`qid 0 doc grade`) "
        "and a TREC run file (`qid Q0 doc rank score tag`).",
    )
    p.add_argument("--qrels", required=True, help="TREC qrels file: qid 0 docid grade")
    p.add_argument("--run", required=True, help="TREC run file: qid Q0 docid rank score tag")
    p.add_argument(
        "--metric",
        action="append",
        required=True,
        help="metric name, repeatable or comma-separated: P@k, recall@k, hit_rate@k, mrr, "
        "mrr@k, map, map@k, r_precision, dcg@k, ndcg@k",
    )
    p.add_argument("--gain", choices=["linear", "exponential"], default="linear",
                   help="gain for (n)dcg: linear = rel, exponential = 2^rel - 1")
    p.add_argument("--per-query", action="store_true", help="print one row per query too")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_handler("trec", "cli_ir_eval"))

    # --- doctor --------------------------------------------------------------------
    p = sub.add_parser("doctor", help="what is installed, which backend is live, models found")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_handler("doctor", "cli_doctor"))

    # --- download-paper ------------------------------------------------------------
    p = sub.add_parser(
        "download-paper",
        help="download 'Attention Is All You Need' from arXiv (needs the internet)",
    )
    p.add_argument("--out", default=None, help="where to save the PDF")
    p.set_defaults(func=_handler("pdf", "cli_download_paper"))

    # --- eval / compare / reproduce (end to end) -----------------------------------
    p = sub.add_parser("eval", help="evaluate the RAG pipeline over an eval set -> report JSON")
    p.set_defaults(func=_handler("report", "cli_eval"))
    p = sub.add_parser("compare", help="compare two saved reports with paired tests")
    p.set_defaults(func=_handler("report", "cli_compare"))
    p = sub.add_parser("reproduce", help="recompute every documented number")
    p.set_defaults(func=_handler("reproduce", "cli_reproduce"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, FileNotFoundError, ValueError) as exc:
        print(f"ragworkbook {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

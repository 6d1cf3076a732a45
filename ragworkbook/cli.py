"""The ``ragworkbook`` command line.

Each sub-command's work lives in the module named for it; this file only
parses arguments and imports that module when the command runs, so
``ragworkbook --help`` stays fast.

Exit status: 0 success; 1 when a check fails (``compare --fail-if-worse``,
``reproduce`` with a documented-exact row that did not reproduce, ``doctor``
with a problem) or a generation backend cannot answer (no Ollama server, model
not pulled, strict-replay miss: the message says what to do); 2 for bad input
(unknown metric, missing or malformed file), printed as ``ragworkbook CMD: error: ...``.
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
    p.add_argument("--no-relevant", choices=["zero", "skip"], default="zero",
                   help="queries without relevant documents: score 0 (trec_eval, ranx) or leave out")
    p.add_argument("--missing", choices=["skip", "zero"], default="skip",
                   help="judged queries absent from the run: leave out (trec_eval) or score 0 (trec_eval -c)")
    p.add_argument("--per-query", action="store_true", help="print one row per query too")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_handler("trec", "cli_ir_eval"))

    # --- doctor --------------------------------------------------------------------
    p = sub.add_parser("doctor", help="what is installed, which backend is live, models found")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--deep", action="store_true",
                   help="also load NLTK's WordNet to prove it works (several seconds)")
    p.set_defaults(func=_handler("doctor", "cli_doctor"))

    # --- download-paper ------------------------------------------------------------
    p = sub.add_parser(
        "download-paper",
        help="download 'Attention Is All You Need' from arXiv (needs the internet)",
    )
    p.add_argument("--out", default=None, help="where to save the PDF")
    p.set_defaults(func=_handler("pdf", "cli_download_paper"))

    # --- eval / compare / reproduce (end to end) -----------------------------------
    p = sub.add_parser("eval", help="evaluate the RAG pipeline over an eval set -> report JSON",
                       description="Run the naive RAG pipeline (retrieve k chunks, generate an answer) over "
                       "an eval set and score retrieval, generation and (with --judge) judged metrics.")
    p.add_argument("--eval-set", default=None, help="eval set .json/.jsonl (default: data/eval_set.json)")
    p.add_argument("--corpus", default=None,
                   help="paged corpus .json/.jsonl (default: data/attention_notes.json)")
    p.add_argument("--backend", default=None, choices=["auto", "ollama", "embedded", "replay"],
                   help="generation backend (default: $RAGWORKBOOK_BACKEND or auto)")
    p.add_argument("--model", default=None, help="model name (default: the backend's default)")
    p.add_argument("--recording", default=None, help="replay/record file for the generator")
    p.add_argument("--retriever", default="dense", choices=["dense", "bm25", "hybrid"])
    p.add_argument("--k", type=int, default=3, help="chunks retrieved and given to the generator (default 3)")
    p.add_argument("--judge", action=argparse.BooleanOptionalAction, default=False,
                   help="also compute the LLM-judged metrics with the same backend (slow)")
    p.add_argument("--metric", action="append", default=None,
                   help="metric to compute, repeatable or comma-separated (default: all that apply)")
    p.add_argument("--name", default="", help="a name for this run, stored in the report")
    p.add_argument("--out", default=None, help="write the report JSON here")
    p.add_argument("--json", action="store_true", help="print the aggregates as JSON instead of a table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_handler("report", "cli_eval"))
    p = sub.add_parser("compare", help="compare two saved reports with paired tests",
                       description="Compare report B against report A question by question (paired "
                       "randomisation test per metric). Exit 1 when B is significantly worse on a "
                       "--fail-if-worse metric: usable as a regression gate in CI.")
    p.add_argument("report_a", help="baseline report JSON")
    p.add_argument("report_b", help="new report JSON")
    p.add_argument("--metric", action="append", default=None,
                   help="metric to compare, repeatable or comma-separated (default: all in both)")
    p.add_argument("--fail-if-worse", action="append", default=[], metavar="METRIC",
                   help="exit 1 if B is significantly worse than A on METRIC (repeatable)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--method", default="randomization", choices=["randomization", "bootstrap"])
    p.add_argument("--eval-set", default=None,
                   help="also check that both reports are on exactly this eval set's questions")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_handler("report", "cli_compare"))
    p = sub.add_parser("reproduce", help="recompute every documented number",
                       description="Recompute every number of NUMBERS.md with the package and print "
                       "documented vs reproduced, with a status and the reason for every difference.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--backend", default=None, choices=["auto", "ollama", "embedded", "replay"],
                   help="backend for the rows that need a model (default: $RAGWORKBOOK_BACKEND or auto)")
    p.add_argument("--model", default=None, help="model name for those rows")
    p.add_argument("--recording", default=None, help="replay/record file for the generator")
    p.add_argument("--only", action="append", default=None, metavar="ID",
                   help="only these rows (e.g. --only A1 --only C3), repeatable or comma-separated")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_handler("reproduce", "cli_reproduce"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from ragworkbook.llm.base import LLMError  # stdlib-only module: cheap to import

    try:
        return args.func(args)
    except (UsageError, FileNotFoundError, ValueError) as exc:
        print(f"ragworkbook {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except LLMError as exc:  # backend down, model not pulled, replay miss: the message says what to do
        print(f"ragworkbook {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

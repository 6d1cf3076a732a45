"""``ragworkbook ir-eval``: trec_eval's command line and output over TREC qrels and run files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ragworkbook.cli._common import Subparsers, UsageError, add_command, write_stdout
from ragworkbook.metrics.registry import known_names

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook._types import JSONObject
    from ragworkbook.columns import Columns
    from ragworkbook.metrics.batch import RunResult
    from ragworkbook.metrics.ranked import Ranked


def cmd_ir_eval(args: argparse.Namespace) -> int:
    """``ragworkbook ir-eval [-q] [-c] [-M N] [-l L] [-m MEASURE]... QRELS RUN``: trec_eval's measures
    and output (its default set without ``-m``), or ragworkbook's metric names (``--metric``)."""
    import os

    # no linear algebra here: one OpenBLAS thread (numpy's idle OpenBLAS threads spin for about 0.1 s of
    # CPU once numpy is imported); set before numpy is, and never over the user's own setting
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.version_wanted:  # trec_eval -v: its version on standard error, exit 0
        from ragworkbook import __version__

        print(f"trec_eval version {TREC_EVAL_VERSION} (ragworkbook ir-eval {__version__})", file=sys.stderr)
        return 0
    files = list(args.files or [])
    if args.qrels is not None or args.run is not None:
        if files or args.qrels is None or args.run is None:
            raise UsageError("give the two files either as QRELS RUN or as --qrels FILE --run FILE")
        files = [args.qrels, args.run]
    if len(files) != 2:
        raise UsageError(f"ir-eval takes two files, QRELS and RUN; got {len(files)}")
    if args.rel_format not in ("qrels", "qrels_jg", "prefs", "qrels_prefs"):
        raise UsageError(f"-R {args.rel_format}: illegal relevance format; trec_eval 10's are qrels (the "
                         "default), qrels_jg, prefs and qrels_prefs")
    if args.results_format != "trec_results":
        raise UsageError(f"-T {args.results_format}: illegal retrieval results format; trec_eval 10 has "
                         "one, 'trec_results' (the default)")
    if files[1] == "-":  # trec_eval: a run file '-' is read from standard input
        import tempfile

        with tempfile.TemporaryDirectory(prefix="ragworkbook-stdin-") as tmp:
            path = os.path.join(tmp, "stdin.run")
            with open(path, "wb") as fh:
                fh.write(sys.stdin.buffer.read())
            return _ir_eval(args, [files[0], path], shown_run="-")
    return _ir_eval(args, files, shown_run=files[1])


#: The trec_eval release whose command line and output ir-eval follows (``-v`` prints it).
TREC_EVAL_VERSION = "10.0-rc3"


def _ir_eval(args: argparse.Namespace, files: list[str], shown_run: str) -> int:
    from ragworkbook.corpus.trec import read_qrels_columns, read_run_columns
    from ragworkbook.metrics.batch import _check_run_options, _metrics, _nothing, evaluate_ranked
    from ragworkbook.metrics.ranking import rank_columns
    from ragworkbook.metrics.trec_names import parse_trec_measures, trec_lines
    from ragworkbook.metrics.trec_options import (
        judged_only,
        last_tag,
        only_query,
        read_zscores,
        to_zscores,
        with_collection_size,
    )

    measures = list(args.measures or [])
    named = list(args.metric or [])
    if args.rel_format in ("prefs", "qrels_prefs"):  # preferences: metrics.prefs does it all
        from ragworkbook.corpus.trec import read_prefs, read_run
        from ragworkbook.metrics.prefs import ir_eval_prefs, prefs_request

        if named or args.zscores or args.json:
            raise UsageError("with -R prefs / qrels_prefs give trec_eval's measures (-m prefs); --metric, -Z "
                             "and --json are not read")
        try:
            prefs_request(measures)  # the measures checked before the files are read
            prefs = read_prefs(files[0], qrels_form=args.rel_format == "qrels_prefs")
            if args.debug is not None and "." in args.debug:
                prefs = {q: v for q, v in prefs.items() if q == args.debug.partition(".")[2]}
            lines = ir_eval_prefs(prefs, read_run(files[1]), measures, per_query=args.per_query,
                                  show_summary=args.summary, complete=args.missing == "zero",
                                  depth=args.depth, runid=last_tag(files[1]))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        write_stdout("".join(line + "\n" for line in lines))
        return 0
    jg_renames: list[tuple[str, str]] | None = None
    if args.rel_format == "qrels_jg":  # judgment groups: the ordinary measures per group, averaged
        from ragworkbook.metrics.judgment_groups import avgjg_request

        if named:
            raise UsageError("--metric is not read with -R qrels_jg: give trec_eval's measures (-m qrels_jg)")
        try:
            ordinary, jg_renames, jg_runid = avgjg_request(measures or ["qrels_jg"])
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        measures = ordinary + (["runid"] if jg_runid else [])
    request = parse_trec_measures(measures + named if measures or named else ["official"],
                                  {"gain": args.gain, "max_grade": args.max_grade})
    import pyarrow as pa

    # the system allocator gives freed memory back for reuse (pyarrow's own pool keeps it): lower peak
    pa.set_memory_pool(pa.system_memory_pool())
    zscores = read_zscores(args.zscores) if args.zscores else None
    debug_query = None
    if args.debug is not None:  # -D LEVEL[.QID]: the level only sets trec_eval's debug printing
        level, _, debug_query = args.debug.partition(".")
        try:
            int(level)
        except ValueError:
            raise UsageError(f"-D {args.debug}: the debug level is a whole number, optionally followed by "
                             "'.QID' (only that query is evaluated)") from None
        debug_query = debug_query or None
    if jg_renames is not None:
        from ragworkbook.metrics.judgment_groups import read_qrels_jg

        try:
            groups = read_qrels_jg(files[0])
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        qrels = next(iter(groups.values()))
    else:
        qrels = read_qrels_columns(files[0])
    run = read_run_columns(files[1])
    if debug_query is not None:
        qrels, run = only_query(qrels, debug_query), only_query(run, debug_query)
        if jg_renames is not None:
            groups = {jg: only_query(g, debug_query) for jg, g in groups.items()}
    if not request.metrics and request.runid and not args.json:  # -m runid alone, as trec_eval prints it
        if args.summary:
            sys.stdout.write(f"{'runid':<22}\tall\t{last_tag(files[1], run.tag)}\n")
        return 0
    # the columns engine (metrics.batch.evaluate_columns) step by step: -J acts between ranking and measures
    metric_list = _metrics(request.metrics, args.gain, args.max_grade)
    depth, level = _check_run_options(args.no_relevant, args.missing, args.depth, args.relevance_level,
                                      args.score_precision)

    def measure(judged: Columns) -> tuple[Ranked, RunResult]:
        ranked, skipped = rank_columns(judged, run, missing=args.missing, depth=depth, level=level,
                                       float32=args.score_precision == "float32")
        if args.judged_only:
            ranked = judged_only(ranked)
        return ranked, evaluate_ranked(ranked, metric_list, no_relevant=args.no_relevant, skipped=skipped,
                                       gain=args.gain, empty_message=_nothing(judged.qids, run.qids))

    if jg_renames is not None:
        from dataclasses import replace

        from ragworkbook.metrics.batch import RunResult
        from ragworkbook.metrics.judgment_groups import evaluate_judgment_groups

        ids, values = evaluate_judgment_groups(groups, lambda judged: measure(judged)[1])
        if not ids:
            raise UsageError(_nothing(qrels.qids, run.qids))
        shown = []
        for m in metric_list:
            label = m.name
            for ours, theirs in jg_renames:
                if label == ours or (ours.endswith("_") and label.startswith(ours)):
                    label = theirs + label[len(ours):]
                    break
            shown.append(replace(m, label=label))
        by_name = {s.name: values[m.name] for s, m in zip(shown, metric_list, strict=True)}
        result = RunResult(shown, ids, by_name, args.gain, {})
        ranked = None
    else:
        ranked, result = measure(qrels)
    if args.n_docs and ranked is not None:
        keep = [ranked.ids.index(q) for q in result.query_ids] if len(result.query_ids) != ranked.n else None
        sized = ranked if keep is None else _subset(ranked, keep)
        result.values = with_collection_size(result.values, result.measured, sized, args.n_docs)
    if zscores is not None:
        counted = {m.name for m in result.measured if m.kind == "num_q"}  # trec_eval: num_q stays a count
        converted = to_zscores({k: v for k, v in result.values.items() if k not in counted},
                               result.query_ids, zscores)
        result.values = {k: converted.get(k, v) for k, v in result.values.items()}
    if args.json:
        out: JSONObject = {"qrels": str(files[0]), "run": shown_run, "gain": result.gain,
                           "score_precision": args.score_precision, "n_queries": result.n_queries,
                           "mean": result.mean}
        if result.skipped:
            out["skipped"] = result.skipped
        if args.per_query:
            out["per_query"] = result.per_query
        # the engine never returns NaN or infinity; allow_nan=False makes sure stdout stays JSON
        write_stdout(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    runid = last_tag(files[1], run.tag) if request.runid else None  # trec_eval: the last line's run id
    lines = trec_lines(result.measured, result.query_ids, result.values, result.mean,
                       per_query=args.per_query, runid=runid, show_summary=args.summary,
                       zscores=zscores is not None)
    if args.summary and named and not measures and not any(m.kind == "num_q" for m in result.measured):
        lines.append(f"{'num_q':<22}\tall\t{result.n_queries}")  # --metric: the count of queries too
    if lines:
        write_stdout("\n".join(lines) + "\n")
    return 0


def _subset(ranked: Ranked, keep: list[int]) -> Ranked:
    """The queries ``keep`` of ``ranked`` with their retrieved counts (``n_ret``), the one field
    :func:`~ragworkbook.metrics.trec_options.with_collection_size` reads; their hits are not carried."""
    import numpy as np

    from ragworkbook.metrics.ranked import Ranked

    index, grade = np.zeros(0, dtype=np.int64), np.zeros(0)
    return Ranked([ranked.ids[i] for i in keep], np.asarray(ranked.n_ret)[keep], index, index, grade, index,
                  grade, level=ranked.level)


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "ir-eval", cmd_ir_eval,
        help="retrieval metrics over TREC qrels and run files: a drop-in for trec_eval",
        usage="ragworkbook ir-eval [-q] [-n] [-c] [-J] [-M N] [-l L] [-N NUM] [-Z FILE] [-m MEASURE]... "
        "QRELS RUN|-",
        description="trec_eval's command line and output: `ragworkbook ir-eval -q -m map -m ndcg_cut.10 "
        "qrels run` prints what `trec_eval -q -m map -m ndcg_cut.10 qrels run` prints (trec_eval 10). "
        "Measures in trec_eval's syntax (P.5,10  ndcg_cut.10  iprec_at_recall..10,.50  utility.2,-1,0,0  "
        "ndcg.1=3,2=9  rbp.p=0.8) and its sets (official, the default without -m; all_trec); or "
        "ragworkbook's names with --metric (precision@5, ndcg@10, mrr, err@20, "
        "ndcg@10(gain=exponential)), printed as written. QRELS: `qid 0 doc grade`; RUN: `qid Q0 doc "
        "rank score tag` (text after the sixth field is ignored, as trec_eval does). Rankings follow "
        "trec_eval: by score, ties broken by document id descending, the rank column ignored; scores "
        "compared at full precision, as trec_eval 10 (--score-precision float32 for trec_eval 9 / "
        "pytrec_eval). A judged query the run lacks is left out (pytrec_eval) unless -c; trec_eval 10 "
        "stops with an error instead. Means are summed in query order as trec_eval sums them; runid "
        "is the last run line's tag, as trec_eval prints it; RUN '-' is read from standard input. "
        "trec_eval's long options (--nosummary, --Judged_docs_only, ...) are accepted too.")
    p.add_argument("files", nargs="*", metavar="QRELS RUN", help="the qrels file, then the run file")
    p.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE",
                   help="a trec_eval measure or set, repeatable (default: official)")
    p.add_argument("--qrels", default=None, help="the qrels file (instead of the first positional file)")
    p.add_argument("--run", default=None, help="the run file (instead of the second positional file)")
    p.add_argument("--metric", action="append", default=None,
                   help="a ragworkbook metric name, repeatable or comma-separated: "
                   + known_names("retrieval"))
    p.add_argument("-q", "--per-query", "--query_eval_wanted", dest="per_query", action="store_true",
                   help="print one line per query and measure too")
    p.add_argument("-c", "--complete_rel_info_wanted", dest="missing", action="store_const", const="zero",
                   default="skip",
                   help="average over every judged query: one the run lacks scores 0 (trec_eval -c)")
    p.add_argument("-M", "--depth", "--Max_retrieved_per_topic", dest="depth", type=int, default=None,
                   metavar="N",
                   help="only the first N documents of each ranking count (trec_eval -M)")
    p.add_argument("-l", "--relevance-level", "--level_for_rel", dest="relevance_level", type=float,
                   default=None, metavar="LEVEL",
                   help="relevant = grade >= LEVEL for the binary measures (trec_eval -l; default: "
                   "grade > 0, trec_eval's 1 on whole grades); gains still come from the grades")
    p.add_argument("-Z", "--Zscore", dest="zscores", default=None, metavar="FILE",
                   help="print z-scores: each query's value becomes (value - mean) / sd from FILE's "
                   "'qid measure mean sd' lines before averaging, -1000000 where FILE has none "
                   "(trec_eval -Z)")
    p.add_argument("-n", "--nosummary", dest="summary", action="store_false",
                   help="no summary (the 'all' lines): with -q, only the per-query lines (trec_eval -n)")
    p.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                   help="remove every unjudged document from each ranking before computing anything, the "
                   "rest ranked 1, 2, ... (trec_eval -J; it warns: numbers easily mistaken for normal ones)")
    p.add_argument("-N", "--Number_docs_in_coll", dest="n_docs", type=int, default=0, metavar="NUM",
                   help="the number of documents in the collection: utility's fourth coefficient weighs "
                   "N + relevant retrieved - retrieved - relevant (trec_eval -N; default 0)")
    p.add_argument("-R", "--Rel_info_format", dest="rel_format", default="qrels", metavar="FORMAT",
                   help="the relevance file's format: qrels; qrels_jg (judgment groups: -m qrels_jg); prefs "
                   "('qid jg jsg docno rel_level') and qrels_prefs (a qrels file read as preferences), with "
                   "trec_eval's preference measures (-m prefs, -m all_prefs; prefs_avgjg_Rnonrel[_ret] only "
                   "for judgment groups of one sub-group)")
    p.add_argument("-T", "--Results_format", dest="results_format", default="trec_results", metavar="FORMAT",
                   help="the run file's format: trec_results, trec_eval 10's only one")
    p.add_argument("-D", "--Debug_level", dest="debug", default=None, metavar="LEVEL[.QID]",
                   help="trec_eval's debug level; with .QID only that query is evaluated (the debug "
                   "printing itself is not reproduced)")
    p.add_argument("-o", "--Output_old_results_format", dest="old_format", action="store_true",
                   help="accepted and ignored, as trec_eval 10 does (obsolete)")
    p.add_argument("-v", "--version", dest="version_wanted", action="store_true",
                   help="print the trec_eval version ir-eval follows (to standard error) and exit")
    p.add_argument("--missing", choices=["skip", "zero"], default="skip",
                   help="judged queries absent from the run: leave out (default) or score 0 (= -c)")
    p.add_argument("--no-relevant", choices=["zero", "skip"], default="zero",
                   help="queries without relevant documents: score 0 (trec_eval, ranx) or leave out")
    p.add_argument("--gain", choices=["linear", "exponential"], default="linear",
                   help="gain for (n)dcg: linear = rel (trec_eval), exponential = 2^rel - 1")
    p.add_argument("--max-grade", type=float, default=4.0,
                   help="top grade of the relevance scale, for ERR: a grade g stops the user with "
                   "probability (2^g - 1) / 2^max-grade (default 4, gdeval's MAX_JUDGMENT; a larger grade "
                   "is an error)")
    p.add_argument("--score-precision", choices=["float64", "float32"], default="float64",
                   help="float64 (default): scores compared at full precision, as trec_eval 10; float32: "
                   "rounded to float32 first, as trec_eval 9, pytrec_eval and ir_measures (scores closer "
                   "than about 6e-8 relative then tie, broken by document id)")
    p.add_argument("--json", action="store_true", help="print JSON instead of trec_eval's table")

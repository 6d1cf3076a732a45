"""``ragworkbook eval``: run the naive RAG over an eval set, or score a system's answers; the report."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ragworkbook.cli import _common
from ragworkbook.cli._common import (
    BACKEND_CHOICES,
    Subparsers,
    UsageError,
    add_command,
    add_timeout_option,
    format_summary,
    register_rubrics,
    split_names,
    unscored_lines,
)

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping

    from ragworkbook._io import Inputs, StrPath
    from ragworkbook._types import JSONObject
    from ragworkbook.evaluation.report import Report
    from ragworkbook.llm.base import Generator

    #: relevance judgements as ``--qrels`` gives them: ``{question id: {context id: grade}}``
    Qrels = Mapping[str, Mapping[str, float]]


def _inputs(args: argparse.Namespace) -> Inputs:
    """The files ``eval`` reads, by option (a repeatable option: a list; the defaults too): its
    ``--out`` must be none of them (:func:`ragworkbook._io.check_output`)."""
    from ragworkbook.corpus.eval_set import DEFAULT_EVAL_SET
    from ragworkbook.corpus.pages import DEFAULT_CORPUS
    from ragworkbook.paths import data_path

    inputs: dict[str, StrPath | list[StrPath] | None] = {
        "--answers": args.answers, "--recording": args.recording, "--qrels": args.qrels,
        "--judge-check": list(args.judge_check or []), "--rubric": list(args.rubric or [])}
    if not args.answers:
        inputs["--eval-set"] = args.eval_set or data_path(DEFAULT_EVAL_SET)
        inputs["--corpus"] = args.corpus or data_path(DEFAULT_CORPUS)
    return inputs


def _eval_judge(args: argparse.Namespace) -> Generator | None:
    if not args.judge:
        return None
    return _common.generator(args, announce=not args.json)


def _judge_checks(args: argparse.Namespace) -> list[JSONObject] | None:
    """``eval --judge-check FILE``: the judge-check results to attach to the report (their cards)."""
    if not getattr(args, "judge_check", None):
        return None
    from ragworkbook.judging.reliability import read_check

    wanted = split_names(args.metric) or []
    if not args.judge and not any(m.strip().lower().replace("-", "_") == "word_support" for m in wanted):
        raise UsageError("--judge-check describes the judge of the judged metrics: add --judge (or ask for "
                         "--metric word_support)")
    return [read_check(path) for path in args.judge_check]


def _eval_answers(args: argparse.Namespace, k: int, qrels: Qrels | None) -> Report:
    """``eval --answers FILE``: score the file's answers and contexts as they are."""
    from ragworkbook.evaluation.outputs import evaluate_outputs

    clash = [opt for opt, value in (("--eval-set", args.eval_set), ("--corpus", args.corpus),
                                    ("--retriever", args.retriever)) if value]
    if clash:
        verb = "is" if len(clash) == 1 else "are"
        raise UsageError(f"{' and '.join(clash)} {verb} for running the pipeline; "
                         "with --answers the file's answers and contexts are scored as they are (nothing is "
                         "retrieved or generated): put references and relevance in the file or in --qrels")
    unused = [opt for opt, value in (("--backend", args.backend), ("--model", args.model),
                                     ("--recording", args.recording)) if value]
    if unused and not args.judge:
        raise UsageError(f"with --answers, {', '.join(unused)} choose the judge's model: add --judge, "
                         "or drop them")
    return evaluate_outputs(args.answers, qrels=qrels, k=k, judge=_eval_judge(args),
                            metrics=split_names(args.metric), progress=not args.no_progress, name=args.name,
                            judge_reliability=_judge_checks(args), out=args.out, resume=args.resume)


def _eval_pipeline(args: argparse.Namespace, k: int, qrels_file: Qrels | None) -> Report:
    """``eval``: run the naive RAG over the eval set and score it."""
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.corpus.pages import load_corpus
    from ragworkbook.evaluation.evaluate import evaluate, resolve_metrics

    checks = _judge_checks(args)  # before any work: a bad file is reported at once
    eval_set = load_eval_set(args.eval_set)
    corpus = load_corpus(args.corpus)
    chunks = chunk_pages(corpus)
    if not chunks:
        raise ValueError(f"{args.corpus}: no text to retrieve from (every page is empty or shorter than 40 "
                         "characters; a scanned PDF has no extractable text)")
    if qrels_file is not None:
        qrels = {it.id: dict(qrels_file[it.id]) for it in eval_set if it.id in qrels_file}
    else:
        qrels = keyword_qrels(chunks, {it.id: it.keyword for it in eval_set if it.keyword})
    unjudged = [it.id for it in eval_set if it.id not in qrels]
    wanted = resolve_metrics(split_names(args.metric), k=k, have_qrels=bool(qrels),
                             have_judge=bool(args.judge))
    depth = max([k] + [m.k for m in wanted if m.family == "retrieval" and m.k is not None])
    from ragworkbook.retrieval.runs import build_retriever

    retriever_kind = args.retriever or "dense"
    retriever = build_retriever(retriever_kind, chunks)
    from ragworkbook.pipeline.naive import NaiveRAG

    generator = _common.generator(args, announce=not args.json)
    pipeline = NaiveRAG(retriever, generator, k=k, depth=depth)
    import hashlib

    corpus_sha = hashlib.sha256("\n".join(f"{c.id}\t{c.text}" for c in chunks).encode("utf-8")).hexdigest()
    return evaluate(pipeline, eval_set, qrels=qrels if qrels else None, k=k,
                    judge=generator if args.judge else None, metrics=[m.name for m in wanted],
                    progress=not args.no_progress, name=args.name, unjudged=unjudged,
                    meta={"retriever": retriever_kind, "corpus": getattr(corpus, "title", "")},
                    out=args.out, resume=args.resume, judge_reliability=checks,
                    settings={"retriever": retriever_kind, "corpus_chunks": f"sha256:{corpus_sha}"})


def cmd_eval(args: argparse.Namespace) -> int:
    """``ragworkbook eval``: run the naive RAG over an eval set, or (``--answers FILE``) score the answers
    a system already produced; print the aggregates, save the report."""
    import os

    from ragworkbook._io import as_regular_file, check_output
    from ragworkbook._validate import check_k

    # before any work: a long run never ends on an unwritable path, nor replaces a device, a pipe or
    # what it reads
    check_output(args.out, _inputs(args))
    if args.resume and not args.out:
        raise UsageError("--resume continues the report written to --out: give --out PATH")
    if args.rubric:
        if not args.judge:
            raise UsageError("--rubric defines a judged metric: add --judge")
        args.metric = list(args.metric or []) + register_rubrics(args.rubric)
    k = check_k(args.k, "--k")
    qrels = None
    if args.qrels:
        from ragworkbook.corpus.trec import read_qrels

        with as_regular_file(args.qrels, "qrels file") as path:  # a pipe: read once, never a hang
            try:
                qrels = read_qrels(path)
            except ValueError as exc:
                raise ValueError(str(exc).replace(str(path), str(args.qrels))) from None
    try:
        if args.answers:
            report = _eval_answers(args, k, qrels)  # saves to --out as it goes
            if not report.metrics:
                from ragworkbook.evaluation.needs import nothing_to_score

                given = {"judge"} if args.judge else set()
                given |= {"contexts"} if any(r.get("contexts") for r in report.rows) else set()
                given |= {"reference"} if any(r.get("reference") for r in report.rows) else set()
                raise UsageError(nothing_to_score(args.answers, given))
        else:
            report = _eval_pipeline(args, k, qrels)  # saves to --out as it goes
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP
        if args.out and os.path.exists(args.out):
            print(f"ragworkbook eval: {exc or 'interrupted'}; the report so far is in {args.out}: run the "
                  "same command with --resume to go on from there", file=sys.stderr)
        raise
    if args.json:
        print(json.dumps({m: a.to_dict() for m, a in report.aggregates.items()}, indent=2))
        return _generation_status(args, report)
    m = report.meta
    if args.answers:
        rel = ", ".join(f"{n} by {src}" if src in ("qrels", "ids", "keyword") else f"{n} none ({src})"
                        for src, n in m.get("relevance", {}).items())
        print(f"{len(report.rows)} answers from {args.answers}, scored as given (nothing retrieved or "
              f"generated); relevance: {rel}; k={k}")
        if m.get("generated_ids"):
            print(f"{m['generated_ids']} records without an id got one from their question "
                  "(`ragworkbook schema answers` says how)")
        if m.get("ignored_fields"):
            print(f"fields not used: {', '.join(m['ignored_fields'])}")
    else:
        print(f"{len(report.rows)} questions, {m.get('backend', '?')}:{m.get('model', '?')}, "
              f"{m.get('retriever', '?')} retrieval, k={k}")
    print(format_summary(report))
    lines = unscored_lines(report)
    if lines:
        print("not scored:")
        print("\n".join(lines))
    if m.get("judge_ledger"):
        from ragworkbook.judging.ledger import format_ledger

        print(format_ledger(m["judge_ledger"], m.get("judge", "")))
    if args.out:
        print(f"report saved to {args.out}")
    sys.stdout.flush()
    return _generation_status(args, report)


def _generation_status(args: argparse.Namespace, report: Report) -> int:
    """Say on stderr which questions could not be answered, and why; 1 when the backend stopped the
    run or no question was answered, else 0."""
    failed = [r for r in report.rows if r.get("error")]
    judge_stopped = report.meta.get("judge_stopped")
    if judge_stopped:
        print(f"ragworkbook eval: error: {judge_stopped}; the judged metrics of the questions after it are "
              "failed (not asked), every other value is kept", file=sys.stderr)
    if not failed:
        return 1 if judge_stopped else 0
    reasons: dict[str, int] = {}
    for r in failed:
        reasons[r["error"]["reason"]] = reasons.get(r["error"]["reason"], 0) + 1
    how = ", ".join(f"{n} {why}" for why, n in reasons.items())
    counted = f"{len(failed)} of {len(report.rows)} questions have no answer ({how})"
    resume = (f"; the report is in {args.out}: after fixing it, run the same command with --resume to ask "
              "only those" if args.out else "")
    if report.meta.get("stopped") or len(failed) == len(report.rows):
        first = failed[0]["error"]["message"]
        print(f"ragworkbook eval: error: {first}", file=sys.stderr)
        print(f"ragworkbook eval: {counted}{resume}", file=sys.stderr)
        return 1
    print(f"ragworkbook eval: {counted}; the other rows are kept{resume}", file=sys.stderr)
    print(f"  first failure ({failed[0]['id']}): {failed[0]['error']['message']}", file=sys.stderr)
    return 1 if judge_stopped else 0


def metric_list(width: int | None = None) -> str:
    """The end of ``eval --help``: every metric of the registry, family by family, as it is written
    (``*``: a default), wrapped to ``width`` (default: the terminal's, as argparse wraps). A new spec is
    listed without a change here."""
    import shutil
    import textwrap

    from ragworkbook.metrics.registry import FAMILIES, specs

    width = width or shutil.get_terminal_size().columns - 2
    head = ("metrics (from the registry; * = computed when no --metric is given and its needs are met; "
            "`ragworkbook metrics NAME` prints a metric's card):")
    lines = textwrap.wrap(head, width)
    for family in FAMILIES:
        names = ", ".join(s.usage + ("*" if s.default else "") for s in specs(family))
        lines += textwrap.wrap(f"{family}: {names}", width, initial_indent="  ", subsequent_indent="    ",
                               break_on_hyphens=False)
    return "\n".join(lines)


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "eval", cmd_eval,
        help="evaluate the RAG pipeline, or the answers of your own system -> report JSON",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the naive RAG pipeline (retrieve k chunks, generate an answer) over an eval set "
        "and score retrieval, generation and (with --judge) judged metrics.\n\n"
        "With --answers FILE, score the answers and contexts another system already produced, as "
        "they are: nothing is retrieved or generated. FILE is JSONL, a JSON array or CSV, with the "
        "workbook's, RAGAS 0.2+ (user_input, response, retrieved_contexts, reference) or RAGAS 0.1 "
        "(question, answer, contexts, ground_truth) field names. Retrieval metrics need relevance "
        "(--qrels with context ids, relevant ids or a keyword per record); generation metrics a "
        "reference; judged metrics --judge. What a record cannot be scored on is counted as "
        "undefined, with its reason.\n\n"
        "File formats: `ragworkbook schema answers` and `ragworkbook schema eval-set` print the "
        "JSON Schemas (README: 'Bring your own system').",
        epilog=metric_list())
    p.add_argument("--answers", default=None, metavar="FILE",
                   help="score this file's answers and contexts as given (.jsonl, .json, .csv or .parquet, "
                   "as ragas, deepeval, Hugging Face datasets and pandas write them; "
                   "`ragworkbook schema answers`)")
    p.add_argument("--qrels", default=None, metavar="FILE",
                   help="TREC qrels (qid 0 docid grade) keyed by question id: the relevance judgements "
                   "(default: the eval set's keywords over the chunks; with --answers: per-record relevant "
                   "ids or keywords)")
    p.add_argument("--eval-set", default=None,
                   help="eval set .json/.jsonl (default: ragworkbook/data/eval_set.json; "
                        "`ragworkbook schema eval-set`)")
    p.add_argument("--corpus", default=None,
                   help="what to retrieve from: a paged corpus .json/.jsonl, a PDF, a .txt/.md file or a "
                   "folder of PDFs and text files (default: ragworkbook/data/attention_notes.json)")
    p.add_argument("--backend", default=None, choices=BACKEND_CHOICES,
                   help="generation (and judge) backend (default: $RAGWORKBOOK_BACKEND or auto)")
    p.add_argument("--model", default=None, help="model name (default: the backend's default)")
    p.add_argument("--recording", default=None, help="replay/record file for the generator")
    p.add_argument("--retriever", default=None, choices=["dense", "bm25", "hybrid"],
                   help="retriever of the pipeline (default: dense)")
    p.add_argument("--k", type=int, default=3,
                   help="chunks given to the generator, and the cutoff of retrieval metrics named without "
                   "one (default 3)")
    p.add_argument("--judge", action=argparse.BooleanOptionalAction, default=False,
                   help="also compute the LLM-judged metrics with the same backend (slow)")
    p.add_argument("--judge-check", action="append", default=None, metavar="FILE",
                   help="a `ragworkbook judge-check --out FILE` result for the judge of this run "
                   "(repeatable, one per judged metric): stored in the report as that metric's reliability "
                   "card, so the targets rating and `compare --fail-if-worse` can trust (or refuse) the "
                   "judge")
    p.add_argument("--metric", action="append", default=None,
                   help="metric to compute, repeatable or comma-separated (default: the registry's "
                   "defaults that apply; every metric is listed below); a retrieval metric without a cutoff "
                   "is taken at k")
    p.add_argument("--rubric", action="append", default=None, metavar="FILE",
                   help="a rubric metric defined in a JSON file (name, criterion, scale, evidence, steps; "
                   "ragworkbook.judging.rubric): registered under its name and computed with the metrics of "
                   "--metric (without --metric: the rubric metrics only; repeatable; needs --judge)")
    p.add_argument("--name", default="", help="a name for this run, stored in the report")
    p.add_argument("--out", default=None,
                   help="write the report JSON here (checked before any work; saved as it goes: a pipeline "
                   "run every 16 questions, --answers every 1000 records (16 with --judge), and when "
                   "interrupted by Ctrl-C, SIGTERM or SIGHUP)")
    p.add_argument("--resume", action="store_true",
                   help="go on from the report in --out: keep its rows made with the same settings (model, "
                   "prompt, retriever, k, corpus, relevance, judge) and the same question, ask only the "
                   "questions without an answer, compute only the values that failed or are missing; with "
                   "--answers, score only the records the interrupted run had not scored")
    add_timeout_option(p)
    p.add_argument("--json", action="store_true", help="print the aggregates as JSON instead of a table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

"""The ``ragworkbook`` command line: the parser and every command's handler.

A handler turns the parsed arguments into calls of the package and prints
the result; the work itself lives in the library. Library modules are
imported inside the handlers, so ``ragworkbook --help`` stays fast.

Exit status: 0 success; 1 when a check fails (``compare --fail-if-worse``,
``reproduce`` with a documented-exact row that did not reproduce, ``doctor``
with a problem) or a generation backend cannot answer (no Ollama server, model
not pulled, strict-replay miss: the message says what to do; ``eval`` then still writes its report,
and exits 0 when only some questions failed, counted in the report); 2 for bad input
(unknown metric, missing, unreadable or malformed file, an output path that cannot be written or
that is one of the command's inputs, a bad ``OLLAMA_HOST`` or ``OPENAI_BASE_URL``, ``--backend openai``
without ``--model``), printed as ``ragworkbook CMD: error:
...``; 141 (128 + SIGPIPE, as for ``cat``), silently, when stdout is a pipe its reader closed
(``ragworkbook ... | head``); 128 + the signal when stopped by Ctrl-C (130), SIGTERM (143) or SIGHUP
(129), the work done so far saved first (:mod:`ragworkbook._signals`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragworkbook.metrics.registry import parse_metric

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.evaluation.report import Report


#: what --backend takes (ragworkbook.llm.defaults.BACKENDS, not imported so that --help stays fast)
BACKEND_CHOICES = ["auto", "ollama", "openai", "embedded", "replay"]


class UsageError(Exception):
    """A problem with the user's input: printed as ``error: ...`` with exit code 2."""


def _generator(args: argparse.Namespace, *, announce: bool) -> Any:
    """The generator a command asked for (``--backend``, ``--model``, ``--recording``,
    ``--timeout``), with a replay-miss hint that gives this command line to record with."""
    import os
    import shlex

    from ragworkbook.llm import get_generator
    from ragworkbook.llm.replay import is_bundled

    backend = (args.backend or os.environ.get("RAGWORKBOOK_BACKEND", "")).strip().lower()
    if backend == "replay" and not args.recording:
        raise UsageError("--backend replay answers from a recording: give --recording FILE (a recording is "
                         "made by running the same command live with RAGWORKBOOK_RECORD=1 and --backend "
                         "embedded or ollama)")
    argv = list(getattr(args, "argv", None) or [])
    if "--backend" in argv:
        i = argv.index("--backend")
        del argv[i:i + 2]
    argv = [a for a in argv if not a.startswith("--backend=")]
    copy = ""
    if args.recording and is_bundled(args.recording):
        # the bundled recordings are the package's own: record into a copy of the user's
        mine = "my_recording.json"
        argv = [mine if a == args.recording else a.replace(args.recording, mine) for a in argv]
        copy = (f"; {args.recording} is a recording bundled with ragworkbook: copy it first (cp "
                f"{shlex.quote(str(args.recording))} {mine}) and record into the copy")
    hint = ("record the missing answers by running the command live: RAGWORKBOOK_RECORD=1 "
            + shlex.join(["ragworkbook", *argv, "--backend", "embedded"])
            + " (or --backend ollama)" + copy)
    kwargs = {"timeout": args.ollama_timeout} if getattr(args, "ollama_timeout", None) is not None else {}
    return get_generator(backend=args.backend, model=args.model, recording=args.recording,
                         announce=announce, record_hint=hint, **kwargs)


def _add_ollama_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", "--ollama-timeout", dest="ollama_timeout", type=float, default=None,
                   metavar="SECONDS",
                   help="how long to wait for the model server: Ollama (connecting, and each read of an "
                   "answer; default $RAGWORKBOOK_OLLAMA_TIMEOUT, else 300) or an OpenAI-compatible one "
                   "(connecting, and the whole answer; default $RAGWORKBOOK_OPENAI_TIMEOUT, else 300)")


def _split_names(values: Iterable[str] | None) -> list[str] | None:
    """The metric names of repeated ``--metric`` options, split at the commas outside parentheses
    (``answer_correctness(weight=0.25,beta=2)`` is one name)."""
    if not values:
        return None
    from ragworkbook.metrics.registry import split_names

    return [v.strip() for chunk in values for v in split_names(chunk) if v.strip()]


# ---------------------------------------------------------------------------------------------
# ir-eval
# ---------------------------------------------------------------------------------------------
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
    if args.rel_format not in ("qrels", "qrels_jg"):
        raise UsageError(f"-R {args.rel_format}: trec_eval's {args.rel_format!r} relevance format (and its "
                         "preference measures) is not implemented in ir-eval; it reads 'qrels' (the default) "
                         "and 'qrels_jg'. Use the C trec_eval for it")
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

    def measure(judged: Any) -> tuple[Any, Any]:
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
        out: dict[str, Any] = {"qrels": str(files[0]), "run": shown_run, "gain": result.gain,
                               "score_precision": args.score_precision, "n_queries": result.n_queries,
                               "mean": result.mean}
        if result.skipped:
            out["skipped"] = result.skipped
        if args.per_query:
            out["per_query"] = result.per_query
        # the engine never returns NaN or infinity; allow_nan=False makes sure stdout stays JSON
        _write_stdout(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    runid = last_tag(files[1], run.tag) if request.runid else None  # trec_eval: the last line's run id
    lines = trec_lines(result.measured, result.query_ids, result.values, result.mean,
                       per_query=args.per_query, runid=runid, show_summary=args.summary,
                       zscores=zscores is not None)
    if args.summary and named and not measures and not any(m.kind == "num_q" for m in result.measured):
        lines.append(f"{'num_q':<22}\tall\t{result.n_queries}")  # --metric: the count of queries too
    if lines:
        _write_stdout("\n".join(lines) + "\n")
    return 0


def _subset(ranked: Any, keep: list[int]) -> Any:
    """The queries ``keep`` of a :class:`~ragworkbook.metrics.ranked.Ranked` (only ``n_ret`` is read)."""
    from types import SimpleNamespace

    import numpy as np

    return SimpleNamespace(n_ret=np.asarray(ranked.n_ret)[keep])


def _write_stdout(text: str, chunk: int = 1 << 16) -> None:
    """Write ``text`` to stdout a piece at a time, as ``cat`` does: one write of megabytes into a pipe
    whose reader has left (``| head``) can end without an error, the kernel taking part of it, while the
    next piece's write fails at once (BrokenPipeError: exit 141)."""
    for start in range(0, len(text), chunk):
        sys.stdout.write(text[start:start + chunk])
        sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# doctor, download-paper
# ---------------------------------------------------------------------------------------------
def cmd_doctor(args: argparse.Namespace) -> int:
    """``ragworkbook doctor [--json] [--deep]``: exit 0 when the offline default works."""
    from ragworkbook.workbook.doctor import doctor_report, format_report

    report = doctor_report(deep=args.deep, chat_timeout=args.ollama_timeout)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


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


# ---------------------------------------------------------------------------------------------
# eval, compare
# ---------------------------------------------------------------------------------------------
def format_summary(report: Report) -> str:
    """The aggregates as a fixed-width table with the targets rating where one applies."""
    from ragworkbook.evaluation.targets import apply_targets

    rated = apply_targets(report)
    ratings = dict(zip(rated["metric"], rated["rating"], strict=True))
    lines = [f"{'metric':<22}{'mean':>9}  {'95% CI':<17}{'n':>4}{'failed':>8}{'undef':>7}  target"]
    for m, a in report.aggregates.items():
        ci = f"[{a.ci_low:.3f}, {a.ci_high:.3f}]" if a.n else "-"
        lines.append(f"{m:<22}{a.mean:>9.3f}  {ci:<17}{a.n:>4}{a.failed:>8}{a.undefined:>7}  "
                     f"{ratings.get(m, '')}")
    return "\n".join(lines)


def _unscored_lines(report: Report) -> list[str]:
    """One line per metric with values not scored: how many, and why (outcome and reason)."""
    out = []
    for m in report.metrics:
        counts: dict[str, int] = {}
        for why in report.unscored(m).values():
            key = f"{why.outcome} ({why.reason})"
            counts[key] = counts.get(key, 0) + 1
        if counts:
            out.append(f"  {m}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return out


def command_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """The files a command reads, by option (a repeatable option: a list; the defaults too): its
    ``--out`` must be none of them (:func:`ragworkbook._io.check_output`)."""
    if args.command == "judge-check":
        from ragworkbook.judging.check import recording_path, resolve_dataset

        if args.labels is not None or args.dataset is None:
            return {"--labels": args.labels, "--recording": args.recording,
                    "--rubric": list(args.rubric or [])}
        recording = args.recording
        if recording is None and args.judge != "word-support":
            recording = recording_path(resolve_dataset(args.dataset).name)
        return {"--recording": recording}
    if args.command != "eval":
        return {}
    from ragworkbook.corpus.eval_set import DEFAULT_EVAL_SET
    from ragworkbook.corpus.pages import DEFAULT_CORPUS
    from ragworkbook.paths import data_path

    inputs: dict[str, Any] = {"--answers": args.answers, "--recording": args.recording, "--qrels": args.qrels,
                              "--judge-check": list(args.judge_check or []),
                              "--rubric": list(args.rubric or [])}
    if not args.answers:
        inputs["--eval-set"] = args.eval_set or data_path(DEFAULT_EVAL_SET)
        inputs["--corpus"] = args.corpus or data_path(DEFAULT_CORPUS)
    return inputs


def _eval_judge(args: argparse.Namespace) -> Any:
    if not args.judge:
        return None
    return _generator(args, announce=not args.json)


def _judge_checks(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """``eval --judge-check FILE``: the judge-check results to attach to the report (their cards)."""
    if not getattr(args, "judge_check", None):
        return None
    from ragworkbook.judging.reliability import read_check

    wanted = _split_names(args.metric) or []
    if not args.judge and not any(m.strip().lower().replace("-", "_") == "word_support" for m in wanted):
        raise UsageError("--judge-check describes the judge of the judged metrics: add --judge (or ask for "
                         "--metric word_support)")
    return [read_check(path) for path in args.judge_check]


def _eval_answers(args: argparse.Namespace, k: int, qrels: Any) -> Report:
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
                            metrics=_split_names(args.metric), progress=not args.no_progress, name=args.name,
                            judge_reliability=_judge_checks(args), out=args.out, resume=args.resume)


def _eval_pipeline(args: argparse.Namespace, k: int, qrels_file: Any) -> Report:
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
    wanted = resolve_metrics(_split_names(args.metric), k=k, have_qrels=bool(qrels),
                             have_judge=bool(args.judge))
    depth = max([k] + [m.k for m in wanted if m.family == "retrieval" and m.k is not None])
    from ragworkbook.retrieval.runs import build_retriever

    retriever_kind = args.retriever or "dense"
    retriever = build_retriever(retriever_kind, chunks)
    from ragworkbook.pipeline.naive import NaiveRAG

    generator = _generator(args, announce=not args.json)
    pipeline = NaiveRAG(retriever, generator, k=k, depth=depth)
    import hashlib

    corpus_sha = hashlib.sha256("\n".join(f"{c.id}\t{c.text}" for c in chunks).encode("utf-8")).hexdigest()
    return evaluate(pipeline, eval_set, qrels=qrels if qrels else None, k=k,
                    judge=generator if args.judge else None, metrics=[m.name for m in wanted],
                    progress=not args.no_progress, name=args.name, unjudged=unjudged,
                    meta={"retriever": retriever_kind, "corpus": getattr(corpus, "title", "")},
                    out=args.out, resume=args.resume, judge_reliability=checks,
                    settings={"retriever": retriever_kind, "corpus_chunks": f"sha256:{corpus_sha}"})


def _register_rubrics(paths: list[str]) -> list[str]:
    """``--rubric FILE``: each file's rubric metric registered; their names."""
    from ragworkbook.judging.rubric import load_rubric, register_rubric

    return [register_rubric(load_rubric(path)).name for path in paths]


def cmd_eval(args: argparse.Namespace) -> int:
    """``ragworkbook eval``: run the naive RAG over an eval set, or (``--answers FILE``) score the answers
    a system already produced; print the aggregates, save the report."""
    import os

    from ragworkbook._io import as_regular_file, check_output
    from ragworkbook._validate import check_k

    # before any work: a long run never ends on an unwritable path, nor replaces a device, a pipe or
    # what it reads
    check_output(args.out, command_inputs(args))
    if args.resume and not args.out:
        raise UsageError("--resume continues the report written to --out: give --out PATH")
    if args.rubric:
        if not args.judge:
            raise UsageError("--rubric defines a judged metric: add --judge")
        args.metric = list(args.metric or []) + _register_rubrics(args.rubric)
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
    lines = _unscored_lines(report)
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


def cmd_schema(args: argparse.Namespace) -> int:
    """``ragworkbook schema NAME``: print the JSON Schema of an input format (``--path``: its file)."""
    from ragworkbook.schemas import SCHEMAS, schema_path, schema_text

    if not args.name:
        for name in SCHEMAS:
            print(f"{name:<10}{schema_path(name)}")
        return 0
    print(schema_path(args.name) if args.path else schema_text(args.name).rstrip("\n"))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    """``ragworkbook metrics [NAME ...]``: every metric's card, from the registry (``--markdown``: the
    README's table)."""
    from ragworkbook.metrics.cards import cards, markdown_table

    if args.markdown:
        print(markdown_table())
        return 0
    print(cards(args.family, args.names or None))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``ragworkbook compare A.json B.json``: paired tests per metric; exit 1 when B is significantly
    worse on a ``--fail-if-worse`` metric, that metric cannot be compared, or it is a judged metric
    whose judge is unmeasured or unreliable in either report (unless ``--trust-judge``); 2 on bad
    input, else 0."""
    from ragworkbook.evaluation.compare import compare_reports
    from ragworkbook.evaluation.report import Report

    a = Report.load(args.report_a)
    b = Report.load(args.report_b)
    if args.eval_set:
        from ragworkbook.corpus.eval_set import load_eval_set

        es = load_eval_set(args.eval_set)
        for path, r in ((args.report_a, a), (args.report_b, b)):
            try:
                r.check_eval_set(es)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
    from ragworkbook.evaluation.gate import parse_max_drop
    from ragworkbook.metrics.registry import find_metric

    max_drop = parse_max_drop(args.max_drop)
    gate_metrics = _split_names(args.fail_if_worse) or []
    metrics = _split_names(args.metric)
    if metrics is None and (gate_metrics or max_drop):  # every metric both have, and the gated ones
        metrics = [m for m in a.metrics if m in b.metrics]
    if metrics is not None:
        metrics += [m for m in [*gate_metrics, *max_drop] if find_metric(m, metrics) is None]
    cmp = compare_reports(a, b, metrics, alpha=args.alpha, method=args.method)
    gating = bool(gate_metrics or max_drop)
    gate = cmp.gate(gate_metrics, trust_judge=args.trust_judge, min_pairs=args.min_pairs,
                    allow_incomplete=args.allow_incomplete or not gating,
                    allow_undefined=args.allow_undefined, max_drop=max_drop)
    if args.json:
        out = {"a": str(args.report_a), "b": str(args.report_b), "alpha": args.alpha, "method": args.method,
               "metrics": json.loads(cmp.table.reset_index().to_json(orient="records")),
               "failed_gates": gate.worse, "not_compared": gate.not_compared,
               "untrusted_judge": gate.untrusted, "incomplete": gate.incomplete, "lost": gate.lost,
               "dropped": gate.dropped,
               "judge_ledger": {"a": a.meta.get("judge_ledger"), "b": b.meta.get("judge_ledger")}}
        print(json.dumps(out, indent=2))
    else:
        print(f"A = {args.report_a}\nB = {args.report_b}\n"
              f"paired {args.method} test per metric, alpha = {args.alpha}, diff = B - A; "
              f"[ci_low, ci_high] = the differences the same test does not reject at alpha "
              f"({cmp.ci_method}), so it excludes 0 exactly when p < alpha")
        print(cmp.table.to_string(float_format=lambda x: f"{x:.3f}"))
        from ragworkbook.judging.ledger import format_ledgers

        costs = format_ledgers(a.meta.get("judge_ledger"), b.meta.get("judge_ledger"))
        if costs:
            print(costs)
    for m in gate.worse:
        print(f"REGRESSION: B is significantly worse than A on {m}", file=sys.stderr)
    for m, why in gate.not_compared.items():
        print(f"GATE FAILED: cannot compare {m}: {why}", file=sys.stderr)
    for m, why in gate.untrusted.items():
        by = "an LLM" if "judge" in parse_metric(m).spec.needs else "a rule"
        print(f"GATE FAILED: {m} is judged by {by} whose reliability is not established: {why}",
              file=sys.stderr)
    for which, why in gate.incomplete.items():
        path = args.report_a if which == "A" else args.report_b
        print(f"GATE FAILED: report {which} ({path}) is incomplete: {why}", file=sys.stderr)
    for m, why in gate.lost.items():
        print(f"GATE FAILED: B lost questions on {m}: {why}", file=sys.stderr)
    for m, why in gate.dropped.items():
        print(f"GATE FAILED: {m} dropped: {why}", file=sys.stderr)
    if not gating:
        for which, why in cmp.incomplete.items():
            print(f"note: report {which} is incomplete: {why}", file=sys.stderr)
    return 0 if gate.passed else 1


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
    lines = _unscored_lines(report)
    if lines:
        print("not scored:")
        print("\n".join(lines))
    if report.meta.get("judge_ledger"):
        from ragworkbook.judging.ledger import format_ledger

        print(format_ledger(report.meta["judge_ledger"], report.meta.get("judge", "")))
    return 0


# ---------------------------------------------------------------------------------------------
# judge-check
# ---------------------------------------------------------------------------------------------
def cmd_judge_check(args: argparse.Namespace) -> int:
    """``ragworkbook judge-check --dataset NAME``: measure a judge against labels, beside its baseline.

    With no backend chosen (neither ``--backend`` nor ``$RAGWORKBOOK_BACKEND``) the judge
    is a strict replay of the embedded model's recorded run on that data set, so the
    command prints the same bytes on every run, over every pair recorded
    (``RECORDED_PAIRS``) unless ``--limit`` says otherwise (a limit the bundled recording
    cannot serve is refused, saying how many pairs it holds); ``--backend embedded`` (or
    ``ollama``) judges live, over the data set's default number of pairs (a few minutes).
    ``--judge word-support`` measures the deterministic word support instead (faithfulness
    pairs, every pair, no model). ``--out FILE`` saves the result (``--json``'s document, with
    the reliability card that ``eval --judge-check FILE`` attaches to a report).
    """
    import math

    from ragworkbook._io import atomic_write_text, check_output
    from ragworkbook.judging.check import (
        RECORDED_PAIRS,
        WORD_SUPPORT,
        judge_check,
        recording_path,
        resolve_dataset,
    )
    from ragworkbook.judging.judge import Judge

    if args.labels is not None:
        return _judge_check_labels(args)
    if args.dataset is None:
        raise UsageError("judge-check needs --dataset NAME (a public labelled data set) or --labels FILE "
                         "(your own labels)")
    for opt, value in (("--metric", args.metric), ("--rubric", args.rubric)):
        if value:
            raise UsageError(f"{opt} goes with --labels FILE; --dataset {args.dataset} measures its own "
                             "metric")
    if args.dataset.strip().lower() == "ragtruth":
        return _ragtruth_check(args)
    spec = resolve_dataset(args.dataset)
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be >= 0 (0 = every pair), got {args.limit}")
    if args.threshold is not None and (math.isnan(args.threshold) or not 0.0 <= args.threshold <= 1.0):
        raise UsageError("--threshold must be a score between 0 and 1 (an item is judged good at or above "
                         f"it), got {args.threshold}")
    check_output(args.out, command_inputs(args))
    progress = not (args.no_progress or args.json)
    if args.judge == WORD_SUPPORT:
        chosen = [opt for opt, v in (("--backend", args.backend), ("--model", args.model),
                                     ("--recording", args.recording)) if v]
        if chosen:
            raise UsageError(f"{', '.join(chosen)} choose an LLM judge; --judge {WORD_SUPPORT} uses none")
        limit: int | str = "default" if args.limit is None else args.limit
        result = judge_check(spec.name, WORD_SUPPORT, limit=limit, threshold=args.threshold,
                             progress=progress)
        replayed = False
    else:
        from ragworkbook.llm import get_generator

        recording = args.recording or recording_path(spec.name)
        generator = get_generator(backend=args.backend, model=args.model, recording=recording,
                                  announce=not args.json)
        replayed = generator.backend == "replay"
        limit = "default" if args.limit is None else args.limit
        if replayed and args.recording is None:  # the bundled recording: every pair it holds, no more
            held = RECORDED_PAIRS[spec.name]
            if args.limit is None:
                limit = held
            elif args.limit == 0 or args.limit > held:
                asked = "every pair" if args.limit == 0 else f"{args.limit} pairs"
                raise UsageError(
                    f"the bundled recording of the embedded judge on {spec.name} holds {held} of its "
                    f"pairs (and their self-consistency repeats); --limit {args.limit} asks for {asked}: "
                    f"give --limit {held} or less, or judge live (--backend embedded, or --backend ollama "
                    "--model qwen3:4b)")
        result = judge_check(spec.name, Judge(generator), limit=limit,
                             threshold=args.threshold, aspect=args.aspect, repeats=args.repeats,
                             temperature=args.temperature, progress=progress)
    doc = result.to_dict()
    if args.out:
        atomic_write_text(args.out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(result.format())
        if replayed:
            print("(replayed; judge live with --backend embedded, or a larger model: "
                  "`ollama pull qwen3:4b`, then --backend ollama --model qwen3:4b)")
        if args.out:
            print(f"saved to {args.out}: attach it to a report with `ragworkbook eval --judge --judge-check "
                  f"{args.out}`")
    return 0


def _judge_check_labels(args: argparse.Namespace) -> int:
    """``judge-check --labels FILE [--metric NAME | --rubric FILE]``: a judged metric against your labels."""
    from ragworkbook._io import atomic_write_text, check_output
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.labels import label_check

    if args.dataset is not None:
        raise UsageError("give --dataset NAME or --labels FILE, not both")
    wrong = [opt for opt, v in (("--limit", args.limit), ("--threshold", args.threshold)) if v is not None]
    if args.judge != "llm":
        wrong.append("--judge")
    if wrong:
        raise UsageError(f"{', '.join(wrong)} apply to --dataset; --labels judges every record of the file")
    names = _register_rubrics(args.rubric) if args.rubric else []
    metric = args.metric or (names[0] if len(names) == 1 else None)
    if metric is None:
        raise UsageError("--labels needs the metric to measure: --metric NAME, or one --rubric FILE")
    check_output(args.out, command_inputs(args))
    from ragworkbook.metrics.registry import parse_metric

    m = parse_metric(metric, "judged")
    judge = None
    if m.spec.uses_judge:
        judge = Judge(_generator(args, announce=not args.json))
    result = label_check(args.labels, judge, metric, progress=not (args.no_progress or args.json))
    doc = result.to_dict()
    if args.out:
        atomic_write_text(args.out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(result.format())
        if args.out:
            print(f"saved to {args.out}")
    return 0


def _ragtruth_check(args: argparse.Namespace) -> int:
    """``judge-check --dataset ragtruth``: response-level hallucination detection on RAGTruth (AUROC, F1 with
    the threshold chosen on the other half of the sources), per task, for word support and the cheap
    baselines, beside the published figures; with ``--backend`` (or ``--model``, ``--recording``) an LLM
    judge's faithfulness too, on a seeded sample of ``--limit`` responses (set it: a judge is slow)."""
    from ragworkbook._io import atomic_write_text, check_writable
    from ragworkbook.judging.ragtruth import ragtruth_check

    if args.threshold is not None:
        raise UsageError("--threshold: on ragtruth each signal's threshold is chosen on the other half of "
                         "the sources; drop the option")
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be >= 0 (0 = every response), got {args.limit}")
    if args.out:
        check_writable(args.out)
    judge = None
    if args.backend or args.model or args.recording:  # an LLM judge beside the signals: faithfulness
        from ragworkbook.judging.judge import Judge

        if args.limit is None:
            raise UsageError("an LLM judge on all 2,617 RAGTruth responses takes hours (the embedded model: "
                             "about a minute a response): give --limit N (a seeded sample, e.g. --limit 30), "
                             "or --limit 0 to judge every response")
        judge = Judge(_generator(args, announce=not args.json))
    result = ragtruth_check(limit=args.limit or None, judge=judge,
                            progress=judge is not None and not (args.no_progress or args.json))
    doc = result.to_dict()
    if args.out:
        atomic_write_text(args.out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(doc, indent=2, ensure_ascii=False) if args.json else result.format())
    return 0


# ---------------------------------------------------------------------------------------------
# reproduce
# ---------------------------------------------------------------------------------------------
def cmd_reproduce(args: argparse.Namespace) -> int:
    """``ragworkbook reproduce [--json] [--pdf FILE]``: recompute and print every documented number
    (with ``--pdf``, C1 and C4 on the user's copy of the paper unless ``--only`` names rows).

    Exit code 1 if a row documented as exact did not reproduce, else 0.
    """
    from ragworkbook.workbook.reproduce import NEEDS_MODEL, PDF_ROWS, check_ids, format_table, reproduce_all

    only = _split_names(args.only)
    if args.pdf and only is None:
        only = list(PDF_ROWS)
    ids = check_ids(only)
    generator = None
    if any(i in NEEDS_MODEL for i in ids):
        # with --json, stdout must be JSON only: no "using embedded backend" line
        generator = _generator(args, announce=not args.json)
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


# ---------------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------------
def _datasets_command(args: argparse.Namespace) -> int:
    """``ragworkbook datasets list | fetch NAME | path NAME | info NAME``: the public data sets the
    workbook downloads on demand (``ragworkbook.datasets``)."""
    from ragworkbook.datasets import CATALOGUE, cache_root, dataset_dir, fetch, get, is_cached
    from ragworkbook.datasets.cache import DatasetMissing, source_of

    action = args.datasets_action
    if action in (None, "list"):
        print(f"{'name':<12} {'cached':<7} {'size':>9}  title")
        for ds in CATALOGUE.values():
            cached = "yes" if is_cached(ds.name) else "no"
            print(f"{ds.name:<12} {cached:<7} {ds.size / 1e6:>7.2f}MB  {ds.title}")
        print(f"cache: {cache_root()}")
        return 0
    ds = get(args.name)
    if action == "fetch":
        paths = fetch(ds.name, progress=not args.no_progress)
        print(f"{ds.name}: {len(paths)} files checked (sha256) in {dataset_dir(ds.name)}")
        return 0
    if action == "path":
        if not is_cached(ds.name):
            raise DatasetMissing(f"data set {ds.name!r} is not in the cache {cache_root()}; get it with "
                                 f"`ragworkbook datasets fetch {ds.name}`")
        print(dataset_dir(ds.name))
        return 0
    print(f"{ds.name}: {ds.title}")
    print(f"  licence:  {ds.licence}")
    print(f"  citation: {ds.citation}")
    print(f"  homepage: {ds.homepage}")
    print(f"  commit:   {ds.commit}")
    print(f"  parser:   {ds.parser}")
    print(f"  cached:   {'yes, in ' + str(dataset_dir(ds.name)) if is_cached(ds.name) else 'no'}")
    for f in ds.files:
        print(f"  {f.name}  {f.size:,} bytes  sha256 {f.sha256}\n    from {source_of(f)}")
    return 0



# ---------------------------------------------------------------------------------------------
# the parser
# ---------------------------------------------------------------------------------------------
def _metric_help(family: str) -> str:
    from ragworkbook.metrics.registry import known_names

    return known_names(family)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (each sub-parser's ``func`` is its handler)."""
    parser = argparse.ArgumentParser(
        prog="ragworkbook",
        description="RAG evaluation, hands-on: metrics, local generation and the documented numbers.",
    )
    from ragworkbook import __version__

    parser.add_argument("--version", action="version", version=f"ragworkbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Callable[[argparse.Namespace], int], **kw: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, **kw)
        p.set_defaults(func=handler)
        return p

    # --- ir-eval ---------------------------------------------------------------------------
    p = add("ir-eval", cmd_ir_eval,
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
                   + _metric_help("retrieval"))
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
                   help="the relevance file's format: qrels (trec_eval's prefs, qrels_prefs and qrels_jg "
                   "are refused with a message)")
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

    # --- doctor, download-paper ----------------------------------------------------------
    p = add("doctor", cmd_doctor, help="what is installed, which backend is live, models found")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--deep", action="store_true",
                   help="also load NLTK's WordNet to prove it works (several seconds)")
    p.add_argument("--ollama-timeout", type=float, default=None, metavar="SECONDS",
                   help="how long the chat check waits for the Ollama server (default "
                   "$RAGWORKBOOK_OLLAMA_TIMEOUT, else 60)")
    p = add("download-paper", cmd_download_paper,
            help="download 'Attention Is All You Need' from arXiv (needs the internet)")
    p.add_argument("--out", default=None, help="where to save the PDF (default: the cache folder)")
    p.add_argument("--force", action="store_true", help="download even if the file is already there")

    # --- eval, compare, reproduce ----------------------------------------------------------
    p = add("eval", cmd_eval,
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
            "JSON Schemas (README: 'Bring your own system').")
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
                   "defaults that apply); a retrieval metric without a cutoff is taken at k")
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
    _add_ollama_timeout(p)
    p.add_argument("--json", action="store_true", help="print the aggregates as JSON instead of a table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = add("metrics", cmd_metrics, help="print every metric's card: definition, parameters, conventions",
            description="Every metric of the registry with its definition, names, needs, parameters (type, "
            "default, range), conventions (direction, range, aggregate), trec_eval names, targets and the "
            "judge-check that measures its judge. Give names to see only those.")
    p.add_argument("names", nargs="*", metavar="NAME", help="metrics to show (default: all)")
    p.add_argument("--family", choices=("retrieval", "generation", "judged"), default=None,
                   help="only this family")
    p.add_argument("--markdown", action="store_true", help="the README's metric table instead")

    p = add("schema", cmd_schema, help="print the JSON Schema of a file format (answers, eval-set, report)",
            description="Print the JSON Schema of a file format: `answers` (the outputs of a RAG "
            "system, for `eval --answers`), `eval-set` (the questions, for `eval --eval-set`) or `report` "
            "(the report `eval --out` writes, which `compare` and `report` read). Each input schema's "
            "description states the accepted file forms, field names, the id rule and where relevance comes "
            "from. Without a name: list the schemas and their files.")
    p.add_argument("name", nargs="?", choices=["answers", "eval-set", "report"],
                   help="which schema (report: the file `eval --out` writes)")
    p.add_argument("--path", action="store_true", help="print the schema file's path instead")

    p = add("compare", cmd_compare, help="compare two saved reports with paired tests",
            description="Compare report B against report A question by question (paired "
            "randomisation test per metric). Exit 1 when B is significantly worse on a "
            "--fail-if-worse metric, or when that metric cannot be compared well enough to tell (fewer "
            "than --min-pairs questions scored in both, 6 at alpha 0.05, or more values failed than "
            "compared), or when a report is an interrupted run (unless --allow-incomplete): usable as a "
            "regression gate in CI.")
    p.add_argument("report_a", help="baseline report JSON")
    p.add_argument("report_b", help="new report JSON")
    p.add_argument("--metric", action="append", default=None,
                   help="metric to compare, repeatable or comma-separated (default: all in both)")
    p.add_argument("--fail-if-worse", action="append", default=[], metavar="METRIC",
                   help="exit 1 if B is significantly worse than A on METRIC, or METRIC cannot be "
                   "compared (repeatable)")
    p.add_argument("--min-pairs", type=int, default=None, metavar="N",
                   help="fewest questions scored in both reports for the gate to judge a metric (default: "
                   "the fewest with which the test can reach p < alpha: 6 at alpha 0.05); the gate also "
                   "fails a metric with more values failed than compared")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="gate on a report saved by an interrupted run (meta.complete false); by default the "
                   "gate fails on it and says how many questions were not run")
    p.add_argument("--allow-undefined", action="store_true",
                   help="compare only the questions both reports scored: by default a question A scored "
                   "and B left undefined (no answer, no reference, no contexts) fails the gate, since a "
                   "question B lost is a regression")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=DROP",
                   help="exit 1 if B's mean on METRIC (over the questions both scored) is worse than A's by "
                   "more than DROP, significant or not (repeatable, e.g. --max-drop token_f1=0.05)")
    p.add_argument("--trust-judge", action="store_true",
                   help="gate on a judged metric even when its judge's reliability is unmeasured or below "
                   "the agreement threshold (by default the gate fails on it and says why)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--method", default="randomization", choices=["randomization", "bootstrap"])
    p.add_argument("--eval-set", default=None,
                   help="also check that both reports are on exactly this eval set's questions")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = add("report", cmd_report, help="show a saved report, or write it as one HTML page (--html OUT)",
            description="Print a saved report's table and judge ledger, or with --html OUT write it as one "
            "self-contained HTML page (inline CSS and SVG, nothing fetched): the scores with their 95% "
            "intervals, failed and undefined counts with their reasons, the judge's card (agreement with "
            "human labels where `judge-check` measured it, and its baseline), the ledger of calls, tokens "
            "and seconds, and one row per question. Written atomically, never over the report.")
    p.add_argument("file", help="a report JSON (`eval --out`)")
    p.add_argument("--html", default=None, metavar="OUT", help="write the HTML page to OUT")
    p.add_argument("--title", default=None, help="the page's title (default: the report's name or file)")

    p = add("judge-check", cmd_judge_check,
            help="measure a judge against labelled data (WikiEval, RAGChecker), beside its baseline",
            description="Run the package's judged metric (or the pairwise judge, or the deterministic word "
            "support) on a public labelled data set and report its agreement with the labels beside the data "
            "set's baseline (word overlap, question-answer cosine, similar-sentence share, token-F1 "
            "difference) on the same pairs: pairwise accuracy as the RAGAS paper defines it (a tie counts "
            "half), the judge-minus-baseline difference with its interval, Cohen's kappa and raw agreement, "
            "TPR/TNR, the majority-class baseline, the parse-failure rate, self-consistency and (pairwise) "
            "position bias and the order-inconsistency rate. Rates have Wilson intervals, pairwise accuracy "
            "and kappa a bootstrap over pairs; under 5 items: 'too few'. Without --backend it replays the "
            "embedded model's recorded run. WikiEval's good item comes from its construction labels.")
    p.add_argument("--dataset", default=None,
                   help="wikieval-faithfulness (ff), wikieval-answer-relevance (ar), "
                   "wikieval-context-relevance (cr), ragchecker, or ragtruth (response-level hallucination "
                   "detection: word support and the cheap baselines, AUROC and F1 per task; with --backend "
                   "also the judge's faithfulness, on a seeded sample of --limit responses); or give "
                   "--labels FILE")
    p.add_argument("--labels", default=None, metavar="FILE",
                   help="your own labels instead of a public data set: JSONL/JSON/CSV records with id, "
                   "question, answer, contexts, reference and label; measures --metric (or the --rubric "
                   "metric) against them by Spearman correlation (and, for a rubric, exact agreement and "
                   "kappa), beside a baseline with no model (ragworkbook.judging.labels)")
    p.add_argument("--metric", default=None,
                   help="with --labels: the judged metric to measure (default: the --rubric metric)")
    p.add_argument("--rubric", action="append", default=None, metavar="FILE",
                   help="with --labels: a rubric metric defined in a JSON file (ragworkbook.judging.rubric)")
    p.add_argument("--backend", default=None, choices=BACKEND_CHOICES,
                   help="judge backend (default: $RAGWORKBOOK_BACKEND, else replay of the bundled recording)")
    p.add_argument("--model", default=None, help="judge model (default: the backend's default)")
    p.add_argument("--recording", default=None,
                   help="replay/record file (default: "
                        "ragworkbook/data/recordings/judge_check_<dataset>.json)")
    p.add_argument("--limit", type=int, default=None,
                   help="pairs to judge (default live: the data set's, a few minutes on the embedded model: "
                   "ff 8, ar 20, cr 20, ragchecker 10; default replaying the bundled recording: every pair "
                   "it holds, ff 30, ar 50, cr 30, ragchecker 24, and no more; word support: every pair; "
                   "0 = every pair of the data set)")
    p.add_argument("--threshold", type=float, default=None,
                   help="WikiEval: score in [0, 1] at or above which an item is judged good "
                   "(default ff 1.0, word support 0.9, ar/cr 0.5)")
    p.add_argument("--judge", default="llm", choices=["llm", "word-support"],
                   help="what is measured: llm (default: the judged metric through --backend's model) or "
                   "word-support (the deterministic word support of ragworkbook.metrics.support, on "
                   "wikieval-faithfulness; every pair, instantly)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="also save the result as JSON (the --json document, with the reliability card): "
                   "attach it to a report with `ragworkbook eval --judge --judge-check FILE`")
    p.add_argument("--aspect", default="overall", choices=["correctness", "completeness", "overall"],
                   help="RAGChecker: which annotator label to compare with (default overall)")
    p.add_argument("--repeats", type=int, default=2,
                   help="self-consistency repeats at --temperature on the first pairs (default 2; <2: none)")
    p.add_argument("--temperature", type=float, default=0.8, help="temperature of the repeats (default 0.8)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = add("reproduce", cmd_reproduce, help="recompute every documented number",
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
    _add_ollama_timeout(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p = add("datasets", _datasets_command,
            help="the public data sets, downloaded on demand (list, fetch, path, info)",
            description="The public labelled data sets the workbook reads (WikiEval, RAGChecker's "
            "meta-evaluation, RAGTruth, trec_eval's test suite) are not shipped: each is downloaded on first "
            "use from its public home at a pinned commit (or from $RAGWORKBOOK_DATASETS_MIRROR, a folder or "
            "http(s) URL laid out like ../shared/data), checked against its sha256 and kept in "
            "$RAGWORKBOOK_CACHE/datasets.")
    dsub = p.add_subparsers(dest="datasets_action", metavar="ACTION")
    dsub.add_parser("list", help="every data set, whether it is cached, its size")
    for action, text in (("fetch", "download NAME into the cache (checked), with progress"),
                         ("path", "print the cache folder of NAME (exit 2 if it is not cached)"),
                         ("info", "licence, citation, source and checksum of every file of NAME")):
        q = dsub.add_parser(action, help=text)
        q.add_argument("name", metavar="NAME", help="a data set of `ragworkbook datasets list`")
        if action == "fetch":
            q.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (see the module docstring)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from ragworkbook._io import release_outputs
    from ragworkbook._signals import exit_status, stop_like_interrupt

    try:
        with stop_like_interrupt():  # SIGTERM and SIGHUP save the work done so far, as Ctrl-C does
            status = int(args.func(args) or 0)
            sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:  # `ragworkbook ... | head`: the reader left; nothing to say, as `cat` would
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status of a command the closed pipe stopped
    except (UsageError, OSError, ValueError) as exc:  # bad input, an unreadable or unwritable path
        print(f"ragworkbook {args.command}: error: {_shown(exc)}", file=sys.stderr)
        return 2
    except RecursionError:  # a reader that recursed on deeply nested input: bad input, not a crash
        print(f"ragworkbook {args.command}: error: an input is nested too deeply to read (over "
              f"{sys.getrecursionlimit()} levels of brackets); check the files given", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: 128 + the signal
        return exit_status(exc)
    except Exception as exc:
        # backend down, model not pulled, replay miss: the message says what to do. An LLMError was raised
        # by ragworkbook.llm, so that module is loaded; a command that never loads it (ir-eval) stays fast
        llm_base = sys.modules.get("ragworkbook.llm.base")
        if llm_base is None or not isinstance(exc, llm_base.LLMError):
            raise
        print(f"ragworkbook {args.command}: error: {_shown(exc)}", file=sys.stderr)
        return 1
    finally:
        release_outputs()


def _shown(exc: BaseException) -> str:
    """An error's message fit to print: credentials in a URL of it redacted
    (:func:`ragworkbook.llm.host.redact_text`)."""
    from ragworkbook.llm.host import redact_text

    return redact_text(str(exc))


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of the closed pipe is silent."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file (captured): nothing will be flushed to a pipe
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

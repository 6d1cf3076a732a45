"""``ragworkbook judge-check``: a judge measured against labelled data, beside its baseline."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Protocol

from ragworkbook.cli import _common
from ragworkbook.cli._common import BACKEND_CHOICES, Subparsers, UsageError, add_command, register_rubrics
from ragworkbook.metrics.registry import parse_metric

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook._io import Inputs
    from ragworkbook._types import JSONObject


def _inputs(args: argparse.Namespace) -> Inputs:
    """The files ``judge-check`` reads, by option (a repeatable option: a list; the defaults too): its
    ``--out`` must be none of them (:func:`ragworkbook._io.check_output`)."""
    from ragworkbook.judging.check import recording_path, resolve_dataset

    if args.labels is not None or args.dataset is None:
        return {"--labels": args.labels, "--recording": args.recording,
                "--rubric": list(args.rubric or [])}
    recording = args.recording
    if recording is None and args.judge != "word-support":
        recording = recording_path(resolve_dataset(args.dataset).name)
    return {"--recording": recording}


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

    from ragworkbook._io import check_output
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
    if args.dataset.strip().lower() == "ragtruth":
        return _ragtruth_check(args)
    for opt, value in (("--metric", args.metric), ("--rubric", args.rubric)):
        if value:
            raise UsageError(f"{opt} goes with --labels FILE; --dataset {args.dataset} measures its own "
                             "metric")
    spec = resolve_dataset(args.dataset)
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be >= 0 (0 = every pair), got {args.limit}")
    if args.threshold is not None and (math.isnan(args.threshold) or not 0.0 <= args.threshold <= 1.0):
        raise UsageError("--threshold must be a score between 0 and 1 (an item is judged good at or above "
                         f"it), got {args.threshold}")
    check_output(args.out, _inputs(args))
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
    notes = ["(replayed; judge live with --backend embedded, or a larger model: `ollama pull qwen3:4b`, "
             "then --backend ollama --model qwen3:4b)"] if replayed else []
    if args.out:
        notes.append(f"saved to {args.out}: attach it to a report with "
                     f"`ragworkbook eval --judge --judge-check {args.out}`")
    return _emit(args, result, notes)


def _judge_check_labels(args: argparse.Namespace) -> int:
    """``judge-check --labels FILE [--metric NAME | --rubric FILE]``: a judged metric against your labels."""
    from ragworkbook._io import check_output
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.labels import label_check

    if args.dataset is not None:
        raise UsageError("give --dataset NAME or --labels FILE, not both")
    wrong = [opt for opt, v in (("--limit", args.limit), ("--threshold", args.threshold)) if v is not None]
    if args.judge != "llm":
        wrong.append("--judge")
    if wrong:
        raise UsageError(f"{', '.join(wrong)} apply to --dataset; --labels judges every record of the file")
    names = register_rubrics(args.rubric) if args.rubric else []
    metric = args.metric or (names[0] if len(names) == 1 else None)
    if metric is None:
        raise UsageError("--labels needs the metric to measure: --metric NAME, or one --rubric FILE")
    check_output(args.out, _inputs(args))

    m = parse_metric(metric, "judged")
    judge = None
    if m.spec.uses_judge:
        judge = Judge(_common.generator(args, announce=not args.json))
    result = label_check(args.labels, judge, metric, progress=not (args.no_progress or args.json))
    return _emit(args, result, [f"saved to {args.out}"] if args.out else [])


def _ragtruth_check(args: argparse.Namespace) -> int:
    """``judge-check --dataset ragtruth``: response-level hallucination detection on RAGTruth (AUROC, F1 with
    the threshold chosen on the other half of the sources), per task, for word support and the cheap
    baselines, beside the published figures; with ``--backend`` (or ``--model``, ``--recording``) an LLM
    judge's faithfulness too, on a seeded sample of ``--limit`` responses (set it: a judge is slow)."""
    from ragworkbook._io import check_writable
    from ragworkbook.judging.ragtruth import ragtruth_check

    if args.threshold is not None:
        raise UsageError("--threshold: on ragtruth each signal's threshold is chosen on the other half of "
                         "the sources; drop the option")
    if args.rubric:
        raise UsageError("--rubric goes with --labels FILE; on ragtruth give --metric NAME (a judged metric)")
    judged = args.backend or args.model or args.recording
    metric = args.metric or "faithfulness"
    if args.metric is not None:
        if not judged:
            raise UsageError("--metric on ragtruth names the LLM judge's metric: give --backend (and "
                             "--limit) too, or drop --metric for word support and the baselines")
        if not parse_metric(args.metric, "judged").spec.uses_judge:
            raise UsageError(f"--metric {args.metric} asks no judge; on ragtruth --metric names the judged "
                             "metric whose 1 - score becomes the LLM judge's signal (e.g. faithfulness)")
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be >= 0 (0 = every response), got {args.limit}")
    if args.out:
        check_writable(args.out)
    judge = None
    if judged:  # an LLM judge beside the signals: 1 - its metric (faithfulness unless --metric)
        from ragworkbook.judging.judge import Judge

        if args.limit is None:
            raise UsageError("an LLM judge on all 2,617 RAGTruth responses takes hours (the embedded model: "
                             "about a minute a response): give --limit N (a seeded sample, e.g. --limit 30), "
                             "or --limit 0 to judge every response")
        judge = Judge(_common.generator(args, announce=not args.json))
    result = ragtruth_check(limit=args.limit or None, judge=judge, metric=metric,
                            progress=judge is not None and not (args.no_progress or args.json))
    return _emit(args, result, [])


class _Result(Protocol):
    def to_dict(self) -> JSONObject: ...
    def format(self) -> str: ...


def _emit(args: argparse.Namespace, result: _Result, notes: list[str]) -> int:
    """Save the result's JSON to ``--out`` (atomically), then print it (``--json``) or its text and the
    ``notes`` under it."""
    from ragworkbook._io import atomic_write_text

    doc = result.to_dict()
    if args.out:
        atomic_write_text(args.out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print("\n".join([result.format(), *notes]))
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "judge-check", cmd_judge_check,
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
                   help="with --labels: the judged metric to measure (default: the --rubric metric); "
                   "with --dataset ragtruth and --backend: the judged metric whose 1 - score is the judge's "
                   "hallucination signal (default faithfulness)")
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

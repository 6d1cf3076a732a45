"""``ragworkbook compare``: two saved reports, paired tests per metric, the regression gate."""

from __future__ import annotations

import argparse
import json
import sys

from ragworkbook.cli._common import Subparsers, add_command, split_names
from ragworkbook.metrics.registry import parse_metric


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
    gate_metrics = split_names(args.fail_if_worse) or []
    metrics = split_names(args.metric)
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


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "compare", cmd_compare, help="compare two saved reports with paired tests",
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

"""``ragworkbook metrics``: every metric's card, from the registry."""

from __future__ import annotations

import argparse

from ragworkbook.cli._common import Subparsers, add_command


def cmd_metrics(args: argparse.Namespace) -> int:
    """``ragworkbook metrics [NAME ...]``: every metric's card, from the registry (``--markdown``: the
    README's table)."""
    from ragworkbook.metrics.cards import cards, markdown_table

    if args.markdown:
        print(markdown_table())
        return 0
    print(cards(args.family, args.names or None))
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "metrics", cmd_metrics,
        help="print every metric's card: definition, parameters, conventions",
            description="Every metric of the registry with its definition, names, needs, parameters (type, "
            "default, range), conventions (direction, range, aggregate), trec_eval names, targets and the "
            "judge-check that measures its judge. Give names to see only those.")
    p.add_argument("names", nargs="*", metavar="NAME", help="metrics to show (default: all)")
    p.add_argument("--family", choices=("retrieval", "generation", "judged"), default=None,
                   help="only this family")
    p.add_argument("--markdown", action="store_true", help="the README's metric table instead")

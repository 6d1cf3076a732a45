"""``ragworkbook doctor``: what is installed, which backend is live, the models found."""

from __future__ import annotations

import argparse
import json

from ragworkbook.cli._common import Subparsers, add_command


def cmd_doctor(args: argparse.Namespace) -> int:
    """``ragworkbook doctor [--json] [--deep]``: exit 0 when the offline default works."""
    from ragworkbook.workbook.doctor import doctor_report, format_report

    report = doctor_report(deep=args.deep, chat_timeout=args.ollama_timeout)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(sub, "doctor", cmd_doctor, help="what is installed, which backend is live, models found")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--deep", action="store_true",
                   help="also load NLTK's WordNet to prove it works (several seconds)")
    p.add_argument("--ollama-timeout", type=float, default=None, metavar="SECONDS",
                   help="how long the chat check waits for the Ollama server (default "
                   "$RAGWORKBOOK_OLLAMA_TIMEOUT, else 60)")

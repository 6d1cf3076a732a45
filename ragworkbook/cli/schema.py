"""``ragworkbook schema``: the JSON Schemas of the file formats."""

from __future__ import annotations

import argparse

from ragworkbook.cli._common import Subparsers, add_command


def cmd_schema(args: argparse.Namespace) -> int:
    """``ragworkbook schema NAME``: print the JSON Schema of an input format (``--path``: its file)."""
    from ragworkbook.schemas import SCHEMAS, schema_path, schema_text

    if not args.name:
        for name in SCHEMAS:
            print(f"{name:<10}{schema_path(name)}")
        return 0
    print(schema_path(args.name) if args.path else schema_text(args.name).rstrip("\n"))
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "schema", cmd_schema,
        help="print the JSON Schema of a file format (answers, eval-set, report)",
            description="Print the JSON Schema of a file format: `answers` (the outputs of a RAG "
            "system, for `eval --answers`), `eval-set` (the questions, for `eval --eval-set`) or `report` "
            "(the report `eval --out` writes, which `compare` and `report` read). Each input schema's "
            "description states the accepted file forms, field names, the id rule and where relevance comes "
            "from. Without a name: list the schemas and their files.")
    p.add_argument("name", nargs="?", choices=["answers", "eval-set", "report"],
                   help="which schema (report: the file `eval --out` writes)")
    p.add_argument("--path", action="store_true", help="print the schema file's path instead")

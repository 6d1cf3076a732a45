"""The ``ragworkbook`` command line: the parser, built from one module per command, and :func:`main`.

Each command is a module of this package (``ir_eval``, ``eval``, ``compare``, ...) with its sub-parser
(``add_parser``) and its handler (``cmd_*``). A handler turns the parsed arguments into calls of the
package and prints the result; the work itself lives in the library. Library modules are imported
inside the handlers, so ``ragworkbook --help`` stays fast. What several commands share is in
:mod:`ragworkbook.cli._common`.

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
import sys
from collections.abc import Sequence

from ragworkbook.cli import (
    compare,
    datasets,
    doctor,
    download_paper,
    eval,
    ir_eval,
    judge_check,
    metrics,
    report,
    reproduce,
    schema,
)
from ragworkbook.cli._common import BACKEND_CHOICES, UsageError, format_summary

__all__ = ["BACKEND_CHOICES", "COMMANDS", "UsageError", "build_parser", "format_summary", "main"]

#: The commands, in the order ``ragworkbook --help`` lists them: each module adds its sub-parser.
COMMANDS = (ir_eval, doctor, download_paper, eval, metrics, schema, compare, report, judge_check, reproduce,
            datasets)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (each sub-parser's ``func`` is its handler)."""
    parser = argparse.ArgumentParser(
        prog="ragworkbook",
        description="RAG evaluation, hands-on: metrics, local generation and the documented numbers.",
    )
    from ragworkbook import __version__

    parser.add_argument("--version", action="version", version=f"ragworkbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
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


"""What several commands share: the usage error, adding a command's sub-parser, the generator a command
asks for, the timeout option, metric names from repeated options, rubric files, the report's summary
table and a writer of long output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.evaluation.report import Report
    from ragworkbook.llm.base import Generator

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = argparse._SubParsersAction

#: what --backend takes (ragworkbook.llm.defaults.BACKENDS, not imported so that --help stays fast)
BACKEND_CHOICES = ["auto", "ollama", "openai", "embedded", "replay"]


class UsageError(Exception):
    """A problem with the user's input: printed as ``error: ...`` with exit code 2."""


def add_command(sub: Subparsers, name: str, handler: Callable[[argparse.Namespace], int],
                **kw: str | type[argparse.HelpFormatter]) -> argparse.ArgumentParser:
    """The sub-parser of command ``name``, run by ``handler`` (its ``func``)."""
    p = sub.add_parser(name, **kw)
    p.set_defaults(func=handler)
    return p


def generator(args: argparse.Namespace, *, announce: bool) -> Generator:
    """The generator a command asked for (``--backend``, ``--model``, ``--recording``,
    ``--timeout``), with a replay-miss hint that gives this command line to record with. Commands call
    it as ``_common.generator``, so that a test replaces it in one place."""
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


def add_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--timeout SECONDS``: how long a command waits for the model server."""
    p.add_argument("--timeout", "--ollama-timeout", dest="ollama_timeout", type=float, default=None,
                   metavar="SECONDS",
                   help="how long to wait for the model server: Ollama (connecting, and each read of an "
                   "answer; default $RAGWORKBOOK_OLLAMA_TIMEOUT, else 300) or an OpenAI-compatible one "
                   "(connecting, and the whole answer; default $RAGWORKBOOK_OPENAI_TIMEOUT, else 300)")


def split_names(values: Iterable[str] | None) -> list[str] | None:
    """The metric names of repeated ``--metric`` options, split at the commas outside parentheses
    (``answer_correctness(weight=0.25,beta=2)`` is one name)."""
    if not values:
        return None
    from ragworkbook.metrics.registry import split_names as split_one

    return [v.strip() for chunk in values for v in split_one(chunk) if v.strip()]


def write_stdout(text: str, chunk: int = 1 << 16) -> None:
    """Write ``text`` to stdout a piece at a time, as ``cat`` does: one write of megabytes into a pipe
    whose reader has left (``| head``) can end without an error, the kernel taking part of it, while the
    next piece's write fails at once (BrokenPipeError: exit 141)."""
    for start in range(0, len(text), chunk):
        sys.stdout.write(text[start:start + chunk])
        sys.stdout.flush()


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


def unscored_lines(report: Report) -> list[str]:
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


def register_rubrics(paths: list[str]) -> list[str]:
    """``--rubric FILE``: each file's rubric metric registered; their names."""
    from ragworkbook.judging.rubric import load_rubric, register_rubric

    return [register_rubric(load_rubric(path)).name for path in paths]

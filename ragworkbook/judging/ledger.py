"""What judging cost: per judged metric, the judge's requests, model calls, failures, tokens, seconds.

Every :class:`~ragworkbook.judging.judge.JudgeCall` carries the
:class:`~ragworkbook.llm.base.Usage` of its request (the model calls it took, its retries
included; the prompt and completion tokens the backend itself reported; the seconds it took),
and the judge's cache keeps it with the judgment. While a metric is computed through
:func:`~ragworkbook.judging.metrics.aevaluate_judged`, every call the judge returns is noted
under that metric (:func:`charging`, a context variable: concurrent metrics never mix), and
the :class:`Cost` of a metric sums them:

- ``requests``: judge requests that went to the model (one per prompt asked, whatever its retries);
- ``calls``: model calls they took (a request whose output did not parse is asked again:
  :attr:`Usage.attempts`);
- ``failed``: requests that gave no usable judgment (unparseable after the retries, a timeout, a
  server error, a reply of the wrong length);
- ``cache_hits``: requests answered from the judge's cache. **A cache hit costs nothing**: no
  call, no token, no second; ``cache_saved_seconds`` is what the cached answers had cost when
  they were first asked;
- ``prompt_tokens`` / ``completion_tokens``: the sums of the counts the backend reported
  (Ollama's ``prompt_eval_count`` / ``eval_count``, an OpenAI-compatible server's ``usage``,
  llama.cpp's own counts); ``tokens_unreported`` counts the requests whose counts are unknown
  (a timeout, a backend that reports none): never guessed;
- ``seconds``: the sum of the requests' wall times (each measured around the backend's call; a
  replay reports the recorded time); ``seconds_unknown`` counts the requests without one (a
  replayed answer recorded before times were kept). The judge runs requests concurrently
  (``Judge.max_concurrency``) and a request waiting for a busy backend is timed while it waits,
  so the sum can exceed the run's elapsed time: it is what each metric asked of the backend,
  not a clock.

A judged metric computed from another's judgments (``hallucination`` from faithfulness) has
no cost of its own (``derived_from`` names its source), so the total counts each call once.
The :class:`Ledger` of a run is stored in the report's meta (``judge_ledger``), printed
under ``ragworkbook eval``'s table and shown side by side by ``ragworkbook compare``.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.judging.judge import JudgeCall

__all__ = ["Cost", "Ledger", "CallLog", "charging", "note_call", "merge_ledgers", "format_ledger",
           "format_ledgers"]


@dataclass
class Cost:
    """What one metric's judging cost (see the module docstring for each count)."""

    requests: int = 0
    calls: int = 0
    failed: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_unreported: int = 0
    seconds: float = 0.0
    seconds_unknown: int = 0
    cache_saved_seconds: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(Cost)})

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens (of the requests whose counts were reported)."""
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of_calls(cls, calls: Sequence[JudgeCall]) -> Cost:
        """The cost of ``calls`` (cache hits counted, at no cost)."""
        out = cls()
        for c in calls:
            u = c.usage
            if c.cached:
                out.cache_hits += 1
                if u is not None and u.seconds is not None:
                    out.cache_saved_seconds += u.seconds
                continue
            out.requests += 1
            out.calls += u.attempts if u is not None else max(c.attempts, 1)
            out.failed += c.error is not None
            if u is not None and u.prompt_tokens is not None and u.completion_tokens is not None:
                out.prompt_tokens += u.prompt_tokens
                out.completion_tokens += u.completion_tokens
            else:
                out.tokens_unreported += 1
            if u is not None and u.seconds is not None:
                out.seconds += u.seconds
            else:
                out.seconds_unknown += 1
        return out

    def to_dict(self) -> JSONObject:
        """The JSON form (seconds rounded to the millisecond)."""
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        d["cache_saved_seconds"] = round(self.cache_saved_seconds, 3)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, JSON]) -> Cost:
        """A Cost from its JSON form (missing counts are 0; other keys ignored)."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


@dataclass
class Ledger:
    """The cost of judging, per metric (by the names asked for), and its total.

    ``derived``: metric -> the metric whose judgments it reuses (its own cost is 0); ``mode``:
    the judge's generator mode (``"live"``, ``"record"``, ``"replay"``: a replay's counts are the
    recorded ones)."""

    costs: dict[str, Cost] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)
    mode: str = "live"

    @property
    def total(self) -> Cost:
        """The sum over the metrics (each call counted once)."""
        out = Cost()
        for c in self.costs.values():
            out = out + c
        return out

    def __add__(self, other: Ledger) -> Ledger:
        """Two parts of one run (two batches of questions) summed metric by metric."""
        if not isinstance(other, Ledger):
            return NotImplemented
        costs = dict(self.costs)
        for name, c in other.costs.items():
            costs[name] = costs[name] + c if name in costs else c
        mode = self.mode if self.mode == other.mode or not other.costs else (
            other.mode if not self.costs else "mixed")
        return Ledger(costs, {**self.derived, **other.derived}, mode)

    def to_dict(self) -> JSONObject:
        """The JSON form stored in ``report.meta["judge_ledger"]``."""
        metrics = {}
        for name, c in self.costs.items():
            metrics[name] = c.to_dict()
            if name in self.derived:
                metrics[name]["derived_from"] = self.derived[name]
        total = Cost()
        for c in metrics.values():  # the sum of the parts as stored (rounded), so a reread gives the same
            total = total + Cost.from_dict(c)
        return {"mode": self.mode, "metrics": metrics, "total": total.to_dict(),
                "note": "a cache hit costs no call, token or second; tokens are the backend's own counts"}

    @classmethod
    def from_dict(cls, d: Mapping[str, JSON]) -> Ledger:
        """A Ledger from its JSON form (the total is recomputed from the metrics)."""
        metrics = d.get("metrics") or {}
        return cls({n: Cost.from_dict(c) for n, c in metrics.items()},
                   {n: c["derived_from"] for n, c in metrics.items() if c.get("derived_from")},
                   str(d.get("mode", "live")))


def merge_ledgers(a: Mapping[str, JSON] | None, b: Mapping[str, JSON] | None) -> JSONObject | None:
    """Two ledgers in their JSON form summed (None when both are None)."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        return dict(a or b)  # type: ignore[arg-type]
    return (Ledger.from_dict(a) + Ledger.from_dict(b)).to_dict()


# --- noting the calls of each metric ----------------------------------------------------------
class CallLog:
    """The judge calls made under each key (a metric kind) while :func:`charging` it."""

    def __init__(self) -> None:
        self.calls: dict[str, list[JudgeCall]] = {}
        self._lock = threading.Lock()

    def note(self, key: str, call: JudgeCall) -> None:
        with self._lock:
            self.calls.setdefault(key, []).append(call)

    def cost(self, key: str) -> Cost:
        """The cost of the calls noted under ``key`` (read when the work is done: a call a metric
        marked failed afterwards, a reply of the wrong length, counts as failed)."""
        with self._lock:
            return Cost.of_calls(list(self.calls.get(key, [])))


_CHARGE: contextvars.ContextVar[tuple[CallLog, str] | None] = contextvars.ContextVar(
    "ragworkbook_judge_charge", default=None)


@contextmanager
def charging(log: CallLog, key: str) -> Iterator[None]:
    """Within this block (this task, and the tasks and threads it starts), every call the judge
    returns is noted in ``log`` under ``key``."""
    token = _CHARGE.set((log, key))
    try:
        yield
    finally:
        _CHARGE.reset(token)


def note_call(call: JudgeCall) -> None:
    """Note ``call`` where the current context is charging (nothing outside :func:`charging`)."""
    where = _CHARGE.get()
    if where is not None:
        where[0].note(where[1], call)


# --- printing -------------------------------------------------------------------------------
def _tokens(c: Cost) -> tuple[str, str]:
    if c.requests and c.tokens_unreported == c.requests:
        return "-", "-"
    more = "+?" if c.tokens_unreported else ""
    return f"{c.prompt_tokens}{more}", f"{c.completion_tokens}{more}"


def _seconds(c: Cost) -> str:
    if c.requests and c.seconds_unknown == c.requests:
        return "-"
    return f"{c.seconds:.1f}{'+?' if c.seconds_unknown else ''}"


def format_ledger(ledger: Mapping[str, JSON] | Ledger, judge: str = "") -> str:
    """The ledger as a fixed-width table (one line per metric and the total), for ``eval``."""
    led = ledger if isinstance(ledger, Ledger) else Ledger.from_dict(ledger)
    how = {"replay": "replayed: the recorded counts", "record": "live, recorded"}.get(led.mode, led.mode)
    head = (f"judge cost{' (' + judge + ', ' if judge else ' ('}{how}; a cache hit costs no call, token "
            "or second; +? = some not reported):")
    lines = [head, f"{'metric':<22}{'requests':>9}{'calls':>7}{'failed':>8}{'cached':>8}"
                   f"{'prompt tok':>12}{'compl tok':>11}{'seconds':>10}"]
    rows = list(led.costs.items()) + [("total", led.total)]
    for name, c in rows:
        if name in led.derived:
            lines.append(f"{name:<22}  (from the judgments of {led.derived[name]})")
            continue
        p, q = _tokens(c)
        lines.append(f"{name:<22}{c.requests:>9}{c.calls:>7}{c.failed:>8}{c.cache_hits:>8}"
                     f"{p:>12}{q:>11}{_seconds(c):>10}")
    return "\n".join(lines)


def format_ledgers(a: Mapping[str, JSON] | None, b: Mapping[str, JSON] | None) -> str:
    """Two runs' ledgers side by side (calls, tokens, seconds of A and of B), for ``compare``;
    '' when neither report has one."""
    if a is None and b is None:
        return ""
    la = Ledger.from_dict(a) if a is not None else None
    lb = Ledger.from_dict(b) if b is not None else None
    names = list((la.costs if la else {}).keys())
    names += [n for n in (lb.costs if lb else {}) if n not in names]
    lines = ["judge cost, A | B (calls, failed, cached, tokens prompt+completion, seconds; "
             "a cache hit costs nothing):",
             f"{'metric':<22}{'calls A':>8}{'calls B':>8}{'fail A':>7}{'fail B':>7}{'cache A':>8}"
             f"{'cache B':>8}{'tokens A':>11}{'tokens B':>11}{'sec A':>8}{'sec B':>8}"]

    def cols(led: Ledger | None, name: str) -> tuple[str, str, str, str, str]:
        if led is None:
            return ("-",) * 5  # type: ignore[return-value]
        c = led.total if name == "total" else led.costs.get(name)
        if c is None:
            return ("-",) * 5  # type: ignore[return-value]
        p, q = _tokens(c)
        tok = "-" if p == "-" else str(c.total_tokens) + ("+?" if c.tokens_unreported else "")
        return str(c.calls), str(c.failed), str(c.cache_hits), tok, _seconds(c)

    for name in names + ["total"]:
        ca, cb = cols(la, name), cols(lb, name)
        lines.append(f"{name:<22}{ca[0]:>8}{cb[0]:>8}{ca[1]:>7}{cb[1]:>7}{ca[2]:>8}{cb[2]:>8}"
                     f"{ca[3]:>11}{cb[3]:>11}{ca[4]:>8}{cb[4]:>8}")
    if la is not None and lb is not None and "replay" in (la.mode, lb.mode) and la.mode != lb.mode:
        lines.append(f"note: A is {la.mode}, B is {lb.mode} (a replay's counts are the recorded ones)")
    return "\n".join(lines)

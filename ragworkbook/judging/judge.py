"""The LLM judge: schema-constrained, cached and bounded-concurrency calls.

Every judged metric (:mod:`ragworkbook.judging.metrics`, :mod:`ragworkbook.judging.triad`)
asks its questions through a :class:`Judge`, which wraps a
:class:`ragworkbook.llm.base.Generator` and adds:

- **a JSON schema on every call** (``Generator.chat(..., schema=...)``), so the
  backend constrains decoding and the base class retries unparseable output a
  bounded number of times (``Generator.max_retries``), each retry with the error
  fed back and a raised temperature (:func:`ragworkbook.llm.base.retry_request`);
- **failure capture**: an :class:`~ragworkbook.llm.base.OutputParseError`, a
  timeout, or another error of one request (an :class:`~ragworkbook.llm.base.LLMError`
  such as a server error mid-stream or a prompt too long for the model's
  context) becomes a :class:`JudgeCall` with ``error`` set and every raw output
  kept, so the metric can count the failure instead of producing NaN or
  aborting the run. Problems of set-up (:class:`~ragworkbook.llm.base.BackendUnavailable`,
  :class:`~ragworkbook.llm.base.ModelNotFound`, :class:`~ragworkbook.llm.base.ReplayMissError`)
  are *not* judgments and propagate;
- **a cache** keyed by the generator's identity (its backend, and for Ollama the
  server: ``ollama@http://host:port``) and
  :func:`~ragworkbook.llm.base.request_key` (messages, options, schema, model):
  in memory always, and on disk when ``cache_path`` is given (a JSON file written
  atomically, under a lock, merged with what other processes wrote meanwhile, so
  two processes sharing one cache lose nothing). The same request to the same
  judge never reaches the model twice; ``Judge.n_model_calls`` counts the
  requests that did. Only answers are cached: a failed call of a live judge is
  asked again next time (a strict replay's parse failures, which cannot change,
  are kept; ``cache_failures=`` decides otherwise). A cache file is checked when read
  (an entry whose judgment is not a JSON object is an error naming it), and a cached
  judgment that does not fit the request's schema (edited, or written for another
  prompt) is not used: it is asked again and replaced. Each entry keeps what its request
  cost when first asked (``usage``); a cache hit costs no call, token or second;
- **a ledger**: every :class:`JudgeCall` carries its request's
  :class:`~ragworkbook.llm.base.Usage` (model calls, the backend's token counts, seconds), and
  is noted under the metric being computed (:mod:`ragworkbook.judging.ledger`);
- **bounded concurrency** for the async API (an ``asyncio.Semaphore`` of
  ``max_concurrency`` per event loop) and :func:`run_sync`, which runs a
  coroutine from ordinary code *and* from inside Jupyter, where an event loop is
  already running (it then uses a worker thread with its own loop).

What the judge is asked (templates, schemas, options) is in
:mod:`ragworkbook.judging.prompts`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hashlib
import inspect
import json
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ragworkbook._io import atomic_write_json, locked_update
from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.ledger import note_call
from ragworkbook.judging.prompts import JUDGE_OPTIONS, SYSTEM_PROMPT
from ragworkbook.llm.base import (
    BackendUnavailable,
    Generator,
    LLMError,
    ModelNotFound,
    OutputParseError,
    ReplayMissError,
    Usage,
    build_messages,
    merge_options,
    request_key,
    token_count,
)

__all__ = ["JudgeCall", "Judge", "generator_identity", "run_sync", "synced"]

T = TypeVar("T")
P = ParamSpec("P")

#: Errors that mean the judge cannot work at all: they propagate instead of counting as failed judgments.
_SETUP_ERRORS = (BackendUnavailable, ModelNotFound, ReplayMissError)

@dataclass
class JudgeCall:
    """One judge request and what came back.

    ``data`` is the parsed JSON (None when the call failed); ``error`` says why it
    failed (``"output_parse_error: ..."``, ``"timeout: ..."`` or ``"llm_error: ..."``);
    ``raw_outputs`` keeps
    every attempt's text and ``tries`` every attempt's options, the messages a
    retry added (the error fed back) and its error
    (:func:`ragworkbook.llm.base.retry_request`); ``cached`` is True when no model
    call was needed. ``usage``: what the request cost (:class:`~ragworkbook.llm.base.Usage`:
    model calls, the backend's token counts, seconds; None when unknown); on a cache hit, what
    it cost when first asked (the hit itself costs nothing: :mod:`ragworkbook.judging.ledger`).
    """

    prompt: str
    key: str
    data: JSON = None
    text: str = ""
    raw_outputs: list[str] = field(default_factory=list)
    attempts: int = 0
    error: str | None = None
    cached: bool = False
    tries: list[dict[str, Any]] = field(default_factory=list, repr=False)
    usage: Usage | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True when the call gave parsed, schema-valid data (``error`` is None)."""
        return self.error is None


def generator_identity(generator: Generator) -> str:
    """What tells one judge's answers from another's besides the request: the generator's
    ``identity`` when it has one (Ollama: ``ollama@http://host:port``), else its backend name."""
    return str(getattr(generator, "identity", None) or generator.backend)


_ENTRY_TYPES = {"text": (str,), "raw_outputs": (list,), "attempts": (int,), "error": (str, type(None)),
                "tries": (list,), "usage": (dict, type(None))}


def _usage_entry(usage: Usage | None) -> JSONObject | None:
    """A request's usage as a cache entry keeps it (None: unknown)."""
    return None if usage is None else {"attempts": usage.attempts, **usage.counts()}


def _entry_usage(entry: Mapping[str, JSON]) -> Usage | None:
    """The usage a cache entry kept (None for an entry written before usage was kept, or unreadable)."""
    u = entry.get("usage")
    if not isinstance(u, dict):
        return None
    attempts, seconds = token_count(u.get("attempts", 1)), u.get("seconds")
    if attempts is None or (seconds is not None and (isinstance(seconds, bool) or not isinstance(
            seconds, (int, float)) or not seconds >= 0)):
        return None  # an edited entry: its cost is unknown (the judgment itself was checked on reading)
    return Usage(attempts, token_count(u.get("prompt_tokens")), token_count(u.get("completion_tokens")),
                 None if seconds is None else float(seconds))


def _call_usage(generator: Generator, usage: Usage | None, seconds: float, attempts: int = 1) -> Usage | None:
    """The usage of one judge request: the generator's own (live: measured; replay: recorded), else
    for a live generator the attempts and the seconds the judge waited (tokens unknown); None for a
    replay without recorded counts."""
    if usage is not None:
        return usage
    if getattr(generator, "mode", "live") == "replay":
        return None
    return Usage(max(attempts, 1), None, None, seconds)


def _json_type(x: JSON) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(x), type(x).__name__)


def _cache_entry_problem(entry: JSON) -> str | None:
    """Why a stored cache entry cannot be used (None when it can)."""
    if not isinstance(entry, dict):
        return f"is {_json_type(entry)}, not an object"
    for name, types in _ENTRY_TYPES.items():
        if name in entry and not isinstance(entry[name], types):
            return f"has {_json_type(entry[name])} as {name!r}"
    if entry.get("error") is None and not isinstance(entry.get("data"), dict):
        return f"has {_json_type(entry.get('data'))} as 'data' (a judgment is a JSON object)"
    return None


def _fits(data: JSON, schema: Mapping[str, JSON]) -> bool:
    """Whether cached ``data`` is a judgment of ``schema`` (an entry written for another schema, or
    edited, is not used: the judgment is asked again and the entry replaced)."""
    import jsonschema

    return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(data))


class Judge:
    """A generator used as a judge: schema-constrained, cached, concurrency-bounded.

    Parameters
    ----------
    generator:
        Any :class:`~ragworkbook.llm.base.Generator` (a live backend, a replay, a test fake).
    options:
        Generation options for every judge call (default :data:`JUDGE_OPTIONS`).
    cache_path:
        Optional JSON file for an on-disk cache shared across processes/runs.
    max_concurrency:
        At most this many model calls in flight at once in the async API.
    timeout:
        Seconds to wait for one call (async API) before recording a ``timeout``
        failure; None waits forever. The worker thread is not killed: its late
        answer is discarded.
    cache_failures:
        Also cache parse failures. Default (None): only for a strict replay
        (``generator.mode == "replay"``), whose answers come from a file and cannot
        change; a live judge's failure is asked again next time, so a fixed server or
        model is asked anew. Timeouts and other request errors (``llm_error``) are
        never cached.
    """

    def __init__(self, generator: Generator, *, options: Mapping[str, Any] | None = None,
                 cache_path: str | Path | None = None, max_concurrency: int = 2,
                 timeout: float | None = None, cache_failures: bool | None = None,
                 system: str | None = SYSTEM_PROMPT):
        if not isinstance(generator, Generator):
            raise TypeError(
                f"Judge needs a ragworkbook.llm Generator, got {type(generator).__name__}; "
                "get one with ragworkbook.llm.get_generator()"
            )
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds or None, got {timeout}")
        self.generator = generator
        self.options = dict(JUDGE_OPTIONS if options is None else {**JUDGE_OPTIONS, **options})
        self.system = system
        self.max_concurrency = int(max_concurrency)
        self.timeout = timeout
        self.cache_failures = (getattr(generator, "mode", "live") == "replay" if cache_failures is None
                               else bool(cache_failures))
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._cache: dict[str, JSONObject] = {}
        self._lock = threading.Lock()
        self._semaphores: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}
        self.n_model_calls = 0
        self.n_cache_hits = 0
        self._disk_stamp: tuple[int, int, int] | None = None
        if self.cache_path is not None:
            self._cache.update(self._read_cache(self.cache_path))

    def repeats(self, repeats: int, temperature: float) -> list[Judge]:
        """``repeats`` copies of this judge sampling at ``temperature`` with seeds 1, 2, ... (each its own
        cache): the self-consistency runs of a judge-check."""
        return [Judge(self.generator, options={**self.options, "temperature": temperature, "seed": seed},
                      max_concurrency=self.max_concurrency, timeout=self.timeout, system=self.system)
                for seed in range(1, repeats + 1)]

    def __repr__(self) -> str:
        return (f"<Judge {self.generator.backend}:{self.generator.model} "
                f"max_concurrency={self.max_concurrency}>")

    # --- keys and cache -------------------------------------------------------------
    def cache_key(self, prompt: str, schema: Mapping[str, JSON]) -> str:
        """The cache key: SHA-256 of the generator's identity (:func:`generator_identity`: the backend,
        and the server for Ollama) and its request key."""
        messages = build_messages(prompt, self.system)
        rk = request_key(messages, merge_options(self.options), schema, self.generator.model)
        return hashlib.sha256(f"{generator_identity(self.generator)}\n{rk}".encode()).hexdigest()

    def _read_cache(self, path: Path) -> dict[str, JSONObject]:
        """The entries of the cache file at ``path`` ({} when it does not exist), validated."""
        try:
            stat = path.stat()
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._disk_stamp = None
            return {}
        except UnicodeDecodeError:
            raise ValueError(f"judge cache {path} is not a UTF-8 text file; delete it to start "
                             "afresh") from None
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"judge cache {path} is not valid JSON ({exc}); delete it to start "
                             "afresh") from None
        except RecursionError:
            raise ValueError(f"judge cache {path} is nested too deeply to be a judge cache; delete it to "
                             "start afresh") from None
        if not isinstance(loaded, dict) or not isinstance(loaded.get("entries", {}), dict):
            raise ValueError(
                f"judge cache {path} is not a judge cache (expected an object with "
                "\"entries\"); delete it to start afresh"
            )
        entries = loaded.get("entries", {})
        for key, entry in entries.items():
            problem = _cache_entry_problem(entry)
            if problem:
                raise ValueError(f"judge cache {path}: entry {key!r} {problem}; delete that entry (or the "
                                 "file) and its judgment is asked again")
        self._disk_stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return entries

    def _lookup(self, key: str, prompt_name: str, schema: Mapping[str, JSON]) -> JudgeCall | None:
        with self._lock:
            hit = self._cache.get(key)
        if hit is None or (hit.get("error") is None and not _fits(hit.get("data"), schema)):
            return None
        self.n_cache_hits += 1
        return JudgeCall(prompt=prompt_name, key=key, data=hit.get("data"), text=hit.get("text", ""),
                         raw_outputs=list(hit.get("raw_outputs", [])), attempts=hit.get("attempts", 0),
                         error=hit.get("error"), cached=True, tries=list(hit.get("tries", [])),
                         usage=_entry_usage(hit))

    def _store(self, call: JudgeCall) -> None:
        if call.error is not None and (not self.cache_failures
                                       or call.error.startswith(("timeout", "llm_error"))):
            return
        entry = {"data": call.data, "text": call.text, "raw_outputs": call.raw_outputs,
                 "attempts": call.attempts, "error": call.error, "tries": call.tries,
                 "usage": _usage_entry(call.usage)}
        with self._lock:
            self._cache[call.key] = entry
            if self.cache_path is not None:
                locked_update(self.cache_path, self._read_if_changed, self._merged, self._write_cache)

    # read-merge-write of the disk cache, under its file lock (called with self._lock held)
    def _read_if_changed(self, path: Path) -> dict[str, JSONObject] | None:
        """What another process added since this one last read or wrote the file (None: nothing)."""
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        if (stat.st_ino, stat.st_size, stat.st_mtime_ns) == self._disk_stamp:
            return None
        return self._read_cache(path)

    def _merged(self, on_disk: dict[str, JSONObject] | None) -> JSONObject:
        if on_disk:
            for key, entry in on_disk.items():
                self._cache.setdefault(key, entry)
        return {"version": 1, "entries": self._cache}

    def _write_cache(self, path: Path, doc: JSONObject) -> None:
        atomic_write_json(path, doc)
        stat = path.stat()
        self._disk_stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    # --- calls ------------------------------------------------------------------------
    def _call_model(self, prompt: str, schema: Mapping[str, JSON], name: str, key: str) -> JudgeCall:
        with self._lock:
            self.n_model_calls += 1
        start = time.perf_counter()
        try:
            gen = self.generator.chat(prompt, system=self.system, schema=schema, options=self.options)
        except OutputParseError as exc:
            return JudgeCall(prompt=name, key=key, raw_outputs=list(exc.raw_outputs),
                             attempts=len(exc.raw_outputs), error=f"output_parse_error: {exc}",
                             tries=list(exc.tries), usage=self._usage(exc.usage, start, len(exc.raw_outputs)))
        except _SETUP_ERRORS:
            raise
        except LLMError as exc:
            return JudgeCall(prompt=name, key=key, error=f"llm_error: {exc}",
                             usage=self._usage(exc.usage, start))
        return JudgeCall(prompt=name, key=key, data=gen.data, text=gen.text,
                         raw_outputs=list(gen.raw_outputs), attempts=gen.attempts, tries=list(gen.tries),
                         usage=self._usage(gen.usage, start, gen.attempts))

    def _usage(self, usage: Usage | None, start: float, attempts: int = 1) -> Usage | None:
        return _call_usage(self.generator, usage, time.perf_counter() - start, attempts)

    def call(self, name: str, prompt: str, schema: Mapping[str, JSON]) -> JudgeCall:
        """Ask one schema-constrained question (synchronously), through the cache."""
        key = self.cache_key(prompt, schema)
        hit = self._lookup(key, name, schema)
        if hit is not None:
            note_call(hit)
            return hit
        result = self._call_model(prompt, schema, name, key)
        self._store(result)
        note_call(result)
        return result

    def _semaphore(self) -> asyncio.Semaphore:
        """The semaphore of the running loop (one per loop; those of closed loops are dropped)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for key in [k for k, (lp, _) in self._semaphores.items() if lp.is_closed()]:
                del self._semaphores[key]
            entry = self._semaphores.get(id(loop))
            if entry is None or entry[0] is not loop:
                entry = self._semaphores[id(loop)] = (loop, asyncio.Semaphore(self.max_concurrency))
        return entry[1]

    async def acall(self, name: str, prompt: str, schema: Mapping[str, JSON]) -> JudgeCall:
        """Async :meth:`call`: at most ``max_concurrency`` model calls at once, optional timeout."""
        key = self.cache_key(prompt, schema)
        hit = self._lookup(key, name, schema)
        if hit is not None:
            note_call(hit)
            return hit
        async with self._semaphore():
            hit = self._lookup(key, name, schema)  # another task may have filled it meanwhile
            if hit is not None:
                note_call(hit)
                return hit
            with self._lock:
                self.n_model_calls += 1
            start = time.perf_counter()
            try:
                coro = self.generator.achat(prompt, system=self.system, schema=schema,
                                            options=self.options)
                gen = await (asyncio.wait_for(coro, self.timeout) if self.timeout else coro)
            except OutputParseError as exc:
                result = JudgeCall(prompt=name, key=key, raw_outputs=list(exc.raw_outputs),
                                   attempts=len(exc.raw_outputs), error=f"output_parse_error: {exc}",
                                   tries=list(exc.tries),
                                   usage=self._usage(exc.usage, start, len(exc.raw_outputs)))
            except asyncio.TimeoutError:
                # the seconds waited; the calls the worker thread makes after are not known
                result = JudgeCall(prompt=name, key=key, error=f"timeout: no answer within {self.timeout} s",
                                   usage=Usage(1, None, None, time.perf_counter() - start))
            except _SETUP_ERRORS:
                raise
            except LLMError as exc:
                result = JudgeCall(prompt=name, key=key, error=f"llm_error: {exc}",
                                   usage=self._usage(exc.usage, start))
            else:
                result = JudgeCall(prompt=name, key=key, data=gen.data, text=gen.text,
                                   raw_outputs=list(gen.raw_outputs), attempts=gen.attempts,
                                   tries=list(gen.tries), usage=self._usage(gen.usage, start, gen.attempts))
        self._store(result)
        note_call(result)
        return result


# --- running coroutines from sync code and from Jupyter -------------------------------
def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion and return its result.

    Outside an event loop this is ``asyncio.run``. Inside one (Jupyter cells run in
    a live loop, where ``asyncio.run`` raises) the coroutine runs on a fresh loop in
    a worker thread and this call blocks until it finishes.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]


def synced(afunc: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """The blocking twin of an async function: ``faithfulness = synced(afaithfulness)``.

    Same parameters (``inspect.signature`` follows ``__wrapped__`` to ``afunc``), the async
    function's docstring under a first line that names it, and the name without the leading
    ``a``. Each call runs ``afunc`` through :func:`run_sync`, so it works in scripts and
    inside Jupyter's running loop alike.
    """
    @functools.wraps(afunc)
    def sync(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(afunc(*args, **kwargs))

    name = afunc.__name__
    sync.__name__ = name[1:] if name.startswith("a") else f"{name}_sync"
    sync.__qualname__ = afunc.__qualname__[: -len(name)] + sync.__name__
    sync.__doc__ = (f"Sync :func:`{name}`: blocks until it is done (safe inside Jupyter's running loop)."
                    + (f"\n\n{inspect.cleandoc(afunc.__doc__)}" if afunc.__doc__ else ""))
    return sync

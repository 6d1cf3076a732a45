"""Record and replay: answers recorded by really running a backend, replayed byte for byte.

A recording file (``ragworkbook/data/recordings/NN_name.json``) is UTF-8 JSON, format 2::

    {
      "format": "ragworkbook-recording/2",
      "entries": {
        "<request key>": {
          "backend": "embedded", "model": "SmolLM2-135M-Instruct.Q4_1",
          "options": {"num_predict": 256, "seed": 0, "temperature": 0.0},
          "text": "...", "attempts": 1,
          "usage": {"prompt_tokens": 31, "completion_tokens": 9, "seconds": 0.412},
          "recorded_at": "2026-11-29T11:30:00Z", "checksum": "sha256:..."
        }
      }
    }

The key is :func:`ragworkbook.llm.base.request_key` (SHA-256 of messages,
options, schema and model) of the request as asked. **A recording holds no prompt**: the
messages (which quote questions and contexts, often from public data sets) and the JSON
schema are covered by the key and are not stored; an entry keeps the answer, what it cost,
the options it was asked with and what replay needs (``raw_outputs`` only when they are not
just ``[text]``). Format 1 (``ragworkbook-recording/1``) also stored ``"messages"`` and
``"schema"``; a format-1 file still replays (converted on read: its entries are checked
with format 1's checksums, then kept without the prompt), recording into it rewrites it as
format 2, and ``python scripts/migrate_recordings.py FILE...`` converts it in place.
A request whose structured
output failed after the retries is recorded with ``"error": {"type":
"OutputParseError", "message": ...}`` and replayed as the same error, so failure
counts replay too.

``"usage"`` is what the request cost when it was recorded (:class:`ragworkbook.llm.base.Usage`:
the backend's own token counts, null when it reported none, and the seconds of its
attempts); a replayed answer carries it on ``Generation.usage`` (a replayed failure on
the error's ``usage``). Entries recorded before usage was recorded have none: their
replay says None ("not recorded"), never a guessed figure. Re-recording an answer that
did not change keeps the entry as it was (its time and its usage, so the file's bytes
stay the same); an entry that had no usage gets the new one.

A request that took more than one attempt (or failed) also records ``"tries"``: one object
per attempt with the ``options`` it was sent with, the ``added_messages`` (the
failed output and the error fed back, see :func:`ragworkbook.llm.base.retry_request`),
its ``output`` and its ``error``. A successful one-attempt entry has no ``"tries"`` (its
single attempt is the entry itself), so older recordings replay unchanged.

Every entry carries ``"checksum": "sha256:..."``: SHA-256 of the entry's canonical
JSON without ``recorded_at`` and ``checksum``, with its request key (:func:`entry_checksum`;
format 1's left the key out). Loading a
recording checks every entry: an entry that is not an object, has neither a
``"text"`` string nor an ``"error"`` object with a ``"message"``, or whose checksum
does not match (its answer was edited) is a ValueError naming the file and the
entry. **In format 2 every entry must carry its checksum, wherever the file is** (a copy of a
bundled recording under ``$RAGWORKBOOK_DATA`` with edited answers and the checksums deleted is
refused, not replayed). In a format-1 file, a **bundled** recording (a file in the package's own data folder,
``ragworkbook/data/recordings/``: :func:`is_bundled`) an entry without a checksum
is an error too, so an edited answer cannot pass by deleting its checksum. A format-1
recording of the user's own (anywhere else) may hold entries without one, made
before checksums existed: they load, counted by :meth:`Recording.unchecked`, and get one
when the file is rewritten as format 2 (by recording into it, or by
``scripts/migrate_recordings.py``, :func:`migrate`).

A recording is a regular file (replay reads it, recording rewrites it): a pipe is
refused. A UTF-8 byte-order mark is skipped.

Files are written atomically (``ragworkbook._io``), with sorted keys and a fixed
indent, so re-recording the same run gives the same bytes; an entry whose answer
is unchanged keeps its old ``recorded_at``. Recording merges into the file, under
a lock, with what is on disk at that moment, so two processes recording into one
file lose nothing; old entries stay until the file is deleted (delete it to
re-record from scratch).
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from ragworkbook._io import atomic_write_text, file_lock, is_pipe, locked_update
from ragworkbook._types import JSON, JSONObject
from ragworkbook.llm.base import (
    Generation,
    Generator,
    Message,
    OutputParseError,
    ReplayMissError,
    Usage,
    build_messages,
    merge_options,
    parse_json_output,
    request_key,
)
from ragworkbook.llm.defaults import default_model
from ragworkbook.llm.request import Options, Schema, Try
from ragworkbook.paths import package_data_dir

FORMAT = "ragworkbook-recording/2"
#: the format before prompts were left out (read, converted on read, never written)
FORMAT_1 = "ragworkbook-recording/1"
#: what a format-1 entry held of the request itself; format 2 keeps only its hash (the key)
REQUEST_FIELDS = ("messages", "schema")
#: the command that converts a format-1 recording (or adds the checksums of one made before them)
MIGRATE_COMMAND = "python scripts/migrate_recordings.py"
#: How to record the missing answers, by where the replay runs (see :func:`record_hint`).
NOTEBOOK_RECORD_HINT = (
    "record it by executing the notebook live: RAGWORKBOOK_RECORD=1 RAGWORKBOOK_BACKEND=embedded "
    "jupyter nbconvert --to notebook --execute --inplace NOTEBOOK.ipynb"
)
SCRIPT_RECORD_HINT = (
    "record it by running the same code live with RAGWORKBOOK_RECORD=1 RAGWORKBOOK_BACKEND=embedded "
    "(or ollama) set, e.g. RAGWORKBOOK_RECORD=1 RAGWORKBOOK_BACKEND=embedded python SCRIPT.py"
)


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's shell is the kernel's ZMQ shell)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def record_hint() -> str:
    """The record hint that fits where this process runs: the notebook command inside a Jupyter
    kernel, else the same environment variables for a script (the CLI passes its own)."""
    return NOTEBOOK_RECORD_HINT if in_notebook() else SCRIPT_RECORD_HINT


def entry_checksum(entry: Mapping[str, JSON], key: str | None = None) -> str:
    """``"sha256:<hex>"`` of the entry's canonical JSON (sorted keys), ``recorded_at`` and
    ``checksum`` left out, with its request ``key`` as ``"request"``: what the answer was, and
    for which request, when recorded. Format 1's checksums had no key (``key=None``)."""
    body = {k: v for k, v in entry.items() if k not in ("recorded_at", "checksum")}
    if key is not None:
        body["request"] = key
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _json_type(x: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(x), type(x).__name__)


def entry_problem(entry: object, key: str | None = None) -> str | None:
    """Why a recorded entry cannot be replayed (None when it can): its shape, then its checksum
    (format 2's, over ``key``, when a key is given; format 1's without one)."""
    if not isinstance(entry, dict):
        return f"is {_json_type(entry)}, not an object"
    if "error" in entry:
        err = entry["error"]
        if not isinstance(err, dict) or not isinstance(err.get("message"), str):
            return (f"has {_json_type(err)} as \"error\"; a recorded failure is "
                    "{\"type\": ..., \"message\": \"...\"}")
    elif "text" not in entry:
        return "has no \"text\" (the answer) and no \"error\""
    elif not isinstance(entry["text"], str):
        return f"has {_json_type(entry['text'])} as \"text\", not a string"
    for name, types in (("messages", list), ("options", dict), ("raw_outputs", list), ("tries", list),
                        ("model", str), ("backend", str)):
        if name in entry and not isinstance(entry[name], types):
            return f"has {_json_type(entry[name])} as {name!r}"
    attempts = entry.get("attempts", 1)
    if not isinstance(attempts, int) or isinstance(attempts, bool):
        return f"has {_json_type(entry['attempts'])} as 'attempts'"
    if "usage" in entry:
        problem = _usage_problem(entry["usage"])
        if problem:
            return problem
    if "checksum" in entry and entry["checksum"] != entry_checksum(entry, key):
        return ("does not match its checksum: it was changed after it was recorded (a recorded answer is "
                "never edited by hand)")
    return None


def _usage_problem(usage: object) -> str | None:
    """Why a recorded ``"usage"`` is not one (None when it is)."""
    if not isinstance(usage, dict):
        return (f"has {_json_type(usage)} as 'usage'; a recorded usage is "
                '{"prompt_tokens": ..., "completion_tokens": ..., "seconds": ...}')
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return f"has {value!r} as usage.{name}; a token count is a whole number >= 0 or null"
    seconds = usage.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not 0 <= seconds < float("inf")):
        return f"has {seconds!r} as usage.seconds; it is a number of seconds >= 0 or null"
    return None


def bundled_dir() -> Path:
    """The folder of the bundled recordings: ``recordings/`` in the package's own data folder (not
    ``$RAGWORKBOOK_DATA``, which names data of the user's)."""
    return package_data_dir() / "recordings"


def is_bundled(path: str | Path) -> bool:
    """Whether ``path`` is a bundled recording: a file in :func:`bundled_dir` (links resolved)."""
    try:
        return Path(path).resolve().parent == bundled_dir().resolve()
    except OSError:
        return False


def upgrade_entry(key: str, entry: Mapping[str, JSON]) -> JSONObject:
    """The format-2 entry of a (checked) format-1 one: the request (messages, schema) left out, as
    are ``raw_outputs`` that are just ``[text]``; a new checksum (over ``key``) when it had one."""
    new = {k: v for k, v in entry.items() if k not in (*REQUEST_FIELDS, "checksum")}
    if "text" in new and "error" not in new and new.get("raw_outputs") == [new["text"]]:
        del new["raw_outputs"]
    if "checksum" in entry:
        new["checksum"] = entry_checksum(new, key)
    return new


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Recording:
    """The entries of one recording file, keyed by request key (thread-safe; processes that
    record into the same file take turns under a file lock and lose nothing)."""

    def __init__(self, path: str | Path, *, require_checksums: bool | None = None):
        self.path = Path(path)
        #: every entry must carry a checksum (default: when the file is bundled, :func:`is_bundled`)
        self.require_checksums = is_bundled(self.path) if require_checksums is None else require_checksums
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None  # the file as this object last read or wrote it
        #: the format of the file as read (1 or 2; 2 for a file not written yet)
        self.source_format = 2
        self.entries: dict[str, JSONObject] = self._load()

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _load(self) -> dict[str, JSONObject]:
        self._stamp = self._file_stamp()
        if not self.path.exists():
            return {}
        if self.path.is_dir():
            raise ValueError(f"recording {self.path} is a folder; give the path of a recording file")
        if is_pipe(self.path):
            raise ValueError(f"recording {self.path} is a pipe; a recording is a regular file (replay reads "
                             "it, recording rewrites it): give the path of a file")
        try:
            doc = json.loads(self.path.read_bytes().decode("utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"recording {self.path} is not valid JSON ({exc}); delete it and re-record"
            ) from None
        except UnicodeDecodeError:
            raise ValueError(f"recording {self.path} is not a UTF-8 text file; delete it and "
                             "re-record") from None
        except RecursionError:
            raise ValueError(f"recording {self.path} is nested too deeply to be a recording; delete it and "
                             "re-record") from None
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if fmt not in (FORMAT, FORMAT_1) or not isinstance(doc.get("entries"), dict):
            raise ValueError(
                f"{self.path} is not a ragworkbook recording (expected \"format\": \"{FORMAT}\", or "
                f"\"{FORMAT_1}\" for one made before prompts were left out)"
            )
        self.source_format = 2 if fmt == FORMAT else 1
        entries: dict[str, JSONObject] = {}
        for key, entry in doc["entries"].items():
            try:
                problem = entry_problem(entry, key if fmt == FORMAT else None)
            except RecursionError:
                problem = "is nested too deeply to be a recorded answer"
            if problem is None and fmt == FORMAT and "checksum" not in entry:
                problem = ("has no checksum; every entry of a format-2 recording carries one, so an answer "
                           "edited by hand cannot pass by dropping it")
            elif problem is None and fmt == FORMAT and any(f in entry for f in REQUEST_FIELDS):
                problem = ("holds its request (\"messages\" or \"schema\"); a format-2 recording keeps only "
                           "its hash, the key")
            elif problem is None and self.require_checksums and "checksum" not in entry:
                problem = ("has no checksum; every entry of a bundled recording carries one, so an answer "
                           "edited by hand cannot pass by dropping it (entries recorded before checksums "
                           f"get theirs from `{MIGRATE_COMMAND} {self.path}`)")
            if problem:
                raise ValueError(f"recording {self.path}: entry {key} {problem}; re-record it (delete the "
                                 "entry, or the file, and record again)")
            entries[key] = entry if fmt == FORMAT else upgrade_entry(key, entry)
        return entries

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def get(self, key: str) -> JSONObject | None:
        """The entry recorded under ``key``, or None."""
        return self.entries.get(key)

    def models(self) -> list[str]:
        """Distinct models recorded, sorted."""
        return sorted({e.get("model", "") for e in self.entries.values()})

    def unchecked(self) -> int:
        """How many entries have no checksum (format-1 entries recorded before checksums were added;
        they get one when the file is rewritten as format 2)."""
        return sum(1 for e in self.entries.values() if "checksum" not in e)

    def dumps(self) -> str:
        """The file's text: sorted keys, indent 1, trailing newline (stable bytes)."""
        return _dumps(self.entries)

    def put(self, key: str, entry: JSONObject) -> bool:
        """Store ``entry`` under ``key`` (with its checksum) and rewrite the file atomically.

        Under a file lock, the entries on disk now (another process may have added
        some) are read and merged with this one. An existing entry with the same
        content (timestamp, checksum and usage aside) keeps its ``recorded_at`` and its
        usage; it gets a checksum if it had none and the new usage if it had none, else
        the file is not rewritten. Returns whether the file changed.
        """
        with self._lock:
            changed = False

            def merge(on_disk: dict[str, JSONObject]) -> dict[str, JSONObject]:
                nonlocal changed
                merged = {**self.entries, **on_disk}
                old = merged.get(key)
                if old is not None and _answer(old) == _answer(entry):
                    if "checksum" in old and ("usage" in old or "usage" not in entry):
                        changed = self.source_format != 2  # a format-1 file is rewritten as format 2
                        return merged
                    new = {**old}
                    if "usage" not in old and "usage" in entry:
                        new["usage"] = entry["usage"]
                    new["checksum"] = entry_checksum(new, key)
                else:
                    new = {**entry, "recorded_at": _now()}
                    new["checksum"] = entry_checksum(new, key)
                merged[key] = new
                changed = True
                return merged

            def write(path: Path, merged: dict[str, JSONObject]) -> None:
                if changed:
                    atomic_write_text(path, _dumps(merged))
                    self._stamp = self._file_stamp()
                    self.source_format = 2

            merged = locked_update(self.path, self._on_disk, merge, write)
            self.entries = merged  # only after the file is safely written
            return changed

    def _on_disk(self, path: Path) -> dict[str, JSONObject]:
        """The entries in the file now: re-read (and checked) only when another writer changed it."""
        if self._file_stamp() == self._stamp and self._stamp is not None:
            return self.entries
        return self._load()


def migrate(path: str | Path) -> tuple[int, int]:
    """Rewrite the recording at ``path`` as format 2; returns (its format before, how many entries
    got a checksum they lacked).

    The file is read and checked as replay reads it (every entry's shape, and each checksum that
    is there: an answer edited by hand is refused, not migrated); each entry keeps its answer,
    usage, options and ``recorded_at`` and loses its request (``"messages"``, ``"schema"``),
    which its key already stands for. Entries of a user's format-1 file made before checksums
    existed get one here (the file's owner vouches for them by migrating it). A format-2 file
    is left as it is. Written atomically, under the recording's lock; used by
    ``scripts/migrate_recordings.py``.
    """
    path = Path(path)
    with file_lock(path):
        rec = Recording(path, require_checksums=False)
        if rec.source_format == 2 and path.exists():
            return 2, 0
        unchecked = rec.unchecked()
        atomic_write_text(path, _dumps(rec.entries))
    return 1, unchecked


def _dumps(entries: Mapping[str, JSON]) -> str:
    """The text of a format-2 file (sorted keys, indent 1); an entry without a checksum (a format-1
    entry recorded before checksums) gets one."""
    body = {k: (e if "checksum" in e else {**e, "checksum": entry_checksum(e, k)})
            for k, e in entries.items()}
    return json.dumps({"format": FORMAT, "entries": body}, sort_keys=True, indent=1,
                      ensure_ascii=False) + "\n"


def _answer(entry: Mapping[str, JSON]) -> JSONObject:
    """The entry without what may differ between two recordings of the same answer (when, its checksum,
    and what it cost)."""
    return {k: v for k, v in entry.items() if k not in ("recorded_at", "checksum", "usage")}


def _canonical(obj: JSON) -> JSON:
    """JSON round trip, so a live entry compares equal to the same entry read back from a file."""
    return json.loads(json.dumps(obj, sort_keys=True, ensure_ascii=False))


def make_entry(backend: str, model: str, messages: Sequence[Message], options: Mapping[str, JSON],
               schema: Schema | None, gen: Generation | None = None,
               error: OutputParseError | None = None) -> JSONObject:
    """The format-2 recording entry for one answered (or failed) request (with its usage when known).

    ``messages`` and ``schema`` are not stored (the entry's key is their hash, with the options and
    the model); ``raw_outputs`` only when they are not just ``[text]``."""
    entry: JSONObject = {"backend": backend, "model": model, "options": dict(options)}
    if gen is not None:
        entry.update(text=gen.text, attempts=gen.attempts)
        if list(gen.raw_outputs) != [gen.text]:
            entry["raw_outputs"] = list(gen.raw_outputs)
        tries, usage = gen.tries, gen.usage
    else:
        assert error is not None
        entry.update(error={"type": "OutputParseError", "message": str(error)},
                     raw_outputs=list(error.raw_outputs), attempts=len(error.raw_outputs))
        tries, usage = error.tries, error.usage
    if usage is not None:
        entry["usage"] = usage.counts()
    if tries and (entry["attempts"] > 1 or error is not None):
        entry["tries"] = list(tries)
    return _canonical(entry)


def entry_tries(entry: Mapping[str, JSON]) -> list[Try]:
    """The attempts of a recorded entry: its ``"tries"``, or for a one-attempt entry the entry itself.

    An entry with several attempts but no ``"tries"`` (recorded before retries changed
    the request) gives an empty list: what those attempts were sent with is unknown.
    """
    if "tries" in entry:
        return [Try(**t) for t in entry["tries"]]
    if int(entry.get("attempts", 1)) != 1 or "error" in entry:
        return []
    return [Try(options=dict(entry.get("options", {})), added_messages=[], output=entry["text"], error=None)]


def entry_usage(entry: Mapping[str, JSON]) -> Usage | None:
    """What a recorded request cost (:class:`~ragworkbook.llm.base.Usage`, its attempts from the
    entry), or None when the entry was recorded without usage."""
    counts = entry.get("usage")
    if not isinstance(counts, Mapping):
        return None
    return Usage.from_counts(counts, int(entry.get("attempts", 1)))


def option_differences(requested: Mapping[str, JSON], recorded: Mapping[str, JSON]) -> list[str]:
    """Human-readable differences between the options of a request and of a recorded entry."""
    diffs = []
    for name in sorted(set(requested) | set(recorded)):
        if requested.get(name, "<unset>") != recorded.get(name, "<unset>"):
            diffs.append(f"option {name}: {recorded.get(name, '<unset>')!r} recorded, "
                         f"{requested.get(name, '<unset>')!r} requested")
    return diffs


def _why_missing(model: str, options: Mapping[str, JSON], recording: Recording) -> str:
    """What a miss most likely means, from what the recording keeps besides the prompts (the model and
    the options of each request)."""
    models = recording.models()
    if model not in models:
        return (f"The recording holds answers of {', '.join(repr(m) for m in models)}, not of "
                f"{model!r}: another model needs its own recording")
    recorded = [e.get("options", {}) for e in recording.entries.values() if e.get("model") == model]
    if recorded and not any(o == options for o in recorded):
        nearest = min(recorded, key=lambda o: len(option_differences(options, o)))
        return (f"No request was recorded with these options (the nearest: "
                f"{'; '.join(option_differences(options, nearest))}): the options changed since the "
                "recording was made")
    return ("This prompt was never recorded (a recording keeps only the hash of each request, not its "
            "text): a question that is not in the recording, other contexts (another corpus, retriever or "
            "k), another JSON schema, or a prompt changed since the recording was made")


class ReplayGenerator(Generator):
    """Strict replay of a recording file: a request with no recording raises :class:`ReplayMissError`.

    ``model`` defaults to the single model in the file (the request key includes it).
    Generations carry the recorded backend and model, with ``replayed=True`` (left
    out of their repr and ==), so a notebook prints the same answers in record and
    replay mode. The generator itself says ``backend == "replay"``: a notebook that
    prints ``gen.backend`` shows "embedded" while recording and "replay" after.
    """

    backend = "replay"
    mode = "replay"

    def __init__(self, path: str | Path, model: str | None = None, *, hint: str | None = None):
        self.recording = Recording(path)
        #: how to record a missing answer, shown in a ReplayMissError (default: :func:`record_hint`)
        self.hint = hint or record_hint()
        if model is None:
            models = self.recording.models()
            if len(models) > 1:
                raise ValueError(
                    f"recording {self.recording.path} holds answers from several models "
                    f"({', '.join(models)}); choose one: get_generator(recording=..., model=\"{models[0]}\") "
                    f"in Python, --model {models[0]} on the command line (RAGWORKBOOK_MODEL does not "
                    "apply: a strict replay answers as the recorded model)"
                )
            if models:
                model = models[0]
            else:
                model = default_model("embedded")
        super().__init__(model)

    @property
    def path(self) -> Path:
        return self.recording.path

    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> str:  # pragma: no cover - chat is overridden
        raise NotImplementedError("ReplayGenerator answers whole requests in chat()")

    def lookup(self, messages: list[dict[str, str]], options: Options,
               schema: Schema | None) -> tuple[str, JSONObject]:
        """The key and recorded entry for a request; ReplayMissError names how the nearest entry differs."""
        key = request_key(messages, options, schema, self.model)
        entry = self.recording.get(key)
        if entry is not None:
            return key, entry
        raise ReplayMissError(self._miss_message(messages, options, schema))

    def _miss_message(self, messages: list[dict[str, str]], options: Options,
                      schema: Schema | None) -> str:
        path = self.recording.path
        if not self.recording.entries:
            where = "does not exist" if not path.is_file() else "has no entries"
            return f"strict replay: the recording {path} {where}; {self.hint}"
        key = request_key(messages, options, schema, self.model)
        why = _why_missing(self.model, _canonical(options), self.recording)
        return (
            f"strict replay: no recorded answer for this request in {path} ({len(self.recording)} entries; "
            f"request sha256 {key}). {why}: {self.hint}"
        )

    def _answer(self, key: str, entry: Mapping[str, JSON], schema: Schema | None) -> Generation:
        usage = entry_usage(entry)
        if "error" in entry:
            exc = OutputParseError(entry["error"]["message"], entry.get("raw_outputs", []),
                                   entry_tries(entry))
            exc.usage = usage
            raise exc
        text = entry["text"]
        data = None
        if schema is not None:
            try:
                data = parse_json_output(text, schema)
            except ValueError as exc:  # an answer recorded under another schema check, or edited
                raise OutputParseError(
                    f"recording {self.path}, entry {key}: the recorded answer does not match the JSON "
                    f"schema of the request ({exc}); re-record it: {self.hint}",
                    list(entry.get("raw_outputs", [text])), entry_tries(entry),
                ) from None
        return Generation(text=text, backend=entry["backend"], model=entry["model"], data=data, key=key,
                          attempts=int(entry.get("attempts", 1)),
                          raw_outputs=list(entry.get("raw_outputs", [text])), tries=entry_tries(entry),
                          replayed=True, usage=usage)

    def chat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
             schema: Schema | None = None,
             options: Mapping[str, JSON] | None = None) -> Generation:
        messages = build_messages(prompt_or_messages, system)
        opts = merge_options(options)
        key, entry = self.lookup(messages, opts, schema)
        return self._answer(key, entry, schema)

    async def achat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
                    schema: Schema | None = None,
                    options: Mapping[str, JSON] | None = None) -> Generation:
        return self.chat(prompt_or_messages, system=system, schema=schema, options=options)

    def __repr__(self) -> str:
        return f"<ReplayGenerator {self.path.name} model={self.model!r}>"


class RecordingGenerator(Generator):
    """A live generator whose every answer (or schema failure) is recorded into a file."""

    mode = "record"

    def __init__(self, live: Generator, path: str | Path):
        super().__init__(live.model)
        self.live = live
        self.backend = live.backend
        self.recording = Recording(path)

    @property
    def path(self) -> Path:
        return self.recording.path

    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> str:  # pragma: no cover - chat is overridden
        raise NotImplementedError("RecordingGenerator delegates whole requests to the live generator")

    def _record(self, messages: list[dict[str, str]], opts: Options, schema: Schema | None,
                gen: Generation | None = None, error: OutputParseError | None = None) -> None:
        key = request_key(messages, opts, schema, self.model)
        self.recording.put(key, make_entry(self.live.backend, self.model, messages, opts, schema, gen, error))

    def chat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
             schema: Schema | None = None,
             options: Mapping[str, JSON] | None = None) -> Generation:
        messages, opts = build_messages(prompt_or_messages, system), merge_options(options)
        try:
            gen = self.live.chat(messages, schema=schema, options=opts)
        except OutputParseError as exc:
            self._record(messages, opts, schema, error=exc)
            raise
        self._record(messages, opts, schema, gen=gen)
        return gen

    async def achat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
                    schema: Schema | None = None,
                    options: Mapping[str, JSON] | None = None) -> Generation:
        messages, opts = build_messages(prompt_or_messages, system), merge_options(options)
        try:
            gen = await self.live.achat(messages, schema=schema, options=opts)
        except OutputParseError as exc:
            self._record(messages, opts, schema, error=exc)
            raise
        self._record(messages, opts, schema, gen=gen)
        return gen

    @property
    def identity(self) -> str:
        """The live generator's identity (see :func:`ragworkbook.judging.judge.generator_identity`)."""
        return str(getattr(self.live, "identity", None) or self.live.backend)

    def __repr__(self) -> str:
        return f"<RecordingGenerator {self.backend}:{self.model} -> {self.path.name}>"

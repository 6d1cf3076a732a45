"""The embedded backend against raw llama-cpp-python: the worker process's overhead, and what
turning llama.cpp's extra buffer types off (the AMX fix) costs.

1. Worker overhead. The same request, greedy, the same number of new tokens, interleaved (raw,
   worker, raw, worker, ...) so that load from other processes hits both alike; medians:

   - ``raw``: ``Llama.create_chat_completion`` after ``Llama.reset()`` in this process (the model
     loaded here with extra buffers off, as the worker loads it: the same work);
   - ``worker``: ``EmbeddedGenerator.chat``: message building, option mapping, request key, the
     request and reply through the worker's pipes, the same call in the worker process;
   - ``round trip``: a ``ping`` through the worker (pipes and JSON framing alone), median of 200.

2. Extra buffer types on and off, each in a fresh child process (on a CPU with AMX, "on" is the
   setting that crashes: the child's death is reported, not this process's): load time and
   tokens/s for the same request.

Usage: python benchmarks/bench_embedded.py [--n-predict 128] [--repeats 5] [--no-extra-buffers-check]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import time

SYSTEM = "You are a patient teacher."
PROMPT = ("Explain, step by step and in detail, how the attention mechanism in a transformer works, "
          "including queries, keys, values, scaling and softmax.")
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]


def _kw(n_predict: int) -> dict:
    from ragworkbook.llm.base import merge_options
    from ragworkbook.llm.embedded import completion_kwargs

    return completion_kwargs(merge_options({"num_predict": n_predict}), None)


def child(extra_buffers: str, n_predict: int, repeats: int) -> None:
    """One setting in this (child) process: print {"load_s", "tokens", "seconds": [...]} as JSON."""
    import llama_cpp

    from ragworkbook.llm.embedded import default_threads, gguf_path
    from ragworkbook.llm.llama_safety import disable_extra_buffers

    if extra_buffers == "off":
        disable_extra_buffers()
    t0 = time.perf_counter()
    n = default_threads()
    llm = llama_cpp.Llama(model_path=str(gguf_path()), n_ctx=4096, n_threads=n, n_threads_batch=n, seed=0,
                          verbose=False)
    load = time.perf_counter() - t0
    kw = _kw(n_predict)
    seconds, tokens = [], 0
    for _ in range(repeats + 1):  # the first is a warm-up
        llm.reset()
        t = time.perf_counter()
        out = llm.create_chat_completion(messages=MESSAGES, **kw)
        seconds.append(time.perf_counter() - t)
        tokens = out["usage"]["completion_tokens"]
    print(json.dumps({"load_s": load, "tokens": tokens, "seconds": seconds[1:]}))


def extra_buffers_check(n_predict: int, repeats: int) -> None:
    from ragworkbook.llm.llama_safety import has_amx

    print(f"\nextra buffer types, each setting in a fresh process (CPU has AMX: {has_amx()}):")
    results = {}
    for setting in ("off", "on"):
        done = subprocess.run([sys.executable, __file__, "--child", setting, "--n-predict", str(n_predict),
                               "--repeats", str(repeats)], capture_output=True, text=True)
        if done.returncode != 0:
            why = (f"killed by {signal.Signals(-done.returncode).name}" if done.returncode < 0
                   else f"exit {done.returncode}")
            print(f"  {setting:>3}: the process died ({why}); stderr tail: {done.stderr.strip()[-300:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        med = statistics.median(r["seconds"])
        results[setting] = r["tokens"] / med
        print(f"  {setting:>3}: load {r['load_s']:.2f} s, {r['tokens'] / med:6.1f} tokens/s "
              f"(median {med:.3f} s per call over {len(r['seconds'])}; min {min(r['seconds']):.3f} "
              f"max {max(r['seconds']):.3f})")
    if len(results) == 2:
        print(f"  off vs on: {results['off'] / results['on'] - 1:+.1%} tokens/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-predict", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-extra-buffers-check", action="store_true")
    ap.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.n_predict, args.repeats)
        return

    import llama_cpp

    from ragworkbook.llm import get_generator
    from ragworkbook.llm.llama_safety import disable_extra_buffers

    gen = get_generator(backend="embedded", announce=False)
    disable_extra_buffers()
    llm = llama_cpp.Llama(model_path=gen.worker.path, n_ctx=gen.n_ctx, n_threads=gen.n_threads,
                          n_threads_batch=gen.n_threads, seed=0, verbose=False)
    options = {"num_predict": args.n_predict}
    kw = _kw(args.n_predict)

    def raw() -> tuple[float, int, str]:
        llm.reset()
        t = time.perf_counter()
        out = llm.create_chat_completion(messages=MESSAGES, **kw)
        return (time.perf_counter() - t, out["usage"]["completion_tokens"],
                out["choices"][0]["message"]["content"].strip())

    def worker() -> tuple[float, str]:
        t = time.perf_counter()
        g = gen.chat(PROMPT, system=SYSTEM, options=options)
        return time.perf_counter() - t, g.text

    raw()  # warm-up (and the worker starts here, outside the timings)
    worker()
    times: dict[str, list[float]] = {"raw": [], "worker": []}
    n_tokens = 0
    for _ in range(args.repeats):
        dt, n_tokens, text_raw = raw()
        times["raw"].append(dt)
        dt_w, text_w = worker()
        times["worker"].append(dt_w)
        if text_w != text_raw:
            raise SystemExit("the worker and the raw call produced different text: not comparable")
    pings = []
    for _ in range(200):
        t = time.perf_counter()
        gen.worker.ping()
        pings.append(time.perf_counter() - t)

    print(f"model {gen.model}, {gen.n_threads} thread(s), {n_tokens} new tokens, "
          f"prompt {len(llm.tokenize(PROMPT.encode()))}+ tokens, median of {args.repeats} interleaved calls")
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, t in med.items():
        print(f"  {name:<8} {n_tokens / t:7.1f} tokens/s  ({t:.3f} s per call; "
              f"min {min(times[name]):.3f} max {max(times[name]):.3f})")
    rt = statistics.median(pings)
    print(f"  round trip through the worker's pipes: {rt * 1e6:.0f} us (median of 200 pings) = "
          f"{rt / med['raw']:.3%} of a generation")
    print(f"worker vs raw (same work, medians): {med['worker'] / med['raw'] - 1:+.1%}")
    if not args.no_extra_buffers_check:
        extra_buffers_check(args.n_predict, args.repeats)


if __name__ == "__main__":
    main()

"""The judge's ledger: per metric, requests, model calls, failures, cache hits, tokens and seconds,
carried from the backend's usage through JudgeCall and the judge's cache into the report."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes.judges import CARBON, BlockingJudge, GarbageJudge, RuleJudge, first_prompt

from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.evaluation.report import Report
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.ledger import Cost, Ledger, format_ledger, format_ledgers, merge_ledgers
from ragworkbook.judging.metrics import evaluate_judged
from ragworkbook.judging.prompts import verdict_schema
from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm.base import Reply


class CountingJudge(RuleJudge):
    """RuleJudge that reports token counts as a server does: words of the prompt, characters/4 of the
    reply; it keeps every count it reported."""

    def __init__(self):
        super().__init__("counting-judge")
        self.reported: list[tuple[int, int]] = []

    def _chat_once(self, messages, options, schema):
        text = super()._chat_once(messages, options, schema)
        counts = (len(first_prompt(messages).split()), len(text) // 4)
        with self.lock:
            self.reported.append(counts)
        return Reply(text, *counts)


SAMPLES = [CARBON, JudgeSample(question="What does the EU tax?", answer="The EU taxes imports at the border.",
                               contexts=[CARBON.contexts[0]], reference="Imports, at the border.",
                               sample_id="eu")]
METRICS = ["faithfulness", "hallucination", "context_recall", "context_precision"]


def test_each_metric_is_charged_its_own_calls_and_tokens():
    gen = CountingJudge()
    judge = Judge(gen)
    rep = evaluate_judged(SAMPLES, judge, METRICS, progress=False)
    led = rep.ledger
    assert list(led.costs) == METRICS
    # faithfulness: 2 requests a sample; context recall: 1; context precision: one per chunk
    assert [led.costs[m].requests for m in METRICS] == [4, 0, 2, len(CARBON.contexts) + 1]
    assert led.derived == {"hallucination": "faithfulness"}
    total = led.total
    assert total.requests == gen.calls == judge.n_model_calls == rep.n_model_calls
    assert total.calls == total.requests and total.failed == 0 and total.cache_hits == 0
    assert total.prompt_tokens == sum(p for p, _ in gen.reported)
    assert total.completion_tokens == sum(c for _, c in gen.reported)
    assert total.tokens_unreported == 0 and total.seconds_unknown == 0 and total.seconds > 0
    # the per-metric tokens are those of the requests each metric made (not an even split)
    by_call = {}
    for res in rep.results["context_recall"]:
        (call,) = res.calls
        by_call[call.key] = call.usage.prompt_tokens
    assert led.costs["context_recall"].prompt_tokens == sum(by_call.values())


def test_a_cache_hit_costs_no_call_token_or_second(tmp_path):
    path = tmp_path / "cache.json"
    first = evaluate_judged(SAMPLES, Judge(CountingJudge(), cache_path=path), METRICS, progress=False).ledger
    gen = CountingJudge()
    again = evaluate_judged(SAMPLES, Judge(gen, cache_path=path), METRICS, progress=False).ledger
    assert gen.calls == 0
    for m in METRICS:
        c = again.costs[m]
        assert (c.requests, c.calls, c.prompt_tokens, c.completion_tokens, c.seconds) == (0, 0, 0, 0, 0.0)
        assert c.cache_hits == first.costs[m].requests
    # the cache kept each answer's usage: what the hits saved is what they cost the first time
    assert again.total.cache_saved_seconds == pytest.approx(first.total.seconds, abs=0.01)
    entry = next(iter(json.loads(path.read_text(encoding="utf-8"))["entries"].values()))
    assert set(entry["usage"]) == {"attempts", "prompt_tokens", "completion_tokens", "seconds"}
    text = format_ledger(again, "fake:counting-judge")
    assert "a cache hit costs no call, token or second" in text


def test_a_cache_written_before_usage_was_kept_still_loads(tmp_path):
    path = tmp_path / "cache.json"
    judge = Judge(RuleJudge(), cache_path=path)
    judge.call("p", "Question: a?\nContext: a b\nAnswer: a b", verdict_schema())
    doc = json.loads(path.read_text(encoding="utf-8"))
    for e in doc["entries"].values():
        del e["usage"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    hit = Judge(RuleJudge(), cache_path=path).call("p", "Question: a?\nContext: a b\nAnswer: a b",
                                                   verdict_schema())
    assert hit.cached and hit.usage is None
    assert Cost.of_calls([hit]) == Cost(cache_hits=1)


def test_an_edited_usage_in_the_cache_is_unknown_not_an_error(tmp_path):
    path = tmp_path / "cache.json"
    prompt = "Question: a?\nContext: a b\nAnswer: a b"
    Judge(RuleJudge(), cache_path=path).call("p", prompt, verdict_schema())
    doc = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = doc["entries"].values()
    for bad in ({"attempts": "two"}, {"seconds": "fast"}, {"seconds": -1}):
        entry["usage"] = {**entry["usage"], **bad}
        path.write_text(json.dumps(doc), encoding="utf-8")
        hit = Judge(RuleJudge(), cache_path=path).call("p", prompt, verdict_schema())
        assert hit.cached and hit.usage is None, bad
        entry["usage"] = {"attempts": 1, "prompt_tokens": "many", "completion_tokens": 3, "seconds": 0.5}
    path.write_text(json.dumps(doc), encoding="utf-8")
    hit = Judge(RuleJudge(), cache_path=path).call("p", prompt, verdict_schema())
    assert (hit.usage.prompt_tokens, hit.usage.completion_tokens, hit.usage.seconds) == (None, 3, 0.5)


def test_retries_are_calls_and_a_failure_is_counted():
    gen = GarbageJudge()
    rep = evaluate_judged([CARBON], Judge(gen), ["context_recall"], progress=False)
    c = rep.ledger.costs["context_recall"]
    assert (c.requests, c.calls, c.failed) == (1, gen.calls, 1)
    assert gen.calls == 1 + gen.max_retries  # the retries are model calls of one request
    assert c.tokens_unreported == 1  # a backend that reports no counts: unknown, never 0 or guessed
    assert "-" in format_ledger(rep.ledger).splitlines()[2]


def test_a_timeout_is_a_failed_request_with_the_seconds_waited():
    judge = Judge(BlockingJudge(), timeout=0.05)

    async def go():
        from ragworkbook.judging.ledger import CallLog, charging

        log = CallLog()
        with charging(log, "m"):
            await judge.acall("p", "Question: q\nContext: c\nAnswer: a", verdict_schema())
        return log.cost("m")

    c = asyncio.run(go())
    assert (c.requests, c.failed, c.tokens_unreported, c.seconds_unknown) == (1, 1, 1, 0)
    assert 0.04 <= c.seconds < 0.5


def test_a_replay_without_recorded_counts_has_unknown_seconds():
    """A replayed answer recorded before usage was kept: its tokens and seconds are unknown, never 0."""
    from ragworkbook.judging.judge import _call_usage

    gen = RuleJudge()
    gen.mode = "replay"
    assert _call_usage(gen, None, 0.001) is None
    gen.mode = "live"
    assert _call_usage(gen, None, 0.25, 2).seconds == 0.25


def test_the_ledger_goes_into_the_report_and_back(tmp_path):
    records = [{"id": s.sample_id, "question": s.question, "answer": s.answer, "contexts": s.contexts,
                "reference": s.reference} for s in SAMPLES]
    gen = CountingJudge()
    report = evaluate_outputs(records, judge=gen, metrics=["faithfulness", "context_recall"], progress=False)
    led = report.meta["judge_ledger"]
    assert led["total"]["requests"] == gen.calls == report.meta["judge_model_calls"]
    assert led["mode"] == "live"
    path = report.save(tmp_path / "r.json")
    back = Report.load(path)
    assert back.meta["judge_ledger"] == led
    assert Ledger.from_dict(led).to_dict() == led
    assert merge_ledgers(led, led)["total"]["requests"] == 2 * gen.calls
    side = format_ledgers(led, None)
    assert side.splitlines()[-1].split()[:3] == ["total", str(gen.calls), "-"]


def test_eval_prints_the_ledger_and_compare_shows_both(tmp_path, capsys, monkeypatch):
    from ragworkbook import cli

    records = [{"id": s.sample_id, "question": s.question, "answer": s.answer, "contexts": s.contexts,
                "reference": s.reference} for s in SAMPLES]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    gens = []
    monkeypatch.setattr(cli._common, "generator",
                        lambda args, announce: gens.append(CountingJudge()) or gens[-1])
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json"
        assert cli.main(["eval", "--answers", str(answers), "--judge", "--metric",
                         "faithfulness,context_recall", "--no-progress", "--out", str(out)]) == 0
        outs.append(out)
    printed = capsys.readouterr().out
    assert "judge cost (fake:counting-judge, live;" in printed
    total = next(line for line in printed.splitlines() if line.startswith("total"))
    assert total.split()[1:3] == [str(gens[0].calls), str(gens[0].calls)]  # requests, calls
    assert cli.main(["compare", str(outs[0]), str(outs[1])]) == 0
    shown = capsys.readouterr().out
    assert "judge cost, A | B" in shown
    costs = shown.split("judge cost, A | B")[1]
    line = next(x for x in costs.splitlines() if x.startswith("faithfulness "))
    assert line.split()[1:3] == ["4", "4"]
    assert cli.main(["compare", str(outs[0]), str(outs[1]), "--json"]) == 0
    both = json.loads(capsys.readouterr().out)["judge_ledger"]
    assert both["a"]["total"]["requests"] == both["b"]["total"]["requests"] == gens[1].calls

"""Cross-check of the RAGAS-style judged metrics against the ragas library itself (the ``ragas`` extra).

The package's judge makes the judgments: notebook 09's, the eight saved answers of
``ragworkbook/data/runs/naive_rag_embedded.json`` judged by the replay of
``ragworkbook/data/recordings/09_judge.json``
through :func:`ragworkbook.judging.metrics.evaluate_judged`, and a few edge cases judged by the
fake judges of ``tests/fakes/judges.py``. ragas's own metric objects (``single_turn_ascore`` on a
``SingleTurnSample``) then score those same judgments end to end: a stand-in ragas LLM
(``tests/fakes/ragas_judge.py``) answers each prompt ragas sends with the package's judgment in
ragas's output format, and answer relevancy embeds with the package's MiniLM. Nothing calls a model
or the network; ragas's telemetry is off (``RAGAS_DO_NOT_TRACK=true``, set before ragas is imported).

Where the definitions match, the scores agree to 1e-9: faithfulness (the statements and their
verdicts), answer relevancy (the generated questions, the noncommittal flag, the cosines),
context precision with reference (the per-chunk verdicts, average precision), context recall (the
per-sentence attributions, given to ragas as its judge's own split). Where they differ, the
difference is asserted (ragas 0.4.3, its default metrics of ``ragas.metrics``):

=================  ========================================  ===========================================
metric             the package                               ragas, for the same input
=================  ========================================  ===========================================
faithfulness       no statement: undefined (``no_claims``)   NaN
faithfulness       empty answer: undefined, no judge call    asks its judge for the statements of ""
faithfulness       no context: 0.0, no verification call     asks its judge to verify against ""
answer relevancy   empty answer: 0.0, no judge call          asks its judge for questions
answer relevancy   blank questions ignored; all blank:       a blank question is embedded and counts;
                   failed (``no_generated_question``)        all blank: NaN
answer relevancy   one noncommittal flag                     one per generation, zero only if all are
                                                             (``np.all``, ragas PR #2327; 0.1: ``np.any``)
context precision  no chunk: undefined (``empty_context``)   0.0 (no verdict: 0 / (0 + 1e-10))
context precision  empty reference: undefined                asks its judge with an empty reference;
                                                             no reference at all: KeyError
context recall     the reference split into sentences here   its judge splits the reference in the
                                                             same call that attributes the sentences
context recall     empty reference: undefined; no context:   asks its judge; no reference at all:
                   0.0, no judge call                        KeyError
every metric       a judge output that does not parse:       the same output does not parse either:
                   failed (``output_parse_error``)           it raises (after asking to fix the format);
                                                             an output ragas can read although the
                                                             package rejected it is scored as read
every metric       a call without output (timeout): failed   the error propagates
=================  ========================================  ===========================================
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import numbers
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before ragas is imported anywhere in this process

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import REPO, reference  # noqa: E402
from fakes.judges import CARBON, BlockingJudge, EmptyClaimsJudge, GarbageJudge, RuleJudge, schema_kind  # noqa: E402

from ragworkbook.judging.judge import Judge, run_sync  # noqa: E402
from ragworkbook.judging.metrics import context_precision_from_verdicts, evaluate_judged  # noqa: E402
from ragworkbook.judging.results import JudgedResult, JudgeSample  # noqa: E402
from ragworkbook.metrics.registry import parse_metric  # noqa: E402

pytestmark = [pytest.mark.reference, pytest.mark.model, pytest.mark.usefixtures("no_network")]

TOL = 1e-9
JUDGED = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def rg() -> SimpleNamespace:
    """ragas (skipped on a developer machine without the ragas extra, failed under CI) and the stand-ins."""
    ragas = reference("ragas", extra="ragas")
    metrics = reference("ragas.metrics", extra="ragas")
    from langchain_core.exceptions import OutputParserException
    from ragas.exceptions import RagasOutputParserException

    fake = importlib.import_module("fakes.ragas_judge")
    return SimpleNamespace(
        version=ragas.__version__, SingleTurnSample=ragas.SingleTurnSample,
        Faithfulness=metrics.Faithfulness, ResponseRelevancy=metrics.ResponseRelevancy,
        LLMContextPrecisionWithReference=metrics.LLMContextPrecisionWithReference,
        LLMContextRecall=metrics.LLMContextRecall,
        JudgmentsLLM=fake.JudgmentsLLM, PackageEmbeddings=fake.PackageEmbeddings,
        NotJudged=fake.NotJudged, JudgeFailed=fake.JudgeFailed,
        unreadable=(OutputParserException, RagasOutputParserException))


class OneTextAtATime:
    """:func:`ragworkbook.embeddings.encode`, one text at a time, remembered: the package and ragas
    get the same vector for a text whatever batch it comes in (MiniLM's vectors move by ~1e-7 with
    the batch they are encoded in, more than the 1e-9 of the comparison)."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        from ragworkbook.embeddings import encode

        for t in texts:
            if t not in self.vectors:
                self.vectors[t] = encode([t])[0].astype(float)
        return np.vstack([self.vectors[t] for t in texts])


@pytest.fixture(scope="module")
def minilm() -> OneTextAtATime:
    return OneTextAtATime()


@pytest.fixture(scope="module")
def replayed(minilm) -> tuple[list[JudgeSample], dict[str, list[JudgedResult]]]:
    """Notebook 09's judgments: its samples and judge, ``evaluate_judged`` with the default metrics.
    The judge is the strict replay of the notebook's recording (what the notebook runs without
    ``RAGWORKBOOK_*`` variables), whatever the developer's environment says."""
    from ragworkbook.llm.replay import ReplayGenerator
    from ragworkbook.paths import data_path

    run = json.loads(data_path("runs", "naive_rag_embedded.json").read_text(encoding="utf-8"))
    samples = [JudgeSample.from_mapping(a, sample_id=a["id"]) for a in run["answers"]]
    judge = Judge(ReplayGenerator(data_path("recordings", "09_judge.json")), max_concurrency=2)
    report = evaluate_judged(samples, judge, progress=False, embed=minilm)
    assert list(report.results) == list(JUDGED)
    return samples, report.results


# --------------------------------------------------------------------------- from a judgment to ragas


@dataclass
class Expect:
    """What ragas must give for one sample and metric.

    ``kind``: ``"agree"`` (the package's score, to 1e-9), ``"value"`` (a documented different value),
    ``"nan"``, ``"unreadable"`` (ragas's output-parser error), ``"failed"`` (the judge call's error),
    ``"asks"`` (ragas asks its judge something the package decides without one), ``"no_reference"``
    (ragas's KeyError for a sample without a reference)."""

    kind: str
    value: float | None = None
    why: str = ""


@dataclass
class Case:
    metric: Any
    sample: Any
    llm: Any
    expect: Expect


def ragas_sample(rg, s: JudgeSample):
    return rg.SingleTurnSample(user_input=s.question, response=s.answer, retrieved_contexts=list(s.contexts),
                               reference=s.reference)


def _call(r: JudgedResult, i: int, prompt: str):
    call = r.calls[i]
    assert call.prompt == prompt, f"{r.metric} {r.sample_id}: call {i} is {call.prompt!r}, not {prompt!r}"
    return call


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else math.nan


def faithfulness_case(rg, s: JudgeSample, r: JudgedResult) -> Case:
    llm = rg.JudgmentsLLM()
    metric = rg.Faithfulness(llm=llm)
    case = Case(metric, ragas_sample(rg, s), llm, Expect("agree"))
    if r.reason == "empty_answer":
        case.expect = Expect("asks", why="empty answer: the package has no faithfulness without a judge call")
        return case
    gen, nli = metric.statement_generator_prompt, metric.nli_statements_prompt
    call = _call(r, 0, "statements")
    data = gen.input_model(question=s.question, answer=s.answer)
    differs = ""
    if call.data is not None:
        out = gen.output_model(statements=[x.strip() for x in call.data["statements"] if x.strip()])
        llm.answer(gen, data, [out])
    else:
        out = llm.answer_raw(gen, data, call.raw_outputs, call.error)
        if out is None:
            case.expect = Expect("failed" if not call.raw_outputs else "unreadable", why=call.error or "")
            return case
        differs = "ragas reads statements from an output the package rejected"
    if not out.statements:
        case.expect = Expect("nan", why="no statement: the package says undefined (no_claims)")
        return case
    if differs or r.reason == "empty_context":
        case.expect = Expect("asks", why=differs or "no context: the package scores 0.0 unasked")
        return case
    call = _call(r, 1, "faithfulness")
    data = nli.input_model(context="\n".join(s.contexts), statements=out.statements)
    if call.data is not None:
        verdicts = nli.output_model.model_validate({"statements": [
            {"statement": out.statements[i] if i < len(out.statements) else "", "reason": v["reason"],
             "verdict": int(v["verdict"])} for i, v in enumerate(call.data["verdicts"])]})
        llm.answer(nli, data, [verdicts])
    else:
        verdicts = llm.answer_raw(nli, data, call.raw_outputs, call.error)
        if verdicts is None:
            case.expect = Expect("failed" if not call.raw_outputs else "unreadable", why=call.error or "")
            return case
        differs = "ragas reads verdicts from an output the package rejected"
    if r.outcome == "scored" and not differs:
        return case
    case.expect = Expect("value", _mean([1 if v.verdict else 0 for v in verdicts.statements]),
                         why=differs or f"the package failed the call ({r.error}); ragas scores the verdicts")
    return case


def answer_relevancy_case(rg, s: JudgeSample, r: JudgedResult, embed) -> Case:
    llm = rg.JudgmentsLLM()
    metric = rg.ResponseRelevancy(llm=llm, embeddings=rg.PackageEmbeddings(embed), strictness=3)
    case = Case(metric, ragas_sample(rg, s), llm, Expect("agree"))
    if r.reason == "empty_answer":
        case.expect = Expect("asks", why="empty answer: the package scores 0.0 without a judge call")
        return case
    prompt = metric.question_generation
    data = prompt.input_model(response=s.answer)
    call = _call(r, 0, "answer_relevancy")
    differs = ""
    if call.data is not None:
        flag = int(call.data["noncommittal"])
        outs = [prompt.output_model(question=q.strip(), noncommittal=flag) for q in call.data["questions"]]
        metric.strictness = len(outs)  # one ragas generation per question the package's judge wrote
        llm.answer(prompt, data, outs)
    else:
        out = llm.answer_raw(prompt, data, call.raw_outputs, call.error, n=metric.strictness)
        if out is None:
            case.expect = Expect("failed" if not call.raw_outputs else "unreadable", why=call.error or "")
            return case
        outs = [out] * metric.strictness
        differs = "ragas reads an output the package rejected"
    questions = [o.question for o in outs]
    if all(q == "" for q in questions):
        case.expect = Expect("nan", why="every generated question is blank: the package fails the call")
        return case
    if r.outcome == "scored" and not differs and all(questions):
        return case
    vectors = embed([s.question] + questions)
    q, g = vectors[0], vectors[1:]
    cosines = g @ q / (np.linalg.norm(g, axis=1) * np.linalg.norm(q))
    value = float(np.mean(cosines)) * (0 if all(o.noncommittal for o in outs) else 1)
    case.expect = Expect("value", value, why=differs or "ragas embeds the blank questions, the package not")
    return case


def context_precision_case(rg, s: JudgeSample, r: JudgedResult) -> Case:
    llm = rg.JudgmentsLLM()
    metric = rg.LLMContextPrecisionWithReference(llm=llm)
    case = Case(metric, ragas_sample(rg, s), llm, Expect("agree"))
    if s.reference is None:
        case.expect = Expect("no_reference", why="no reference: the package says undefined")
        return case
    if not s.contexts:
        case.expect = Expect("value", 0.0, why="no chunk: the package says undefined; ragas: 0 / (0 + 1e-10)")
        return case
    if not s.reference.strip():
        case.expect = Expect("asks", why="empty reference: the package says undefined without a judge call")
        return case
    prompt = metric.context_precision_prompt
    verdicts, differs = [], ""
    for i, ctx in enumerate(s.contexts):
        call = _call(r, i, "context_precision_with_reference")
        data = prompt.input_model(question=s.question, context=ctx, answer=s.reference)
        if call.data is not None:
            out = prompt.output_model(reason=call.data["reason"], verdict=int(call.data["verdict"]))
            llm.answer(prompt, data, [out])
        else:
            out = llm.answer_raw(prompt, data, call.raw_outputs, call.error)
            if out is None:  # ragas judges the chunks in order and stops at this one
                case.expect = Expect("failed" if not call.raw_outputs else "unreadable", why=call.error or "")
                return case
            differs = f"ragas reads chunk {i + 1}'s verdict from an output the package rejected"
        verdicts.append(1 if out.verdict else 0)
    if r.outcome == "scored" and not differs:
        return case
    case.expect = Expect("value", context_precision_from_verdicts(verdicts), why=differs)
    return case


def context_recall_case(rg, s: JudgeSample, r: JudgedResult) -> Case:
    llm = rg.JudgmentsLLM()
    metric = rg.LLMContextRecall(llm=llm)
    case = Case(metric, ragas_sample(rg, s), llm, Expect("agree"))
    if s.reference is None:
        case.expect = Expect("no_reference", why="no reference: the package says undefined")
        return case
    if not s.reference.strip():
        case.expect = Expect("asks", why="empty reference: the package says undefined without a judge call")
        return case
    if not any(c.strip() for c in s.contexts):
        case.expect = Expect("asks", why="no context: the package scores 0.0 without a judge call")
        return case
    prompt = metric.context_recall_prompt
    statements = [it["statement"] for it in r.items]
    call = _call(r, 0, "context_recall")
    data = prompt.input_model(question=s.question, context="\n".join(s.contexts), answer=s.reference)
    differs = ""
    if call.data is not None:
        # ragas's judge splits the reference itself: here it answers with the package's sentences
        out = prompt.output_model.model_validate({"classifications": [
            {"statement": statements[i] if i < len(statements) else "", "reason": v["reason"],
             "attributed": int(v["verdict"])} for i, v in enumerate(call.data["verdicts"])]})
        llm.answer(prompt, data, [out])
    else:
        out = llm.answer_raw(prompt, data, call.raw_outputs, call.error)
        if out is None:
            case.expect = Expect("failed" if not call.raw_outputs else "unreadable", why=call.error or "")
            return case
        differs = "ragas reads attributions from an output the package rejected"
    if r.outcome == "scored" and not differs:
        return case
    case.expect = Expect("value", _mean([1 if c.attributed else 0 for c in out.classifications]),
                         why=differs or f"the package failed the call ({r.error}); ragas scores what it got")
    return case


def make_case(rg, metric: str, s: JudgeSample, r: JudgedResult, embed) -> Case:
    assert r.metric == metric and r.sample_id == s.sample_id
    if metric == "answer_relevancy":
        return answer_relevancy_case(rg, s, r, embed)
    return {"faithfulness": faithfulness_case, "context_precision": context_precision_case,
            "context_recall": context_recall_case}[metric](rg, s, r)


def ragas_result(case: Case) -> Any:
    """ragas's score for the case, or the exception it raised."""
    try:
        return asyncio.run(case.metric.single_turn_ascore(case.sample))
    except Exception as exc:  # the outcome under test
        return exc


def problem(rg, case: Case, r: JudgedResult, got: Any) -> str | None:
    """Why ragas's result does not match the expectation (None when it does)."""
    e = case.expect
    number = isinstance(got, numbers.Real)
    if e.kind in ("agree", "value", "nan"):
        if not number:
            return f"expected a number ({e.kind}), ragas raised {got!r}"
        want = r.score if e.kind == "agree" else (math.nan if e.kind == "nan" else e.value)
        if want is None or not (math.isnan(got) if math.isnan(want) else abs(float(got) - want) <= TOL):
            return f"{e.kind}: ragas {got!r}, expected {want!r} ({e.why or 'the package scored it'})"
        if set(case.llm.asked) != set(case.llm.table):
            return (f"ragas asked {len(set(case.llm.asked))} distinct prompts, the package's judge answered "
                    f"{len(case.llm.table)}: not the same judgments")
        return None
    raised = {"unreadable": rg.unreadable, "failed": rg.JudgeFailed, "asks": rg.NotJudged,
              "no_reference": KeyError}[e.kind]
    if not isinstance(got, raised):
        return f"{e.kind} ({e.why}): expected {raised}, ragas gave {got!r}"
    if e.kind == "no_reference" and got.args != ("reference",):
        return f"no_reference: ragas raised KeyError{got.args}, not for 'reference'"
    if e.kind == "unreadable" and not set(case.llm.fix_prompts) & set(case.llm.asked):
        return "unreadable: ragas raised without asking its judge to fix the output format"
    return None


# --------------------------------------------------------------------------- the cross-checks


@pytest.mark.parametrize("metric", JUDGED)
def test_ragas_scores_the_replayed_judgments_of_notebook_09_alike(rg, replayed, minilm, metric):
    samples, results = replayed
    problems, kinds = [], []
    for s, r in zip(samples, results[metric], strict=True):
        case = make_case(rg, metric, s, r, minilm)
        kinds.append(f"{s.sample_id}:{case.expect.kind}")
        if r.outcome != "scored":
            assert case.expect.kind != "agree", f"{s.sample_id}: the package has no score to agree with"
        p = problem(rg, case, r, ragas_result(case))
        if p:
            problems.append(f"{s.sample_id} (package: {r.outcome} {r.reason or ''} {r.score}): {p}")
    assert not problems, f"{metric}, expectations {kinds}:\n" + "\n".join(problems)


class QuestionsJudge(RuleJudge):
    """The rule judge, except that answer relevancy's generated questions are the ones given."""

    def __init__(self, questions: list[str]):
        super().__init__("questions-judge")
        self.questions = questions

    def _chat_once(self, messages, options, schema):
        if schema_kind(schema) == "questions":
            return json.dumps({"questions": self.questions, "noncommittal": 0})
        return super()._chat_once(messages, options, schema)


def _carbon(**changes) -> JudgeSample:
    fields = {"question": CARBON.question, "answer": CARBON.answer, "contexts": list(CARBON.contexts),
              "reference": CARBON.reference, "sample_id": "carbon", **changes}
    return JudgeSample(**fields)


# (metric, sample, judge, expected kind): every outcome of the package, whatever the recording holds
EDGE_CASES = {
    "faithfulness-judged": ("faithfulness", _carbon(), RuleJudge, "agree"),
    "faithfulness-no-claims": ("faithfulness", _carbon(), EmptyClaimsJudge, "nan"),
    "faithfulness-empty-answer": ("faithfulness", _carbon(answer=""), RuleJudge, "asks"),
    "faithfulness-no-context": ("faithfulness", _carbon(contexts=[]), RuleJudge, "asks"),
    "faithfulness-unparsed": ("faithfulness", _carbon(), GarbageJudge, "unreadable"),
    "answer-relevancy-judged": ("answer_relevancy", _carbon(), RuleJudge, "agree"),
    "answer-relevancy-noncommittal": ("answer_relevancy", _carbon(answer="I don't know."), RuleJudge,
                                      "agree"),
    "answer-relevancy-empty-answer": ("answer_relevancy", _carbon(answer=""), RuleJudge, "asks"),
    "answer-relevancy-blank-questions": ("answer_relevancy", _carbon(), lambda: QuestionsJudge(["", " ", ""]),
                                         "nan"),
    "answer-relevancy-one-question": (
        "answer_relevancy", _carbon(),
        lambda: QuestionsJudge(["Which carbon pricing mechanism did Canada introduce?", "", ""]), "value"),
    "answer-relevancy-unparsed": ("answer_relevancy", _carbon(), GarbageJudge, "unreadable"),
    "context-precision-judged": ("context_precision", _carbon(), RuleJudge, "agree"),
    "context-precision-no-chunk": ("context_precision", _carbon(contexts=[]), RuleJudge, "value"),
    "context-precision-empty-reference": ("context_precision", _carbon(reference=""), RuleJudge, "asks"),
    "context-precision-no-reference": ("context_precision", _carbon(reference=None), RuleJudge,
                                       "no_reference"),
    "context-precision-unparsed": ("context_precision", _carbon(), GarbageJudge, "unreadable"),
    "context-precision-timeout": ("context_precision", _carbon(), BlockingJudge, "failed"),
    "context-recall-judged": ("context_recall", _carbon(), RuleJudge, "agree"),
    "context-recall-empty-reference": ("context_recall", _carbon(reference=""), RuleJudge, "asks"),
    "context-recall-no-reference": ("context_recall", _carbon(reference=None), RuleJudge, "no_reference"),
    "context-recall-no-context": ("context_recall", _carbon(contexts=[]), RuleJudge, "asks"),
    "context-recall-unparsed": ("context_recall", _carbon(), GarbageJudge, "unreadable"),
}


@pytest.mark.parametrize("name", EDGE_CASES)
def test_each_outcome_of_the_package_maps_to_what_ragas_does(rg, minilm, name):
    metric, sample, make_judge, kind = EDGE_CASES[name]
    judge = Judge(make_judge(), timeout=0.05 if make_judge is BlockingJudge else None)
    kw = {"embed": minilm} if metric == "answer_relevancy" else {}
    r = run_sync(parse_metric(metric).compute(sample, judge, **kw))
    case = make_case(rg, metric, sample, r, minilm)
    assert case.expect.kind == kind, f"package: {r.outcome} {r.reason} {r.score} ({r.error})"
    assert problem(rg, case, r, ragas_result(case)) is None


def test_noncommittal_zeroes_ragas_only_when_every_generation_says_so(rg, minilm):
    """ragas 0.2+ takes ``np.all`` of its generations' noncommittal flags (ragas PR #2327; 0.1 took
    ``np.any``). The package asks once, with one flag, where both rules agree."""
    r = run_sync(parse_metric("answer_relevancy").compute(CARBON, Judge(RuleJudge()), embed=minilm))
    assert r.outcome == "scored" and not r.detail["noncommittal"] and r.score > 0
    got = {}
    for flags in ((1, 0, 0), (1, 1, 1)):
        llm = rg.JudgmentsLLM()
        metric = rg.ResponseRelevancy(llm=llm, embeddings=rg.PackageEmbeddings(minilm), strictness=3)
        prompt = metric.question_generation
        outs = [prompt.output_model(question=it["question"], noncommittal=f)
                for it, f in zip(r.items, flags, strict=True)]
        llm.answer(prompt, prompt.input_model(response=CARBON.answer), outs)
        got[flags] = ragas_result(Case(metric, ragas_sample(rg, CARBON), llm, Expect("agree")))
    assert got[(1, 0, 0)] == pytest.approx(r.detail["mean_cosine"], abs=TOL)  # np.any would give 0.0
    assert got[(1, 1, 1)] == 0.0


def test_ragas_context_recall_scores_the_split_its_judge_makes(rg):
    """The package splits the reference into sentences itself; ragas's prompt carries the reference
    whole and scores whatever statements its judge returns: the same attributions under a coarser
    split give another score."""
    r = run_sync(parse_metric("context_recall").compute(CARBON, Judge(RuleJudge())))
    verdicts = [it["verdict"] for it in r.items]
    assert 0 < sum(verdicts) < len(verdicts), "the example needs an attributed and an unattributed sentence"
    assert r.score == sum(verdicts) / len(verdicts)
    llm = rg.JudgmentsLLM()
    metric = rg.LLMContextRecall(llm=llm)
    prompt = metric.context_recall_prompt
    assert "statements" not in prompt.input_model.model_fields  # nothing tells ragas's judge the split
    whole = prompt.output_model.model_validate({"classifications": [
        {"statement": CARBON.reference, "reason": "every sentence", "attributed": int(all(verdicts))}]})
    llm.answer(prompt, prompt.input_model(question=CARBON.question, context="\n".join(CARBON.contexts),
                                          answer=CARBON.reference), [whole])
    got = ragas_result(Case(metric, ragas_sample(rg, CARBON), llm, Expect("value")))
    assert got == 0.0 != r.score


def test_the_installed_ragas_is_the_pinned_one_and_sends_no_telemetry(rg):
    """The differences above are those of the ragas the ``ragas`` extra pins."""
    import tomllib
    from packaging.requirements import Requirement

    extra = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["ragas"]
    pin = next(Requirement(x) for x in extra if Requirement(x).name == "ragas")
    assert str(pin.specifier).startswith("=="), f"pin ragas to the version tested, not {pin}"
    assert pin.specifier.contains(rg.version), f"ragas {rg.version} is installed, the extra pins {pin}"
    assert reference("ragas._analytics", extra="ragas").do_not_track()

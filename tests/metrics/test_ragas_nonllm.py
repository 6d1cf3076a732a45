"""ragas' non-LLM metrics beside the package's, on the same samples: what agrees exactly, and every known
difference, each pinned (README, "Differences from ragas"). Against the ragas library itself (the
``ragas`` extra, ragas 0.4.3); nothing calls a model or the network."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before ragas is imported anywhere in this process

import pytest  # noqa: E402
from conftest import reference  # noqa: E402

from ragworkbook.metrics.context_text import (  # noqa: E402
    non_llm_context_precision,
    non_llm_context_recall,
    string_presence,
)
from ragworkbook.metrics.generation import bleu, exact_match, rouge_l, token_f1  # noqa: E402
from ragworkbook.metrics.retrieval import precision_at_k  # noqa: E402
from ragworkbook.metrics.words import words  # noqa: E402

pytestmark = pytest.mark.reference

SAMPLES = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "exports"
                                         / "reference.jsonl").read_text(encoding="utf-8").splitlines()]
#: answer / reference pairs: ASCII, punctuation, case, several sentences
PAIRS = [
    ("It uses 8 parallel attention heads, each of dimension 64.", "8 heads"),
    ("Adam, with beta1 = 0.9 and beta2 = 0.98.", "Adam (beta1 = 0.9, beta2 = 0.98)"),
    ("The model is a Transformer. It uses attention only. It was trained on WMT 2014.",
     "The Transformer uses attention only. It was trained on WMT 2014 English-German."),
    ("d_model = 512", "d_model = 512"),
    ("D_model = 512.", "d_model = 512"),
]


@pytest.fixture(scope="module")
def rm():
    reference("ragas", extra="ragas")
    from ragas import SingleTurnSample
    from ragas.metrics._bleu_score import BleuScore
    from ragas.metrics._context_precision import IDBasedContextPrecision, NonLLMContextPrecisionWithReference
    from ragas.metrics._context_recall import IDBasedContextRecall, NonLLMContextRecall
    from ragas.metrics._rouge_score import RougeScore
    from ragas.metrics._string import ExactMatch, StringPresence

    def score(metric, **fields):
        return asyncio.run(metric.single_turn_ascore(SingleTurnSample(**fields)))

    return dict(score=score, bleu=BleuScore(), rouge=RougeScore(), em=ExactMatch(), sp=StringPresence(),
                cp=NonLLMContextPrecisionWithReference(), cr=NonLLMContextRecall(),
                idp=IDBasedContextPrecision(), idr=IDBasedContextRecall())


def test_the_installed_ragas_is_the_pinned_one():
    ragas = reference("ragas", extra="ragas")
    assert ragas.__version__ == "0.4.3"


# --------------------------------------------------------------------------- agree exactly


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["user_input"][:20] for s in SAMPLES])
def test_text_based_context_precision_and_recall_equal_ragas(rm, sample):
    contexts, refs = sample["retrieved_contexts"], sample["reference_contexts"]
    if contexts:  # ragas asserts on an empty list (max() of nothing)
        assert non_llm_context_precision(contexts, refs) == pytest.approx(
            rm["score"](rm["cp"], retrieved_contexts=contexts, reference_contexts=refs), abs=1e-12)
        assert non_llm_context_recall(contexts, refs) == pytest.approx(
            rm["score"](rm["cr"], retrieved_contexts=contexts, reference_contexts=refs), abs=1e-12)
    else:
        assert non_llm_context_precision(contexts, refs) == 0.0
        assert non_llm_context_recall(contexts, refs) == 0.0


def test_the_thresholds_differ_as_in_ragas_at_exactly_one_half(rm):
    """ragas compares precision's similarity with >= 0.5 and recall's with > 0.5: at exactly 0.5, a context
    counts for precision and not for recall, in both libraries."""
    contexts, refs = ["abcd"], ["abef"]  # Levenshtein similarity 1 - 2/4 = 0.5
    assert non_llm_context_precision(contexts, refs) == pytest.approx(1.0)
    assert non_llm_context_recall(contexts, refs) == 0.0
    assert rm["score"](rm["cp"], retrieved_contexts=contexts, reference_contexts=refs) == pytest.approx(1.0)
    assert rm["score"](rm["cr"], retrieved_contexts=contexts, reference_contexts=refs) == 0.0


@pytest.mark.parametrize("answer, ref", PAIRS + [("8 heads in total", "8 heads"), ("8 Heads", "8 heads")])
def test_string_presence_and_rouge_l_equal_ragas(rm, answer, ref):
    assert string_presence(answer, ref) == rm["score"](rm["sp"], response=answer, reference=ref)
    assert rouge_l(answer, ref) == pytest.approx(rm["score"](rm["rouge"], response=answer, reference=ref),
                                                 abs=1e-12)


def test_id_based_context_recall_equals_ragas(rm):
    from ragworkbook.metrics.retrieval import recall_at_k

    for s in SAMPLES:
        ids, rel = s["retrieved_context_ids"], s["reference_context_ids"]
        ours = recall_at_k(ids, set(rel), k=max(len(ids), 1))
        theirs = rm["score"](rm["idr"], retrieved_context_ids=ids, reference_context_ids=rel)
        assert ours == pytest.approx(theirs)


# --------------------------------------------------------------------------- known differences


def test_precision_at_k_divides_by_k_ragas_by_what_was_retrieved(rm):
    """With fewer than k contexts, precision@k counts the missing ranks as misses (trec_eval's P_k):
    2 retrieved, 1 relevant: precision@3 = 1/3; ragas' IDBasedContextPrecision divides by the 2 retrieved."""
    ids, rel = ["p7-c1", "p7-c2"], ["p7-c1", "p7-c3"]
    assert precision_at_k(ids, set(rel), k=3) == pytest.approx(1 / 3)
    assert rm["score"](rm["idp"], retrieved_context_ids=ids, reference_context_ids=rel) == pytest.approx(0.5)


def test_exact_match_normalises_ragas_compares_as_written(rm):
    """SQuAD normalisation (case, punctuation, articles) here; ragas' ExactMatch compares as written."""
    assert exact_match("D_model = 512.", "d_model = 512") == 1.0
    assert rm["score"](rm["em"], response="D_model = 512.", reference="d_model = 512") == 0.0
    assert exact_match("d_model = 512", "d_model = 512") == rm["score"](
        rm["em"], response="d_model = 512", reference="d_model = 512") == 1.0


def test_bleu_is_sentence_bleu_ragas_splits_on_full_stops_and_takes_corpus_bleu(rm):
    """sacrebleu's sentence BLEU of the whole answer, 0-100; ragas splits both texts on ". ", scores the
    sentences as a corpus, pairing them by position, and divides by 100."""
    answer, ref = PAIRS[2]
    ours = bleu(answer, ref) / 100
    theirs = rm["score"](rm["bleu"], response=answer, reference=ref)
    assert (round(ours, 3), round(theirs, 3)) == (0.547, 0.127)  # the README's figures
    import sacrebleu

    sentences = answer.split(". ")
    streams = [[r] for r in ref.split(". ")]
    assert theirs == pytest.approx(sacrebleu.corpus_bleu(sentences, streams).score / 100)
    one = "The model uses attention only"  # one sentence each: the two agree
    assert bleu(one, one) / 100 == pytest.approx(rm["score"](rm["bleu"], response=one, reference=one))


def test_text_in_other_scripts_scores_here_and_is_zero_in_ragas(rm):
    """rouge-score's tokenizer (ragas' RougeScore) keeps only [a-z0-9]: two identical Russian or Chinese
    sentences get ROUGE-L 0.0 there, 1.0 here; ASCII text gets the same tokens in both."""
    for text in ("Синусоидальные функции разной частоты.", "位置编码使用不同频率的正弦和余弦函数。"):
        assert rouge_l(text, text) == 1.0
        assert rm["score"](rm["rouge"], response=text, reference=text) == 0.0
        assert token_f1(text, text) == 1.0
    assert token_f1("位置编码", "位置编码器") == pytest.approx(2 * 1 * 0.8 / 1.8)
    from rouge_score.tokenizers import DefaultTokenizer

    for answer, ref in PAIRS:
        for text in (answer, ref):
            assert words(text, stem=True) == DefaultTokenizer(use_stemmer=True).tokenize(text)


def test_context_metrics_without_reference_contexts_are_undefined_here():
    """ragas asserts (an error for the whole evaluation); here the record's value is undefined, with why."""
    from ragworkbook.evaluation.outputs import evaluate_outputs

    report = evaluate_outputs([{"question": "q", "answer": "a", "contexts": ["x"]}],
                              metrics=["non_llm_context_precision", "non_llm_context_recall"], progress=False)
    for m in report.metrics:
        assert report.values(m) == [None]
        assert next(iter(report.unscored(m).values())).reason == "no_reference_contexts"

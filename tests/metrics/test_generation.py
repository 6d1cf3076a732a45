"""ragworkbook.metrics.generation: each metric equals its library called directly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import reference

from ragworkbook.metrics import generation as gm
from ragworkbook.metrics.registry import specs

REF_C3 = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
ANS_C3 = ("The paper reports that their big model achieved a BLEU score of 41.0 on the WMT 2014 "
          "English-to-German translation task.")
PAIRS = [
    (ANS_C3, REF_C3),
    ("the auto is fast", "the car is fast"),
    ("They used the Adam optimizer.", "They used the Adam optimizer."),
    ("Training took twelve hours on eight GPUs.", "The base model trained for 12 hours."),
]
ANS = [a for a, _ in PAIRS]
REF = [r for _, r in PAIRS]


# every metric runs offline: any network connection or nltk.download fails the test
pytestmark = pytest.mark.usefixtures("no_network")


# --- C3: the documented wrong-BLEU case ------------------------------------------------------
@pytest.mark.model
def test_c3_documented_numbers():
    assert f"{gm.bleu(ANS_C3, REF_C3):.1f}" == "32.9"
    assert f"{gm.rouge_l(ANS_C3, REF_C3):.2f}" == "0.68"
    assert f"{gm.meteor(ANS_C3, REF_C3):.2f}" == "0.76"
    assert gm.embedding_similarity(ANS_C3, REF_C3) == pytest.approx(0.867, abs=5e-4)


# --- equality with the libraries --------------------------------------------------------------
@pytest.mark.reference
def test_bleu_equals_sacrebleu():
    sacrebleu = reference("sacrebleu")

    for a, r in PAIRS:
        assert gm.bleu(a, r) == sacrebleu.sentence_bleu(a, [r]).score
    assert gm.corpus_bleu(ANS, REF) == sacrebleu.corpus_bleu(ANS, [REF]).score
    # corpus BLEU is not the mean of sentence BLEUs
    assert gm.corpus_bleu(ANS, REF) != pytest.approx(np.mean([gm.bleu(a, r) for a, r in PAIRS]))


@pytest.mark.reference
def test_rouge_l_equals_rouge_score():
    rouge_scorer = reference("rouge_score.rouge_scorer")

    sc = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    for a, r in PAIRS:
        s = sc.score(r, a)["rougeL"]
        assert gm.rouge_l(a, r) == s.fmeasure
        assert gm.rouge_l(a, r, measure="precision") == s.precision
        assert gm.rouge_l(a, r, measure="recall") == s.recall
    # stemming is on: "trained" matches "training"
    assert gm.rouge_l("trained", "training") == 1.0
    with pytest.raises(ValueError, match="unknown ROUGE measure 'f1'"):
        gm.rouge_l("a", "b", measure="f1")


@pytest.mark.reference
def test_meteor_equals_nltk_with_real_wordnet():
    meteor_score = reference("nltk.translate.meteor_score").meteor_score

    from ragworkbook.metrics.wordnet import get_wordnet

    wn = get_wordnet()
    for a, r in PAIRS:
        assert gm.meteor(a, r) == meteor_score([r.split()], a.split(), wordnet=wn)
    assert round(gm.meteor("the auto is fast", "the car is fast"), 3) == 0.992


def test_meteor_without_wordnet_synonyms_is_lower(monkeypatch):
    """The 0.639 a missing/empty WordNet gives: why real WordNet matters (gm.meteor asks
    ragworkbook.metrics.wordnet for its WordNet; here it gets one without synonyms)."""
    from ragworkbook.metrics import wordnet

    class NoSynonyms:
        def synsets(self, word):
            return []

    assert round(gm.meteor("the auto is fast", "the car is fast"), 3) == 0.992  # auto ~ car
    monkeypatch.setattr(wordnet, "get_wordnet", NoSynonyms)
    assert round(gm.meteor("the auto is fast", "the car is fast"), 3) == 0.639


@pytest.mark.model
def test_embedding_similarity_equals_cosine_of_encodings(sentence_transformer):
    """The cosine of the embeddings sentence-transformers itself gives for the local MiniLM."""
    ea, er = (sentence_transformer.encode(t, normalize_embeddings=True).astype(np.float64)
              for t in (ANS, REF))
    expected = np.sum(ea * er, axis=1)
    got = gm.embedding_similarities(ANS, REF)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert len(set(np.round(got, 3))) == len(PAIRS)  # four different pairs, four different values
    assert gm.embedding_similarity(ANS[1], REF[1]) == pytest.approx(got[1], abs=1e-6)
    assert got[2] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.model
@pytest.mark.reference
def test_bertscore_equals_bert_score_package():
    bert_score = reference("bert_score")

    from ragworkbook.embeddings import minilm_path

    res = gm.bertscore(ANS, REF)
    P, R, F = bert_score.score(ANS, REF, model_type=str(minilm_path()), num_layers=gm.BERTSCORE_LAYERS,
                               lang="en")
    np.testing.assert_allclose(res.precision, P.numpy(), atol=1e-6)
    np.testing.assert_allclose(res.recall, R.numpy(), atol=1e-6)
    np.testing.assert_allclose(res.f1, F.numpy(), atol=1e-6)
    assert res.f1[2] == pytest.approx(1.0, abs=1e-5)
    # the scorer (and its model) is built once per process
    assert gm.get_bertscorer() is gm.get_bertscorer()


# --- SQuAD EM / F1 ----------------------------------------------------------------------------
@pytest.mark.parametrize("text, norm", [
    ("The Adam optimizer.", "adam optimizer"),
    ("  A  BLEU of 28.4!", "bleu of 284"),
    ("an apple, the pear", "apple pear"),
    ("Theory", "theory"),
])
def test_normalize_answer(text, norm):
    assert gm.normalize_answer(text) == norm


def test_exact_match_and_token_f1():
    assert gm.exact_match("the Adam optimizer", "Adam optimizer.") == 1.0
    assert gm.exact_match("Adam", "Adam optimizer") == 0.0
    # SQuAD F1 by hand: answer {adam}, reference {adam, optimizer}: P = 1, R = 1/2, F1 = 2/3
    assert gm.token_f1("Adam", "The Adam optimizer") == pytest.approx(2 / 3)
    assert gm.token_f1("dog cat", "fish") == 0.0
    # repeated tokens count with multiplicity (bag of tokens)
    assert gm.token_f1("8 8 8", "8") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))


# --- edge cases -------------------------------------------------------------------------------
@pytest.mark.parametrize("a, r", [("", REF_C3), (REF_C3, ""), ("", ""), ("   ", "x y")])
def test_empty_inputs_score_zero(a, r):
    assert gm.bleu(a, r) == 0.0
    assert gm.rouge_l(a, r) == 0.0
    assert gm.meteor(a, r) == 0.0
    assert gm.embedding_similarity(a, r) == 0.0
    assert gm.bertscore([a], [r]).f1.tolist() == [0.0]


def test_empty_em_f1_follow_squad_v2():
    assert gm.exact_match("", "") == 1.0 and gm.token_f1("", "") == 1.0
    assert gm.exact_match("the", "") == 1.0  # only an article: normalises to nothing
    assert gm.exact_match("", "x") == 0.0 and gm.token_f1("", "x") == 0.0
    assert gm.token_f1("x", "") == 0.0


@pytest.mark.parametrize("func", [gm.bleu, gm.rouge_l, gm.meteor, gm.embedding_similarity,
                                  gm.exact_match, gm.token_f1])
def test_non_string_raises_type_error(func):
    with pytest.raises(TypeError, match="answer must be a str, got int"):
        func(3, "x")
    with pytest.raises(TypeError, match="must be a str, got NoneType"):
        func("x", None)


def test_batch_input_errors():
    with pytest.raises(TypeError, match="not a single string"):
        gm.corpus_bleu("an answer", ["a reference"])
    with pytest.raises(TypeError, match=r"answers\[1\] must be a str"):
        gm.generation_scores(["a", 2], ["a", "b"])
    with pytest.raises(ValueError, match=r"differ in length \(2 vs 1\)"):
        gm.bertscore(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="at least one"):
        gm.corpus_bleu([], [])
    with pytest.raises(ValueError, match=r"unknown metric 'bleurt'; known metrics: bleu, rouge_l"):
        gm.generation_scores(["a"], ["a"], metrics=["bleu", "bleurt"])


@pytest.mark.model
@pytest.mark.reference
def test_generation_scores_frame_and_summary():
    df = gm.generation_scores(ANS, REF)
    # every generation metric but the text-based context ones (they read contexts: a ValueError here)
    assert list(df.columns) == [s.name for s in specs("generation") if s.name not in gm.CONTEXT_SCORERS]
    with pytest.raises(ValueError, match="compare contexts with reference contexts"):
        gm.generation_scores(ANS, REF, ["non_llm_context_recall"])
    assert len(df) == len(PAIRS)
    # each column is its metric: sacrebleu's BLEU, NLTK's METEOR, and SQuAD F1 worked out by hand
    # (pair 1: 9 shared of 17 and 10 tokens; 2: 2 of 3 and 3; 3: identical; 4: "hours", 1 of 7 and 6)
    sacrebleu = reference("sacrebleu")
    meteor_score = reference("nltk.translate.meteor_score").meteor_score
    from ragworkbook.metrics.wordnet import get_wordnet

    assert df["bleu"].tolist() == [sacrebleu.sentence_bleu(a, [r]).score for a, r in PAIRS]
    assert df["meteor"].tolist() == [meteor_score([r.split()], a.split(), wordnet=get_wordnet())
                                     for a, r in PAIRS]
    assert df["token_f1"].tolist() == pytest.approx([2 / 3, 2 / 3, 1.0, 2 / 13])
    assert df["exact_match"].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert df.loc[2, "embedding_similarity"] == pytest.approx(1.0, abs=1e-5)
    assert df.loc[2, "bertscore_f1"] == pytest.approx(1.0, abs=1e-5)
    assert (df.drop(index=2)[["embedding_similarity", "bertscore_f1"]] < 0.99).all().all()
    sub = gm.generation_scores(ANS, REF, metrics=["token_f1", "bleu"])
    assert list(sub.columns) == ["token_f1", "bleu"]  # the order asked for
    assert list(gm.generation_scores(ANS, REF, metrics=["ROUGE-L"]).columns) == ["ROUGE-L"]
    summ = gm.generation_summary(ANS, REF, metrics=["bleu", "rouge_l"])
    assert summ["corpus_bleu"] == gm.corpus_bleu(ANS, REF)
    assert summ["mean_rouge_l"] == pytest.approx(df["rouge_l"].mean())
    assert set(summ) == {"corpus_bleu", "mean_bleu", "mean_rouge_l"}
    assert gm.generation_scores([], []).shape == (0, len(specs("generation")) - len(gm.CONTEXT_SCORERS))
    assert math.isnan(gm.generation_summary([], [], metrics=["rouge_l"])["mean_rouge_l"])


# --- ROUGE-1 / ROUGE-2 and BLEU with several references -----------------------------
@pytest.mark.reference
def test_rouge_n_equals_rouge_score():
    rouge_scorer = reference("rouge_score.rouge_scorer")

    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)
    for a, r in PAIRS:
        s = sc.score(r, a)
        assert gm.rouge_1(a, r) == gm.rouge_n(a, r, 1) == s["rouge1"].fmeasure
        assert gm.rouge_2(a, r) == gm.rouge_n(a, r, 2) == s["rouge2"].fmeasure
        assert gm.rouge_n(a, r, 2, measure="recall") == s["rouge2"].recall
    # by hand: "the car is fast" / "the auto is fast": 3 of 4 unigrams, 1 of 3 bigrams ("is fast")
    assert gm.rouge_1("the auto is fast", "the car is fast") == pytest.approx(0.75)
    assert gm.rouge_2("the auto is fast", "the car is fast") == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="n = 1 or 2"):
        gm.rouge_n("a", "b", n=3)
    with pytest.raises(ValueError, match="unknown ROUGE measure"):
        gm.rouge_n("a", "b", measure="f1")
    assert gm.rouge_1("", "x") == 0.0 and gm.rouge_2("x", "") == 0.0


@pytest.mark.reference
def test_bleu_with_several_references_equals_sacrebleu():
    sacrebleu = reference("sacrebleu")

    refs = [REF_C3, "Its BLEU on English-German was 28.4."]
    answer = "The big model scored 28.4 BLEU on English-German."
    assert gm.bleu(answer, refs) == sacrebleu.sentence_bleu(answer, refs).score
    # a second reference can only add matches: never a lower score here
    assert gm.bleu(answer, refs) > gm.bleu(answer, REF_C3)
    assert gm.bleu(answer, [REF_C3]) == gm.bleu(answer, REF_C3)
    # corpus BLEU with a different number of references per answer
    per = [[REF_C3, refs[1]], ["the car is fast"]]
    got = gm.corpus_bleu([answer, "the auto is fast"], per)
    assert got == sacrebleu.corpus_bleu([answer, "the auto is fast"], [[REF_C3, "the car is fast"],
                                                                        [refs[1], None]]).score
    assert gm.corpus_bleu(ANS, REF) == gm.corpus_bleu(ANS, [[r] for r in REF])
    with pytest.raises(ValueError, match="at least one reference"):
        gm.bleu(answer, [])
    with pytest.raises(TypeError, match=r"references\[1\] must be a str"):
        gm.bleu(answer, [REF_C3, 3])
    with pytest.raises(ValueError, match=r"differ in length \(2 vs 1\)"):
        gm.corpus_bleu([answer, answer], [refs])

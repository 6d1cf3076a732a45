"""The cheapest signal that could pass for a judge, per data set: what a judge must beat.

A judge's agreement with people means little on its own: on WikiEval's
faithfulness pairs, counting the answer's words that occur in the context already
agrees with the construction labels as often as the RAGAS paper's gpt-3.5 judge
(0.95). :func:`~ragworkbook.judging.check.judge_check` prints the baseline of its
data set beside every judge, on the same pairs, and the judge-minus-baseline
difference with its interval; a judge is "better than its baseline" only when that
interval lies above 0.

Baselines (:data:`BASELINES`; none calls an LLM):

==============================  ==========================================================  =========
data set                        baseline score of an item                                   needs
==============================  ==========================================================  =========
``wikieval-faithfulness``       :func:`word_overlap`: the share of the answer's words       nothing
                                (lower-cased ``\\w+`` runs, every word) found in the context
``wikieval-answer-relevance``   :func:`question_similarity`: MiniLM cosine of the question  MiniLM
                                and the answer
``wikieval-context-relevance``  :func:`similar_sentence_share`: the share of the context's  MiniLM
                                sentences whose MiniLM cosine to the question is above 0.4
``ragchecker``                  the sign of answer 2's minus answer 1's token F1 against    nothing
                                the reference answer (A, B or tie), as a pairwise verdict
==============================  ==========================================================  =========

WikiEval's texts carry the escapes of their source (a literal backslash-n for a line
break, ``\\'`` for a quote); :func:`unescape` turns them back before sentences are
split. For RAGChecker, :func:`ragchecker_correlations` also correlates each
metric's difference with the annotators' -2..2 preferences exactly as RAGChecker's
``meta_eval.py`` correlates its own scores (:mod:`ragworkbook.judging.ragchecker`):
token F1 (rouge-score's tokens, no stemming, and the package's SQuAD token F1),
ROUGE-1, ROUGE-L (rouge-score, stemmed), sentence BLEU (sacrebleu), BERTScore F1
(the package's local MiniLM), and the answer length in tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook.corpus.chunking import split_sentences
from ragworkbook.judging.ragchecker import correlation, normalised_delta
from ragworkbook.metrics.generation import bleu, token_f1

if TYPE_CHECKING:
    from ragworkbook.judging.datasets import RagCheckerMeta, RagCheckerPair, WikiEvalPair

__all__ = ["BASELINES", "Baseline", "SIMILAR_SENTENCE_THRESHOLD", "RAGCHECKER_METRICS", "unescape",
           "word_overlap", "question_similarity", "similar_sentence_share", "wikieval_baseline_scores",
           "ragchecker_metric_scores", "ragchecker_verdicts", "ragchecker_correlations",
           "ragchecker_baseline_table"]

Embed = Callable[[list[str]], np.ndarray]

#: The cosine above which a context sentence counts as similar to the question.
SIMILAR_SENTENCE_THRESHOLD = 0.4

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Baseline:
    """One data set's baseline: a ``name`` for tables and its ``definition`` in one sentence."""

    name: str
    definition: str
    needs_model: bool = False


BASELINES: dict[str, Baseline] = {
    "wikieval-faithfulness": Baseline(
        "word overlap", "the share of the answer's words (lower-cased \\w+ runs) that occur in the context"),
    "wikieval-answer-relevance": Baseline(
        "question-answer cosine", "MiniLM cosine similarity of the question and the answer", True),
    "wikieval-context-relevance": Baseline(
        "similar-sentence share", "the share of the context's sentences whose MiniLM cosine to the question "
        f"is above {SIMILAR_SENTENCE_THRESHOLD}", True),
    "ragchecker": Baseline(
        "token-F1 difference", "answer 2's token F1 against the reference minus answer 1's: B if positive, "
        "A if negative, tie if equal"),
}


def unescape(text: str) -> str:
    """WikiEval's escaped line breaks and quotes (``\\n``, ``\\'``, ``\\"``) as the characters they
    stand for."""
    return text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')


def word_overlap(answer: str, context: str) -> float | None:
    """The share of the answer's words (lower-cased ``\\w+`` runs) that occur among the context's words;
    None when the answer has no word."""
    words = _WORD.findall(answer.lower())
    if not words:
        return None
    vocab = set(_WORD.findall(context.lower()))
    return sum(w in vocab for w in words) / len(words)


def _default_embed() -> Embed:
    from ragworkbook.embeddings import encode

    return lambda texts: encode(texts, cache=True)


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def question_similarity(questions: Sequence[str], answers: Sequence[str], embed: Embed | None = None
                        ) -> np.ndarray:
    """MiniLM cosine of each question with its answer (``embed``: texts -> vectors; default MiniLM)."""
    if len(questions) != len(answers):
        raise ValueError(f"{len(questions)} questions for {len(answers)} answers: one answer per question")
    if not questions:
        return np.zeros(0)
    e = _unit((embed or _default_embed())(list(questions) + list(answers)))
    n = len(questions)
    return np.sum(e[:n] * e[n:], axis=1)


def similar_sentence_share(questions: Sequence[str], contexts: Sequence[str], embed: Embed | None = None,
                           threshold: float = SIMILAR_SENTENCE_THRESHOLD) -> list[float | None]:
    """For each (question, context), the share of the context's sentences
    (:func:`~ragworkbook.corpus.chunking.split_sentences` of the unescaped text) whose cosine to the
    question is above ``threshold``; None for a context without a sentence."""
    if len(questions) != len(contexts):
        raise ValueError(f"{len(questions)} questions for {len(contexts)} contexts")
    sentences = [split_sentences(unescape(c)) for c in contexts]
    flat = [s for ss in sentences for s in ss]
    e = _unit((embed or _default_embed())(list(questions) + flat)) if questions else np.zeros((0, 1))
    q, s = e[:len(questions)], e[len(questions):]
    out: list[float | None] = []
    pos = 0
    for i, ss in enumerate(sentences):
        sims = s[pos:pos + len(ss)] @ q[i]
        pos += len(ss)
        out.append(float(np.mean(sims > threshold)) if len(ss) else None)
    return out


def wikieval_baseline_scores(dataset: str, pairs: Sequence[WikiEvalPair], embed: Embed | None = None
                             ) -> list[tuple[float | None, float | None]]:
    """``(good item's score, bad item's score)`` of each WikiEval pair under the data set's baseline
    (``dataset``: a ``judge-check`` WikiEval data set name, ``pairs``: its
    :class:`~ragworkbook.judging.datasets.WikiEvalPair` objects)."""
    if dataset == "wikieval-faithfulness":
        return [(word_overlap(p.good.answer, p.good.context), word_overlap(p.bad.answer, p.bad.context))
                for p in pairs]
    if dataset == "wikieval-answer-relevance":
        qs = [p.question for p in pairs]
        sims = question_similarity(qs + qs, [p.good.answer for p in pairs] + [p.bad.answer for p in pairs],
                                   embed)
        n = len(pairs)
        return [(float(sims[i]), float(sims[n + i])) for i in range(n)]
    if dataset == "wikieval-context-relevance":
        qs = [p.question for p in pairs]
        contexts = [p.good.context for p in pairs] + [p.bad.context for p in pairs]
        shares = similar_sentence_share(qs + qs, contexts, embed)
        n = len(pairs)
        return [(shares[i], shares[n + i]) for i in range(n)]
    raise ValueError(f"no WikiEval baseline for {dataset!r}; WikiEval data sets: "
                     + ", ".join(k for k in BASELINES if k.startswith("wikieval")))


# --------------------------------------------------------------------------------------------
# RAGChecker
# --------------------------------------------------------------------------------------------
def _rouge(kind: str, stem: bool) -> Callable[[str, str], float]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer([kind], use_stemmer=stem)
    return lambda answer, reference: float(scorer.score(reference, answer)[kind].fmeasure)


def _length(answer: str, reference: str) -> float:
    from rouge_score import tokenize

    return float(len(tokenize.tokenize(answer, None)))


#: The metrics :func:`ragchecker_correlations` correlates: name -> (definition, needs a model).
RAGCHECKER_METRICS: dict[str, tuple[str, bool]] = {
    "token_f1": ("token F1 on rouge-score's tokens (lower-cased alphanumeric runs), no stemming", False),
    "squad_token_f1": ("the package's token F1 (SQuAD normalisation: no punctuation, no articles)", False),
    "rouge1": ("ROUGE-1 F (rouge-score, stemmed)", False),
    "rouge_l": ("ROUGE-L F (rouge-score, stemmed)", False),
    "bleu": ("sacrebleu sentence BLEU", False),
    "bertscore": ("BERTScore F1 on the local MiniLM (layer 6, no rescaling)", True),
    "length": ("answer length in rouge-score's tokens (ignores the reference)", False),
}


def ragchecker_metric_scores(pairs: Sequence[RagCheckerPair], metric: str) -> list[tuple[float, float]]:
    """``(score of answer 1, score of answer 2)`` against the reference answer, for each RAGChecker pair
    (:data:`RAGCHECKER_METRICS` names the metrics)."""
    if metric not in RAGCHECKER_METRICS:
        raise ValueError(f"unknown RAGChecker baseline metric {metric!r}; choose one of "
                         + ", ".join(RAGCHECKER_METRICS))
    if metric == "bertscore":
        from ragworkbook.metrics.generation import bertscore

        answers = [p.answer1 for p in pairs] + [p.answer2 for p in pairs]
        f1 = np.asarray(bertscore(answers, [p.reference for p in pairs] * 2).f1, dtype=float)
        n = len(pairs)
        return [(float(f1[i]), float(f1[n + i])) for i in range(n)]
    fn: Callable[[str, str], float] = {
        "token_f1": _rouge("rouge1", False), "squad_token_f1": token_f1, "rouge1": _rouge("rouge1", True),
        # rouge-score's own tokens, as RAGChecker's meta_eval.py scores (the package's rouge_l keeps the
        # words of every script, which moves these correlations in their second decimal)
        "rouge_l": _rouge("rougeL", True), "bleu": bleu, "length": _length}[metric]
    return [(fn(p.answer1, p.reference), fn(p.answer2, p.reference)) for p in pairs]


def ragchecker_verdicts(pairs: Sequence[RagCheckerPair], metric: str = "token_f1") -> list[str]:
    """The baseline's pairwise verdict on each pair: ``"B"`` when answer 2 scores higher on ``metric``,
    ``"A"`` when answer 1 does, ``"tie"`` when they are equal."""
    return ["B" if b > a else "A" if a > b else "tie" for a, b in ragchecker_metric_scores(pairs, metric)]


def ragchecker_correlations(meta: RagCheckerMeta | None = None, metrics: Sequence[str] | None = None
                            ) -> dict[str, dict[str, tuple[float, float]]]:
    """Pearson and Spearman (x 100, 2 decimals) of each metric's answer-2-minus-answer-1 difference with
    the annotators' preferences, per aspect, the way RAGChecker's ``meta_eval.py`` correlates its own
    scores (difference min-max scaled to [-2, 2], each pair's difference repeated for both annotators,
    all 560 labels) -> ``{aspect: {metric: (pearson, spearman)}}``.

    ``meta``: a :class:`~ragworkbook.judging.datasets.RagCheckerMeta` (default: the bundled pairs);
    ``metrics``: default every metric of :data:`RAGCHECKER_METRICS` that needs no model.
    """
    from ragworkbook.judging.datasets import ASPECTS, load_ragchecker

    meta = meta if meta is not None else load_ragchecker(predictions=False)
    names = list(metrics) if metrics is not None else [m for m, (_, model) in RAGCHECKER_METRICS.items()
                                                       if not model]
    deltas = {m: np.repeat(normalised_delta(ragchecker_metric_scores(meta.pairs, m)), 2) for m in names}
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for aspect in ASPECTS:
        human = np.asarray([x for p in meta.pairs for x in p.labels[aspect]], dtype=float)
        out[aspect] = {m: correlation(deltas[m], human) for m in names}
    return out


def ragchecker_baseline_table(correlations: Mapping[str, Mapping[str, tuple[float, float]]]
                              ) -> list[dict[str, str | float]]:
    """Rows ``{"metric", "<aspect> pearson", "<aspect> spearman", ...}`` of
    :func:`ragchecker_correlations`."""
    aspects = list(correlations)
    metrics = list(next(iter(correlations.values()))) if correlations else []
    rows = []
    for m in metrics:
        row: dict[str, str | float] = {"metric": m}
        for a in aspects:
            row[f"{a} pearson"], row[f"{a} spearman"] = correlations[a][m]
        rows.append(row)
    return rows

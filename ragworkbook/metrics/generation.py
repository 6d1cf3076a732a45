"""Reference-based generation metrics: BLEU, ROUGE-1, ROUGE-2, ROUGE-L, METEOR, embedding
similarity, BERTScore, exact match and token F1.

Each metric is a thin, documented call into the library that defines it, so a
value here equals that library called directly on the same inputs:

- :func:`bleu` / :func:`corpus_bleu`: sacrebleu ``sentence_bleu`` / ``corpus_bleu``
  with its defaults (13a tokenisation, case-sensitive, exponential smoothing for
  sentences); scale 0-100, as sacrebleu prints it. Both take **several references**
  per answer (a list of strings): an n-gram of the answer counts as matched up to the
  largest number of times any one reference contains it (clipped counts), and the
  brevity penalty uses the reference length closest to the answer's (sacrebleu's
  default, as in the original BLEU).
- :func:`rouge_n`: rouge-score ``rouge1`` / ``rouge2`` (unigram / bigram overlap) with
  the same stemmer and tokeniser as ROUGE-L; the F-measure by default.
- :func:`rouge_l`: rouge-score ``rougeL`` with the Porter stemmer
  (``use_stemmer=True``); the F-measure by default, precision or recall on request.
  rouge-score lowercases and keeps only ``[a-z0-9]`` runs, so "28.4" is the two
  tokens "28" and "4"; on ASCII text the tokens here are exactly those. Its tokenizer
  drops every other letter (ROUGE of two identical Russian or Chinese sentences
  would be 0.0): :class:`ragworkbook.metrics.words.WordTokenizer` keeps them (a word
  per run of letters of a spaced script, a word per character of Chinese, Japanese,
  Thai...). Token F1 splits the words of such unspaced scripts into characters too.
- :func:`meteor`: NLTK ``meteor_score`` on **whitespace tokens** (``str.split``),
  with the real Princeton WordNet 3.0 prepared offline by :mod:`ragworkbook.metrics.wordnet`
  (never downloaded). NLTK lowercases; punctuation stays attached to words.
- :func:`embedding_similarity`: cosine of the two all-MiniLM-L6-v2 sentence
  embeddings (:mod:`ragworkbook.embeddings`), in [-1, 1].
- :func:`bertscore`: the ``bert-score`` package with ``model_type`` = the local
  all-MiniLM-L6-v2 folder and ``num_layers`` = :data:`BERTSCORE_LAYERS` (6, the
  last layer: the one sentence-transformers fine-tuned for similarity). No idf
  weighting and **no baseline rescaling**: bert-score ships no baseline for this
  model, so the raw scores are not on the scale of published (rescaled,
  roberta-large) BERTScores; compare them with each other only.
- :func:`exact_match` / :func:`token_f1`: SQuAD-style: lowercase, strip
  punctuation (so "28.4" becomes "284"), drop the articles a/an/the, collapse
  whitespace; token F1 counts the bag-of-tokens overlap.

Conventions shared by every function:

- inputs must be ``str``; anything else raises ``TypeError`` (batch functions
  take sequences of ``str``, not a single string, and equal lengths, else
  ``ValueError``);
- an empty (or whitespace-only) answer or reference scores 0.0 on BLEU, ROUGE-L,
  METEOR, embedding similarity and BERTScore (what the libraries return for the
  lexical ones; the model is not called for the others); exact match and token F1
  follow SQuAD v2: if either side normalises to no tokens, the score is 1.0 when
  both do and 0.0 otherwise.
- models (MiniLM, BERTScore's copy of it) are loaded once per process.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ragworkbook.metrics.context_text import CONTEXT_SCORERS

if TYPE_CHECKING:
    import pandas as pd
    from bert_score import BERTScorer
    from rouge_score.rouge_scorer import RougeScorer

    from ragworkbook.metrics.registry import Metric

BERTSCORE_LAYERS = 6
ROUGE_MEASURES = ("fmeasure", "precision", "recall")


# --- input checks --------------------------------------------------------------------------
def _text(x: object, name: str) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a str, got {type(x).__name__}: {x!r:.60}")
    return x


def _texts(xs: object, name: str) -> list[str]:
    if isinstance(xs, str):
        raise TypeError(f"{name} must be a sequence of strings, not a single string; wrap it in a list")
    if not isinstance(xs, Sequence) and not hasattr(xs, "__iter__"):
        raise TypeError(f"{name} must be a sequence of strings, got {type(xs).__name__}")
    out = list(xs)
    for i, x in enumerate(out):
        if not isinstance(x, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(x).__name__}: {x!r:.60}")
    return out


def _pairs(answers: Sequence[str], references: Sequence[str]) -> tuple[list[str], list[str]]:
    a = _texts(answers, "answers")
    r = _texts(references, "references")
    if len(a) != len(r):
        raise ValueError(f"answers and references differ in length ({len(a)} vs {len(r)}): "
                         "pass one reference per answer")
    return a, r


def _empty(s: str) -> bool:
    return not s.strip()


# --- BLEU -------------------------------------------------------------------------------------
def _references(reference: str | Sequence[str], name: str = "reference") -> list[str]:
    """One reference (a str) or several (a non-empty sequence of str) as a list."""
    if isinstance(reference, str):
        return [reference]
    if not isinstance(reference, (list, tuple)):
        raise TypeError(f"{name} must be a str, got {type(reference).__name__}: {reference!r:.60} "
                        "(several references: a list of str)")
    refs = _texts(reference, f"{name}s")
    if not refs:
        raise ValueError(f"give at least one {name} (a string, or a list of strings for several)")
    return refs


def bleu(answer: str, reference: str | Sequence[str]) -> float:
    """Sentence BLEU (sacrebleu ``sentence_bleu``, defaults), 0-100. Empty -> 0.0.

    ``reference``: one string, or a list of strings for several references (clipped n-gram counts take
    the most generous reference for each n-gram; the brevity penalty the closest reference length).
    """
    _text(answer, "answer")
    refs = _references(reference)
    import sacrebleu

    return float(sacrebleu.sentence_bleu(answer, refs).score)


def corpus_bleu(answers: Sequence[str], references: Sequence[str] | Sequence[Sequence[str]]) -> float:
    """Corpus BLEU (sacrebleu ``corpus_bleu``): n-gram counts pooled over all pairs, 0-100.

    Not the mean of sentence BLEUs: the precisions and the brevity penalty are
    computed once over the whole corpus. ``references``: one string per answer, or one list of
    strings per answer (several references; the lists may differ in length). An empty corpus raises
    ``ValueError``.
    """
    a = _texts(answers, "answers")
    if isinstance(references, str):
        raise TypeError("references must be a sequence (one reference, or a list of them, per answer)")
    per = [_references(r) for r in references]
    if len(per) != len(a):
        raise ValueError(f"answers and references differ in length ({len(a)} vs {len(per)}): "
                         "pass one reference (or one list of references) per answer")
    if not a:
        raise ValueError("corpus_bleu needs at least one (answer, reference) pair")
    import sacrebleu

    width = max(len(r) for r in per)
    streams = [[r[i] if i < len(r) else None for r in per] for i in range(width)]
    return float(sacrebleu.corpus_bleu(a, streams).score)


# --- ROUGE ------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _rouge_scorer() -> RougeScorer:
    from rouge_score import rouge_scorer

    from ragworkbook.metrics.words import WordTokenizer

    # rouge-score's own tokens on ASCII text; the words of other scripts kept (its tokenizer drops them)
    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=WordTokenizer(use_stemmer=True))


def rouge_n(answer: str, reference: str, n: int = 1, measure: str = "fmeasure") -> float:
    """ROUGE-N with stemming, from rouge-score: overlap of the answer's and the reference's n-grams
    (``n`` = 1 or 2).

    ``measure``: "fmeasure" (default), "precision" (shared n-grams / answer n-grams) or "recall"
    (shared n-grams / reference n-grams); counts are clipped. Empty -> 0.0.
    """
    _text(answer, "answer")
    _text(reference, "reference")
    if n not in (1, 2):
        raise ValueError(f"ROUGE-N is computed for n = 1 or 2, got {n!r}")
    if measure not in ROUGE_MEASURES:
        raise ValueError(f"unknown ROUGE measure {measure!r}: use one of {ROUGE_MEASURES}")
    score = _rouge_scorer().score(reference, answer)[f"rouge{n}"]
    return float(getattr(score, measure))


def rouge_1(answer: str, reference: str, measure: str = "fmeasure") -> float:
    """ROUGE-1 (unigrams, stemmed): its F-measure unless ``measure`` says otherwise."""
    return rouge_n(answer, reference, 1, measure)


def rouge_2(answer: str, reference: str, measure: str = "fmeasure") -> float:
    """ROUGE-2 (bigrams, stemmed): its F-measure unless ``measure`` says otherwise."""
    return rouge_n(answer, reference, 2, measure)


def rouge_l(answer: str, reference: str, measure: str = "fmeasure") -> float:
    """ROUGE-L (longest common subsequence) with stemming, from rouge-score.

    ``measure``: "fmeasure" (default), "precision" (LCS / answer tokens) or
    "recall" (LCS / reference tokens). Empty -> 0.0.
    """
    _text(answer, "answer")
    _text(reference, "reference")
    if measure not in ROUGE_MEASURES:
        raise ValueError(f"unknown ROUGE measure {measure!r}: use one of {ROUGE_MEASURES}")
    score = _rouge_scorer().score(reference, answer)["rougeL"]
    return float(getattr(score, measure))


# --- METEOR -----------------------------------------------------------------------------------
def meteor(answer: str, reference: str) -> float:
    """NLTK METEOR on whitespace tokens with real WordNet (prepared offline). Empty -> 0.0."""
    _text(answer, "answer")
    _text(reference, "reference")
    if _empty(answer) or _empty(reference):
        return 0.0
    from nltk.translate.meteor_score import meteor_score

    from ragworkbook.metrics.wordnet import get_wordnet

    return float(meteor_score([reference.split()], answer.split(), wordnet=get_wordnet()))


# --- embeddings -------------------------------------------------------------------------------
def embedding_similarities(answers: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Cosine of MiniLM sentence embeddings, one per pair (float64 array). Empty -> 0.0."""
    a, r = _pairs(answers, references)
    out = np.zeros(len(a), dtype=np.float64)
    keep = [i for i in range(len(a)) if not (_empty(a[i]) or _empty(r[i]))]
    if keep:
        from ragworkbook.embeddings import cosine, encode

        ea = encode([a[i] for i in keep])
        er = encode([r[i] for i in keep])
        out[keep] = cosine(ea, er)
    return out


def embedding_similarity(answer: str, reference: str) -> float:
    """Cosine similarity of the all-MiniLM-L6-v2 embeddings of answer and reference."""
    return float(embedding_similarities([_text(answer, "answer")], [_text(reference, "reference")])[0])


# --- BERTScore --------------------------------------------------------------------------------
class BERTScore(NamedTuple):
    """BERTScore per pair: precision, recall and F1 arrays (float64)."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray


@lru_cache(maxsize=2)
def get_bertscorer(num_layers: int = BERTSCORE_LAYERS) -> BERTScorer:
    """A ``bert_score.BERTScorer`` on the local MiniLM, built once per process.

    ``bert_score.score`` reloads its model on every call; the scorer object keeps it.
    """
    from ragworkbook.embeddings import minilm_path, quiet_transformers

    quiet_transformers()
    from bert_score import BERTScorer

    return BERTScorer(model_type=str(minilm_path()), num_layers=num_layers, lang="en",
                      rescale_with_baseline=False, idf=False, device="cpu")


def bertscore(answers: Sequence[str], references: Sequence[str],
              num_layers: int = BERTSCORE_LAYERS) -> BERTScore:
    """BERTScore (P, R, F1) of each answer against its reference, local MiniLM, no rescaling.

    Equal to ``bert_score.score(answers, references, model_type=minilm_path(),
    num_layers=num_layers, lang="en")``. Pairs with an empty side score 0.0 (the
    model is not called for them).
    """
    a, r = _pairs(answers, references)
    p, rec, f = (np.zeros(len(a), dtype=np.float64) for _ in range(3))
    keep = [i for i in range(len(a)) if not (_empty(a[i]) or _empty(r[i]))]
    if keep:
        import torch

        with torch.no_grad():
            P, R, F = get_bertscorer(num_layers).score([a[i] for i in keep], [r[i] for i in keep])
        p[keep], rec[keep], f[keep] = P.double().numpy(), R.double().numpy(), F.double().numpy()
    return BERTScore(p, rec, f)


def bertscore_f1(answers: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """The F1 of :func:`bertscore` of each pair (the registry's ``bertscore_f1``)."""
    return bertscore(answers, references).f1


# --- SQuAD-style exact match and token F1 -----------------------------------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, remove punctuation, remove a/an/the, collapse spaces."""
    _text(text, "text")
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(answer: str, reference: str) -> float:
    """1.0 if the normalised answer equals the normalised reference, else 0.0."""
    _text(answer, "answer")
    _text(reference, "reference")
    return float(normalize_answer(answer) == normalize_answer(reference))


def _f1_tokens(normalized: str) -> list[str]:
    """The tokens of a normalised text: its whitespace-separated words (SQuAD), except that a word of a
    script written without spaces (Chinese, Japanese, Thai...) is split into its characters
    (:func:`ragworkbook.metrics.words.words`); ASCII text is unchanged."""
    out: list[str] = []
    for token in normalized.split():
        if token.isascii():
            out.append(token)
        else:
            from ragworkbook.metrics.words import words

            parts = words(token)
            out.extend(parts if len(parts) > 1 else [token])
    return out


def token_f1(answer: str, reference: str) -> float:
    """SQuAD token F1: harmonic mean of bag-of-token precision and recall after normalisation.

    If either side has no tokens: 1.0 when both are empty, else 0.0 (SQuAD v2).
    """
    a = _f1_tokens(normalize_answer(_text(answer, "answer")))
    r = _f1_tokens(normalize_answer(_text(reference, "reference")))
    if not a or not r:
        return float(a == r)
    same = sum((Counter(a) & Counter(r)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(a), same / len(r)
    return 2 * precision * recall / (precision + recall)


# --- batch ------------------------------------------------------------------------------------
def score_pairs(metric: Metric, answers: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """One generation metric (a :class:`~ragworkbook.metrics.registry.Metric`) of every pair: its
    implementation called with its bound parameters, once over all pairs when its spec is
    ``batched``, else pair by pair."""
    a, r = _pairs(answers, references)
    if metric.spec.batched:
        return np.asarray(metric.compute(a, r), dtype=np.float64)
    return np.array([metric.compute(x, y) for x, y in zip(a, r, strict=True)], dtype=np.float64)


def generation_scores(answers: Sequence[str], references: Sequence[str],
                      metrics: str | Metric | Sequence[str | Metric] | None = None) -> pd.DataFrame:
    """One row per (answer, reference) pair, one column per metric -> ``pandas.DataFrame``.

    ``metrics``: generation metrics of the registry, names (aliases and parameters
    accepted: ``rouge_l(measure=recall)``; the columns carry the names as given, in the
    order given) or :class:`~ragworkbook.metrics.registry.Metric` objects; default: all
    of them (``bleu``, ``rouge_l``, ``rouge_1``, ``rouge_2``, ``meteor``,
    ``embedding_similarity``, ``bertscore_f1``, ``exact_match``, ``token_f1``, ``string_presence``). Models
    are loaded once and each model metric runs as one batch. The text-based context metrics
    (:data:`~ragworkbook.metrics.context_text.CONTEXT_SCORERS`) read contexts, not an answer: ValueError.
    """
    import pandas as pd

    from ragworkbook.metrics.registry import parse_metrics, specs

    a, r = _pairs(answers, references)
    if metrics is None:
        wanted = [s.bind() for s in specs("generation") if s.name not in CONTEXT_SCORERS]
    else:
        wanted = parse_metrics(metrics, "generation")
    text = [m.name for m in wanted if m.kind in CONTEXT_SCORERS]
    if text:
        raise ValueError(f"{', '.join(text)} compare contexts with reference contexts, not an answer with a "
                         "reference: call ragworkbook.metrics.context_text."
                         f"{wanted[0].kind if len(text) == 1 else 'CONTEXT_SCORERS'} with them")
    cols = {m.name: score_pairs(m, a, r) for m in wanted}
    return pd.DataFrame(cols, index=pd.RangeIndex(len(a), name="pair"))


def generation_summary(answers: Sequence[str], references: Sequence[str],
                       metrics: str | Metric | Sequence[str | Metric] | None = None) -> dict[str, float]:
    """Aggregates: ``corpus_bleu`` plus the mean of every per-pair column (``mean_<metric>``)."""
    df = generation_scores(answers, references, metrics)
    out: dict[str, float] = {}
    if "bleu" in df.columns and len(df):
        out["corpus_bleu"] = corpus_bleu(answers, references)
    for c in df.columns:
        out[f"mean_{c}"] = float(df[c].mean()) if len(df) else float("nan")
    return out

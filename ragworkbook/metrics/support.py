"""Word support: how much of an answer the context's own words cover (reference-free, deterministic).

The cheapest faithfulness signal there is, and a strong one on answers that copy
or invent: an answer written from its context reuses the context's words, an
invented one brings its own (a wrong date, a name the context never mentions).

**Definition.** The answer and the context are cut into tokens: lower-cased runs
of letters, and numbers with their decimal point kept (``28.4`` is one token, so a
wrong figure is not rescued by its digits). With ``content_only`` (the default)
the answer's stop words are dropped first (the 179-word English list that ships
with the ``bm25s`` package, NLTK's list plus a few). With ``stem`` (the default)
both sides are compared after NLTK's Porter stemmer ("released" matches
"release"). Then

    word support = answer tokens found in the context / answer tokens

and the answer tokens not found are listed (:attr:`WordSupport.unsupported`, each
once, in the order they first appear, as written in the answer). An answer with
no token (empty, or only stop words) has no support: undefined, never 1.0.

The baseline of :mod:`ragworkbook.judging.baselines` is plainer still (every
word, no stemming, digits split at the decimal point): word support refines it.

**What it cannot see** (notebook 11 shows each):

- *negation*: "no" and "not" are stop words, and even counted they usually occur
  somewhere in the context: "There was no mass shooting at the festival" is made
  entirely of a context's words when the context reports the shooting;
- *paraphrase*: a faithful answer in other words ("commenced" for "began") loses
  support for every synonym, so a low score is not proof of invention;
- *recombination*: the context's own words in a new order ("Comandante opened
  the festival on 9 September" from a context where it opened on 30 August and
  the festival closed on 9 September) are fully supported.

It is therefore a screen, not a verdict: it flags answers that bring words of
their own (and says which), and it must be measured like any judge
(``ragworkbook judge-check --dataset ff --judge word-support``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["TOKEN_RE", "WordSupport", "word_support", "tokens", "stop_words"]

#: A token: a number with its decimal point or comma kept, or a run of letters (apostrophes inside kept).
TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)*")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The English stop words of the ``bm25s`` package (``STOPWORDS_EN_PLUS``: NLTK's list and a few)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(w.lower() for w in STOPWORDS_EN_PLUS)


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - nltk's PorterStemmer
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (:data:`TOKEN_RE`), lower-cased, in order."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return [t.lower() for t in TOKEN_RE.findall(text)]


def _key(token: str, stem: bool) -> str:
    if not stem or token[0].isdigit():
        return token
    return _stemmer().stem(token)


@dataclass(frozen=True)
class WordSupport:
    """The word support of one answer: ``score`` (None when the answer has no token to check),
    ``supported`` of ``total`` tokens found in the context, the ``unsupported`` words (as
    written, once each, in order) and the settings used."""

    score: float | None
    supported: int
    total: int
    unsupported: list[str] = field(default_factory=list)
    content_only: bool = True
    stem: bool = True

    def __str__(self) -> str:
        if self.score is None:
            return "undefined (no word to check)"
        missing = ", ".join(self.unsupported) if self.unsupported else "none"
        return (f"{self.score:.3f} ({self.supported} of {self.total} words in the context; "
                f"not found: {missing})")


def word_support(answer: str, contexts: str | Sequence[str], *, content_only: bool = True,
                 stem: bool = True) -> WordSupport:
    """The share of the answer's (content) words that occur in the context (see the module docstring).

    ``contexts`` is one text or the retrieved chunks (their words pooled)."""
    if isinstance(contexts, str):
        contexts = [contexts]
    if not isinstance(contexts, Sequence) or not all(isinstance(c, str) for c in contexts):
        raise TypeError("contexts must be a string or a sequence of strings (the retrieved chunks)")
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}")
    context_keys = {_key(t, stem) for c in contexts for t in tokens(c)}
    stops = stop_words() if content_only else frozenset()
    raw = TOKEN_RE.findall(answer)
    checked = [(w, _key(w.lower(), stem)) for w in raw if w.lower() not in stops]
    if not checked:
        return WordSupport(None, 0, 0, [], content_only, stem)
    found = [k in context_keys for _, k in checked]
    unsupported: list[str] = []
    seen: set[str] = set()
    for (word, k), ok in zip(checked, found, strict=True):
        if not ok and k not in seen:
            seen.add(k)
            unsupported.append(word)
    return WordSupport(sum(found) / len(checked), sum(found), len(checked), unsupported, content_only, stem)

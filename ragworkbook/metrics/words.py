"""Words of a text in any script, for ROUGE and token F1: ASCII text keeps rouge-score's tokens.

rouge-score's tokenizer lowercases and keeps only ``[a-z0-9]`` runs, so a sentence in Russian or
Chinese has no token at all and two identical such sentences score ROUGE-L 0.0. :class:`WordTokenizer`
keeps the words of every script:

- ``[a-z0-9]`` runs exactly as rouge-score makes them (lowercased, the Porter stemmer on tokens of more
  than 3 characters when ``use_stemmer``): an ASCII text gets rouge-score's tokens, one for one;
- a run of letters, marks and digits with a non-ASCII one among them is one word (Cyrillic, Greek,
  Arabic, Hebrew, Devanagari, accented Latin: "café"), lowercased, not stemmed;
- a character of a script written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
  Khmer, Myanmar, Tibetan) is a word of its own: characters are what ROUGE for Chinese and Japanese
  commonly counts when no word segmenter is given.

Character classes come from the ``regex`` package's Unicode properties (``\\p{Han}``...).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from nltk.stem.porter import PorterStemmer

import regex

__all__ = ["WordTokenizer", "words", "has_non_ascii_words"]

_UNSPACED = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}"
_LETTER = rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{_UNSPACED}]]"  # a letter, mark or digit of a spaced script
_OTHER = rf"[[\p{{L}}\p{{M}}\p{{N}}]--[\x00-\x7f{_UNSPACED}]]"  # ... that is not ASCII
_TOKEN = regex.compile(
    rf"(?P<word>{_LETTER}*{_OTHER}{_LETTER}*)|(?P<ascii>[a-z0-9]+)|(?P<char>[{_UNSPACED}])", flags=regex.V1)


@lru_cache(maxsize=1)
def _stemmer() -> PorterStemmer:
    from nltk.stem import porter

    return porter.PorterStemmer()


def words(text: str, stem: bool = False) -> list[str]:
    """The words of ``text`` (see the module docstring), lowercased; ``stem``: rouge-score's Porter
    stemming of the ASCII words of more than 3 characters."""
    out = []
    for m in _TOKEN.finditer(text.lower()):
        token = m.group(0)
        if stem and m.lastgroup == "ascii" and len(token) > 3:
            token = _stemmer().stem(token)
        out.append(token)
    return out


def has_non_ascii_words(text: str) -> bool:
    """Whether ``text`` has a word that rouge-score's tokenizer would drop (a non-ASCII letter)."""
    return any(m.lastgroup != "ascii" for m in _TOKEN.finditer(text.lower()))


class WordTokenizer:
    """A rouge-score tokenizer (``RougeScorer(tokenizer=WordTokenizer(True))``) that keeps the words of
    every script: :func:`words`."""

    def __init__(self, use_stemmer: bool = False):
        self.use_stemmer = use_stemmer

    def tokenize(self, text: str) -> list[str]:
        """The words of ``text``."""
        return words(text, self.use_stemmer)

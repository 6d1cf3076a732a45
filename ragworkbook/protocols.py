"""The shapes that cross the package's boundaries, as protocols.

A user plugs their own parts in where these are expected; nothing needs to
inherit from a ragworkbook class:

- :class:`RetrieverLike`: ``search(query, k)`` returns hits in rank order
  (:class:`ragworkbook.retrieval.base.Retriever` and its subclasses are one).
- :class:`GeneratorLike`: ``chat(prompt, system=..., schema=..., options=...)``
  returns a :class:`~ragworkbook.llm.base.Generation`
  (:class:`ragworkbook.llm.base.Generator` is one).
- :class:`PipelineLike`: ``answer(question)`` returns an :class:`AnswerLike`
  (the answer text and the contexts it was generated from, in rank order);
  :class:`ragworkbook.pipeline.naive.NaiveRAG` is one.
- :class:`EvalItemLike`: an eval-set question with ``id``, ``question`` and
  ``reference`` (:class:`ragworkbook.corpus.eval_set.EvalItem` is one).

A *context* (a retrieved passage) may be a plain string, a chunk (``.id`` and
``.text``) or a hit (``.chunk``, ``.score``, ``.rank``); :func:`context_text`
and :func:`context_id` read any of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook._types import JSON
    from ragworkbook.llm.base import Generation

__all__ = [
    "ChunkLike",
    "HitLike",
    "Context",
    "RetrieverLike",
    "GeneratorLike",
    "AnswerLike",
    "PipelineLike",
    "EvalItemLike",
    "context_text",
    "context_id",
]


@runtime_checkable
class ChunkLike(Protocol):
    """A passage of a corpus: a unique ``id`` and its ``text``."""

    id: str
    text: str


@runtime_checkable
class HitLike(Protocol):
    """One retrieved passage: the ``chunk``, the retriever's ``score`` and the 1-based ``rank``."""

    chunk: ChunkLike
    score: float
    rank: int


#: What a pipeline may return as a context: a string, a chunk or a hit.
Context = str | ChunkLike | HitLike


@runtime_checkable
class RetrieverLike(Protocol):
    """Anything that searches: the top ``k`` hits for ``query``, best first."""

    def search(self, query: str, k: int) -> Sequence[HitLike]: ...


@runtime_checkable
class GeneratorLike(Protocol):
    """A chat model: one answer per request; with ``schema``, ``Generation.data`` holds the parsed JSON."""

    backend: str
    model: str

    def chat(self, prompt_or_messages: str | Sequence[Mapping[str, str]], *, system: str | None = None,
             schema: Mapping[str, JSON] | None = None,
             options: Mapping[str, JSON] | None = None) -> Generation: ...


@runtime_checkable
class AnswerLike(Protocol):
    """What a pipeline returns for one question: the answer text and its contexts in rank order."""

    answer: str
    contexts: Sequence[Context]


@runtime_checkable
class PipelineLike(Protocol):
    """A RAG system: answers a question from what it retrieved."""

    def answer(self, question: str) -> AnswerLike: ...


@runtime_checkable
class EvalItemLike(Protocol):
    """One eval-set question: ``id``, ``question`` and the ``reference`` answer."""

    id: str
    question: str
    reference: str


def context_text(context: Context) -> str:
    """The text of a context: the string itself, a chunk's ``.text`` or a hit's ``.chunk.text``.

    TypeError for anything else (say what was given and what is accepted).
    """
    if isinstance(context, str):
        return context
    chunk = getattr(context, "chunk", context)
    text = getattr(chunk, "text", None)
    if not isinstance(text, str):
        raise TypeError("a context must be a str, a chunk (.text) or a hit (.chunk.text), "
                        f"got {type(context).__name__}")
    return text


def context_id(context: Context) -> str | None:
    """The chunk id of a context (a chunk's ``.id``, a hit's ``.chunk.id``); None for a plain string."""
    if isinstance(context, str):
        return None
    chunk = getattr(context, "chunk", context)
    cid = getattr(chunk, "id", None)
    return None if cid is None else str(cid)

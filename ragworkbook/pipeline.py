"""The naive RAG pipeline: retrieve the top-k chunks, put them in a prompt, generate.

This is the pipeline of the documented hands-on page (NUMBERS.md, C): dense
retrieval, the top 3 chunks pasted into the prompt, and a model asked to answer
in one short sentence using only those chunks. Nothing clever happens: no
re-ranking, no query rewriting, no answer post-processing beyond stripping
surrounding whitespace. That is the point: it is the baseline the workbook
evaluates.

- :class:`NaiveRAG` ``(retriever, generator, k=3, prompt_template=PROMPT_TEMPLATE,
  system=SYSTEM_PROMPT, options=None)``; ``.answer(question)``,
  ``.answer_from(question, chunks)`` (generation from given chunks, e.g. for the
  lost-in-the-middle experiment), ``.run(eval_set, progress=True)``.
- :class:`RAGAnswer`: the question, the answer text, the contexts (retrieval
  ``Hit`` objects in rank order, or whatever chunks were given), the
  :class:`~ragworkbook.llm.base.Generation` and the exact prompt.
- :func:`save_answers` / :func:`load_answers`: a run as JSON (atomic write).

The retriever is anything with ``.search(query, k) -> list[Hit]``
(:mod:`ragworkbook.retrievers`); the generator anything with
``.chat(prompt, system=..., options=...) -> Generation`` (:mod:`ragworkbook.llm`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SYSTEM_PROMPT = "You answer questions about a research paper using only the context you are given."
PROMPT_TEMPLATE = (
    "Context:\n{context}\n\n"
    "Question: {question}\n"
    "Answer in one short sentence, using only the context above."
)
RUN_FORMAT = "ragworkbook-rag-run/1"


def _text_of(c: Any) -> str:
    """The text of a context: a Hit (``.chunk.text``), a Chunk (``.text``) or a string."""
    if isinstance(c, str):
        return c
    chunk = getattr(c, "chunk", c)
    text = getattr(chunk, "text", None)
    if not isinstance(text, str):
        raise TypeError("a context must be a str, a Chunk (.text) or a Hit (.chunk.text), "
                        f"got {type(c).__name__}")
    return text


def format_context(contexts: Sequence[Any]) -> str:
    """The contexts as numbered blocks: ``[1] text``, separated by blank lines (rank order kept)."""
    return "\n\n".join(f"[{i}] {_text_of(c).strip()}" for i, c in enumerate(contexts, 1))


def build_prompt(question: str, contexts: Sequence[Any], template: str = PROMPT_TEMPLATE) -> str:
    """Fill ``template``'s ``{context}`` and ``{question}`` fields."""
    return template.replace("{context}", format_context(contexts)).replace("{question}", question.strip())


@dataclass
class RAGAnswer:
    """One answer of the pipeline.

    ``contexts`` are the retrieved items in rank order (``Hit`` objects from a
    retriever, or the chunks given to :meth:`NaiveRAG.answer_from`);
    ``generation`` is the generator's full record (backend, model, raw output);
    ``prompt`` the exact user prompt; ``id`` and ``reference`` are filled by
    :meth:`NaiveRAG.run` from the eval set.
    """

    question: str
    answer: str
    contexts: list[Any]
    generation: Any = None
    prompt: str = ""
    id: str | None = None
    reference: str | None = None

    @property
    def context_texts(self) -> list[str]:
        """The text of each context, in rank order."""
        return [_text_of(c) for c in self.contexts]

    @property
    def context_ids(self) -> list[str | None]:
        """The chunk id of each context (``None`` for a plain string), in rank order."""
        return [getattr(getattr(c, "chunk", c), "id", None) for c in self.contexts]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ids, texts, pages, scores and ranks of the contexts; backend and model."""
        ctx = []
        for i, c in enumerate(self.contexts, 1):
            chunk = getattr(c, "chunk", c)
            ctx.append({"rank": int(getattr(c, "rank", i)),
                        "id": getattr(chunk, "id", None),
                        "page": getattr(chunk, "page", None),
                        "score": (float(c.score) if getattr(c, "score", None) is not None else None),
                        "text": _text_of(c)})
        g = self.generation
        return {"id": self.id, "question": self.question, "reference": self.reference,
                "answer": self.answer, "contexts": ctx,
                "backend": getattr(g, "backend", None), "model": getattr(g, "model", None),
                "prompt": self.prompt}


@dataclass
class NaiveRAG:
    """Retrieve the top ``k`` chunks for a question, prompt the generator with them, return the answer.

    ``prompt_template`` must contain ``{context}`` and ``{question}``;
    ``system`` is the system prompt (``None`` for none); ``options`` are passed
    to the generator (its defaults: temperature 0, seed 0, num_predict 256).
    """

    retriever: Any
    generator: Any
    k: int = 3
    prompt_template: str = PROMPT_TEMPLATE
    system: str | None = SYSTEM_PROMPT
    options: Mapping[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k <= 0:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        if not isinstance(self.prompt_template, str):
            raise TypeError("prompt_template must be a str with {context} and {question} fields")
        missing = [f for f in ("{context}", "{question}") if f not in self.prompt_template]
        if missing:
            raise ValueError(f"prompt_template lacks {' and '.join(missing)}: it must contain both "
                             "{context} and {question}")
        if not callable(getattr(self.retriever, "search", None)):
            raise TypeError(f"retriever must have .search(query, k), got {type(self.retriever).__name__}")
        if not callable(getattr(self.generator, "chat", None)):
            raise TypeError(f"generator must have .chat(prompt, ...), got {type(self.generator).__name__}; "
                            "use ragworkbook.llm.get_generator()")

    def retrieve(self, question: str) -> list[Any]:
        """The top-``k`` hits for ``question``, in rank order."""
        return list(self.retriever.search(question, self.k))

    def answer_from(self, question: str, contexts: Sequence[Any]) -> RAGAnswer:
        """Generate an answer from the given contexts (in the given order), without retrieving."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty str, got {question!r}")
        contexts = list(contexts)
        prompt = build_prompt(question, contexts, self.prompt_template)
        gen = self.generator.chat(prompt, system=self.system, options=self.options)
        return RAGAnswer(question=question, answer=gen.text.strip(), contexts=contexts,
                         generation=gen, prompt=prompt)

    def answer(self, question: str) -> RAGAnswer:
        """Retrieve the top ``k`` chunks for ``question`` and answer from them."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty str, got {question!r}")
        return self.answer_from(question, self.retrieve(question))

    def run(self, eval_set: Iterable[Any], progress: bool = True) -> list[RAGAnswer]:
        """Answer every question of ``eval_set`` (an EvalSet, EvalItems, dicts or plain strings).

        Items with ``id``/``reference`` (attributes or keys) carry them into the answers.
        A tqdm progress bar runs over the questions unless ``progress=False``.
        """
        from tqdm.auto import tqdm

        items = list(eval_set)
        out = []
        for it in tqdm(items, desc="naive RAG", disable=not progress, leave=False):
            if isinstance(it, str):
                q, qid, ref = it, None, None
            elif isinstance(it, Mapping):
                q, qid, ref = it["question"], it.get("id"), it.get("reference")
            else:
                q, qid, ref = it.question, getattr(it, "id", None), getattr(it, "reference", None)
            ans = self.answer(q)
            ans.id, ans.reference = qid, ref
            out.append(ans)
        return out

    def describe(self) -> dict[str, Any]:
        """The settings that determine the answers (for saved runs and reports)."""
        gen = f"{getattr(self.generator, 'backend', '?')}:{getattr(self.generator, 'model', '?')}"
        return {"k": self.k, "retriever": type(self.retriever).__name__, "generator": gen,
                "system": self.system, "prompt_template": self.prompt_template,
                "options": dict(self.options) if self.options else None}


def save_answers(answers: Sequence[RAGAnswer], path: str | os.PathLike[str],
                 meta: Mapping[str, Any] | None = None) -> Path:
    """Write a run to ``path`` as JSON, atomically: ``{"format", "meta", "answers": [...]}``.

    Each answer is :meth:`RAGAnswer.to_dict` (question, reference, answer, the
    contexts with id/page/score/rank/text, backend, model, prompt). The content
    depends only on the answers and ``meta``, so re-running a replayed notebook
    rewrites identical bytes.
    """
    from ragworkbook._io import atomic_write_json

    payload = {"format": RUN_FORMAT, "meta": dict(meta or {}), "answers": [a.to_dict() for a in answers]}
    return atomic_write_json(path, payload)


def load_answers(path: str | os.PathLike[str]) -> list[RAGAnswer]:
    """Read a run written by :func:`save_answers`; contexts come back as ``Chunk`` objects."""
    from ragworkbook.chunking import Chunk

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no saved RAG run at {p}: produce it with NaiveRAG.run(...) and "
                                "save_answers(...) (notebook 07 writes data/runs/naive_rag_embedded.json)"
                                ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p} is not a saved RAG run: invalid JSON at line {exc.lineno} "
                         f"({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
        raise ValueError(f"{p} is not a saved RAG run (expected format {RUN_FORMAT!r})")
    out = []
    for a in data["answers"]:
        ctx = [Chunk(id=c.get("id") or f"context-{c.get('rank')}", page=int(c.get("page") or 0),
                     text=c["text"], start=0) for c in a["contexts"]]
        out.append(RAGAnswer(question=a["question"], answer=a["answer"], contexts=ctx, generation=None,
                             prompt=a.get("prompt", ""), id=a.get("id"), reference=a.get("reference")))
    return out

"""One answer of a RAG pipeline, and a run of answers saved as JSON.

- :class:`RAGAnswer`: the question, the answer text, the contexts (retrieval
  ``Hit`` objects in rank order, or whatever chunks were given), the
  :class:`~ragworkbook.llm.base.Generation` and the exact prompt.
- :func:`save_answers` / :func:`load_answers`: a run as JSON (atomic write).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject
from ragworkbook.protocols import Context, context_id, context_text

if TYPE_CHECKING:
    from ragworkbook.llm.base import Generation

__all__ = ["RUN_FORMAT", "RAGAnswer", "save_answers", "load_answers"]

RUN_FORMAT = "ragworkbook-rag-run/1"


@dataclass
class RAGAnswer:
    """One answer of the pipeline.

    ``contexts`` are the retrieved items in rank order (``Hit`` objects from a
    retriever, or the chunks given to :meth:`NaiveRAG.answer_from`);
    ``generation`` is the generator's full record (backend, model, raw output);
    ``prompt`` the exact user prompt; ``id`` and ``reference`` are filled by
    :meth:`NaiveRAG.run` from the eval set; ``retrieved`` is the whole ranking
    when more was retrieved than given to the generator.
    """

    question: str
    answer: str
    contexts: list[Context]
    generation: Generation | None = None
    prompt: str = ""
    id: str | None = None
    reference: str | None = None
    retrieved: list[Context] | None = None

    @property
    def ranking(self) -> list[Context]:
        """Everything retrieved, in rank order (``retrieved``, else the contexts given to the generator)."""
        return list(self.retrieved) if self.retrieved is not None else list(self.contexts)

    @property
    def context_texts(self) -> list[str]:
        """The text of each context, in rank order."""
        return [context_text(c) for c in self.contexts]

    @property
    def context_ids(self) -> list[str | None]:
        """The chunk id of each context (``None`` for a plain string), in rank order."""
        return [context_id(c) for c in self.contexts]

    def to_dict(self) -> JSONObject:
        """JSON-ready form: ids, texts, pages, scores and ranks of the contexts; backend and model."""
        ctx = []
        for i, c in enumerate(self.contexts, 1):
            chunk = getattr(c, "chunk", c)
            ctx.append({"rank": int(getattr(c, "rank", i)),
                        "id": getattr(chunk, "id", None),
                        "page": getattr(chunk, "page", None),
                        "score": (float(c.score) if getattr(c, "score", None) is not None else None),
                        "text": context_text(c)})
        g = self.generation
        return {"id": self.id, "question": self.question, "reference": self.reference,
                "answer": self.answer, "contexts": ctx,
                "backend": getattr(g, "backend", None), "model": getattr(g, "model", None),
                "prompt": self.prompt}


def save_answers(answers: Sequence[RAGAnswer], path: str | os.PathLike[str],
                 meta: Mapping[str, JSON] | None = None) -> Path:
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
    from ragworkbook.corpus.chunking import Chunk

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no saved RAG run at {p}: produce it with NaiveRAG.run(...) and "
                                "save_answers(...) (notebook 07 writes "
                                "ragworkbook/data/runs/naive_rag_embedded.json)"
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

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
- :func:`~ragworkbook.pipeline.answers.save_answers` / ``load_answers``: a run
  as JSON (atomic write).

The retriever is anything with ``.search(query, k) -> list[Hit]``
(:class:`~ragworkbook.protocols.RetrieverLike`, e.g. the retrievers of
:mod:`ragworkbook.retrieval`); the generator anything with
``.chat(prompt, system=..., options=...) -> Generation``
(:class:`~ragworkbook.protocols.GeneratorLike`, :mod:`ragworkbook.llm`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ragworkbook._types import JSON, JSONObject
from ragworkbook._validate import check_k
from ragworkbook.pipeline.answers import RAGAnswer
from ragworkbook.protocols import Context, EvalItemLike, GeneratorLike, HitLike, RetrieverLike, context_text

SYSTEM_PROMPT = "You answer questions about a research paper using only the context you are given."
PROMPT_TEMPLATE = (
    "Context:\n{context}\n\n"
    "Question: {question}\n"
    "Answer in one short sentence, using only the context above."
)


def format_context(contexts: Sequence[Context]) -> str:
    """The contexts as numbered blocks: ``[1] text``, separated by blank lines (rank order kept)."""
    return "\n\n".join(f"[{i}] {context_text(c).strip()}" for i, c in enumerate(contexts, 1))


def build_prompt(question: str, contexts: Sequence[Context], template: str = PROMPT_TEMPLATE) -> str:
    """Fill ``template``'s ``{context}`` and ``{question}`` fields."""
    return template.replace("{context}", format_context(contexts)).replace("{question}", question.strip())


@dataclass
class NaiveRAG:
    """Retrieve the top ``k`` chunks for a question, prompt the generator with them, return the answer.

    ``prompt_template`` must contain ``{context}`` and ``{question}``;
    ``system`` is the system prompt (``None`` for none); ``options`` are passed
    to the generator (its defaults: temperature 0, seed 0, num_predict 256).
    ``depth`` (default ``k``): how many chunks to retrieve; the generator sees
    the top ``k``, and the whole ranking is kept on ``RAGAnswer.retrieved`` so
    that retrieval metrics can be cut deeper than ``k`` (MRR@5 with k = 3).
    """

    retriever: RetrieverLike
    generator: GeneratorLike
    k: int = 3
    prompt_template: str = PROMPT_TEMPLATE
    system: str | None = SYSTEM_PROMPT
    options: Mapping[str, JSON] | None = field(default=None)
    depth: int | None = None

    def __post_init__(self) -> None:
        check_k(self.k)
        check_k(self.depth, "depth", optional=True)
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

    def retrieve(self, question: str) -> list[HitLike]:
        """The top ``max(k, depth)`` hits for ``question``, in rank order."""
        return list(self.retriever.search(question, max(self.k, self.depth or 0)))

    def answer_from(self, question: str, contexts: Sequence[Context]) -> RAGAnswer:
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
        hits = self.retrieve(question)
        ans = self.answer_from(question, hits[: self.k])
        ans.retrieved = hits
        return ans

    def run(self, eval_set: Iterable[str | Mapping[str, str] | EvalItemLike],
            progress: bool = True) -> list[RAGAnswer]:
        """Answer every question of ``eval_set`` (an EvalSet, EvalItems, dicts or plain strings).

        Items with ``id``/``reference`` (attributes or keys) carry them into the answers.
        A tqdm progress bar runs over the questions unless ``progress=False``.
        """
        from tqdm.auto import tqdm

        questions = [_question_of(it) for it in eval_set]
        out = []
        for q, qid, ref in tqdm(questions, desc="naive RAG", disable=not progress, leave=False):
            ans = self.answer(q)
            ans.id, ans.reference = qid, ref
            out.append(ans)
        return out

    def describe(self) -> JSONObject:
        """The settings that determine the answers (for saved runs and reports)."""
        gen = f"{getattr(self.generator, 'backend', '?')}:{getattr(self.generator, 'model', '?')}"
        return {"k": self.k, "retriever": type(self.retriever).__name__, "generator": gen,
                "system": self.system, "prompt_template": self.prompt_template,
                "options": dict(self.options) if self.options else None}


def _question_of(item: str | Mapping[str, str] | EvalItemLike) -> tuple[str, str | None, str | None]:
    """(question, id, reference) of a plain question, a mapping or an eval item; id and reference
    may be absent."""
    if isinstance(item, str):
        return item, None, None
    if isinstance(item, Mapping):
        return item["question"], item.get("id"), item.get("reference")
    return item.question, getattr(item, "id", None), getattr(item, "reference", None)

"""Synthetic eval sets: questions generated from chunks by a local model, then filtered.

Writing questions by hand is the expensive part of an eval set. A common shortcut is to let a
language model write one question per chunk — the chunk it was written from is then, by
construction, a relevant chunk for it — and to keep only the questions that pass a few checks.
This module does both steps and keeps every intermediate:

1. :func:`generate_questions`: one schema-constrained call per chunk (or ``n_per_chunk``)
   (``{"question": ..., "answer": ...}``, :data:`GENERATION_PROMPT`), the answer being a short
   span copied from the chunk; optional few-shot demonstrations (questions written for a few
   chunks) go first as earlier chat turns. A call whose output does not parse is kept as a
   failed candidate (``error`` set), never dropped silently.
2. :func:`filter_questions`: the filters, in this order (a candidate is dropped by the first
   it fails; the cheap deterministic ones run first, so the model is only asked about the
   survivors):

   - ``generation_failed``: the generation call failed;
   - ``malformed``: not a question (no final ``?``), fewer than 4 words, or an empty answer;
   - ``refers_to_passage``: it points at the passage ("according to the passage", "this
     text"), so it means nothing to a user without the chunk;
   - ``copies_chunk``: :func:`copy_ratio` >= ``copy_threshold`` — the question is a sentence
     of the chunk with a question mark, which any lexical retriever finds trivially;
   - ``answer_not_in_chunk``: the generated answer is not a span of its chunk (whitespace
     and case ignored), so the model answered from elsewhere or invented;
   - ``not_answerable``: the model, asked to answer the question from the chunk alone
     (:data:`ANSWER_PROMPT`), gives no answer, or an answer whose token F1 against the
     generated answer is below ``min_f1`` (round-trip consistency; its ``answerable`` flag is
     recorded but the answer decides, as in SQuAD 2.0); a failed check call drops the
     candidate too (``check_failed``);
   - ``duplicate``: its MiniLM embedding has cosine >= ``dup_threshold`` with an earlier kept
     question (near-duplicates inflate a set without adding information).
3. :func:`synthetic_eval_set` / :func:`synthetic_qrels`: the kept questions as an
   :class:`~ragworkbook.corpus.eval_set.EvalSet` (reference and keyword = the generated answer,
   a span of the source chunk) and qrels ``{question id: {source chunk id: 1}}``;
   :func:`save_synthetic_eval_set` writes them in the format of ``ragworkbook/data/eval_set.json``.

What the labels do *not* say: only the source chunk is marked relevant, although overlapping
windows and restated facts (a summary page, a cheat-sheet) often answer the same question —
synthetic qrels have false negatives, as keyword qrels do. And the source-chunk labels belong to
one chunking; under another, label the set with the keyword rule (the answers are the keywords).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook._types import JSON, JSONObject, JSONScalar
from ragworkbook.corpus.chunking import Chunk
from ragworkbook.protocols import GeneratorLike

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragworkbook.corpus.eval_set import EvalSet
    from ragworkbook.llm.request import Schema

__all__ = [
    "GENERATION_SYSTEM",
    "GENERATION_PROMPT",
    "ANSWER_PROMPT",
    "FILTERS",
    "SyntheticQuestion",
    "FilterResult",
    "Example",
    "load_examples",
    "question_schema",
    "answer_schema",
    "copy_ratio",
    "answer_in_chunk",
    "refers_to_passage",
    "generate_questions",
    "filter_questions",
    "synthetic_eval_set",
    "save_synthetic_eval_set",
    "synthetic_qrels",
    "load_synthetic",
    "answer_span_qrels",
]

GENERATION_SYSTEM = "You write exam questions about a research paper. Answer only with JSON."

#: One question per chunk (``{chunk}`` is the chunk text).
GENERATION_PROMPT = (
    "Passage:\n{chunk}\n\n"
    "Write one question that this passage answers, and its answer: a few words copied from the passage. "
    "Reply in JSON."
)

#: The round-trip check: answer the question from its chunk alone.
ANSWER_PROMPT = (
    "Passage:\n{chunk}\n\nQuestion: {question}\n\n"
    "Answer the question using only the passage. If the passage does not answer it, set "
    "\"answerable\" to 0 and \"answer\" to an empty string.\n\n"
    "Reply in JSON with the keys \"answer\" (a few words) and \"answerable\" (0 or 1)."
)

#: The filters in the order they are applied (a candidate is dropped by the first it fails).
FILTERS = ("generation_failed", "malformed", "refers_to_passage", "copies_chunk", "answer_not_in_chunk",
           "not_answerable", "check_failed", "duplicate")


def question_schema(max_question: int = 200, max_answer: int = 40) -> JSONObject:
    """Schema of one generated question: ``{"question": str, "answer": str}``, the answer at most
    ``max_answer`` characters (a short span, not a paraphrase), the question at most ``max_question``."""
    return {"type": "object",
            "properties": {"question": {"type": "string", "maxLength": max_question},
                           "answer": {"type": "string", "maxLength": max_answer}},
            "required": ["question", "answer"]}


def answer_schema() -> JSONObject:
    """Schema of the round-trip answer: ``{"answer": str, "answerable": 0|1}`` (answer first)."""
    return {"type": "object",
            "properties": {"answer": {"type": "string"}, "answerable": {"type": "integer", "enum": [0, 1]}},
            "required": ["answer", "answerable"]}


@dataclass
class SyntheticQuestion:
    """One generated candidate: its ``id`` (``"s-p05-c02"``), source ``chunk_id`` and ``page``, the
    ``question`` and ``answer`` the model wrote, ``error`` when the generation failed (``raw`` keeps
    the model's outputs), ``checks`` (what each filter measured) and ``dropped_by`` (the first
    filter it failed; None when kept)."""

    id: str
    chunk_id: str
    page: int
    question: str = ""
    answer: str = ""
    error: str | None = None
    raw: list[str] = field(default_factory=list)
    checks: dict[str, JSONScalar] = field(default_factory=dict)
    dropped_by: str | None = None

    @property
    def kept(self) -> bool:
        """True when no filter dropped it."""
        return self.dropped_by is None


_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def copy_ratio(question: str, chunk_text: str) -> float:
    """The longest run of consecutive words the question shares with the chunk, divided by the
    question's length in words (lowercase ``\\w+`` tokens; 0.0 for a question without words).

    1.0 means the whole question appears word for word in the chunk.
    """
    q, c = _words(question), _words(chunk_text)
    if not q or not c:
        return 0.0
    best = 0
    prev = [0] * (len(c) + 1)
    for qi in q:
        cur = [0] * (len(c) + 1)
        for j, cj in enumerate(c, start=1):
            if qi == cj:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best / len(q)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def answer_in_chunk(answer: str, chunk_text: str) -> bool:
    """Whether ``answer`` occurs in the chunk, ignoring case, surrounding punctuation and runs of
    white space."""
    a = _norm(answer).strip(" .,;:!?\"'")
    return bool(a) and a in _norm(chunk_text)


_PASSAGE = re.compile(r"\b(the|this|that|above|given|following)\s+(passage|text|excerpt|context|chunk|"
                      r"paragraph|notes?|section)\b", re.IGNORECASE)


def refers_to_passage(question: str) -> bool:
    """Whether the question points at its passage ("according to the passage", "in this text")."""
    return _PASSAGE.search(question) is not None


def _setup_errors() -> tuple[type[BaseException], ...]:
    from ragworkbook.llm.base import BackendUnavailable, ModelNotFound, ReplayMissError

    return (BackendUnavailable, ModelNotFound, ReplayMissError)


def _ask(generator: GeneratorLike, prompt: str | list[dict[str, str]], schema: Schema,
         system: str | None, options: Mapping[str, JSON] | None) -> tuple[JSON, list[str], str | None]:
    """One schema-constrained call: ``(data, raw_outputs, error)``; set-up errors propagate."""
    from ragworkbook.llm.base import LLMError, OutputParseError

    try:
        gen = generator.chat(prompt, system=system, schema=schema, options=options)
    except OutputParseError as exc:
        return None, list(exc.raw_outputs), f"output_parse_error: {exc}"
    except _setup_errors():
        raise
    except LLMError as exc:
        return None, [], f"llm_error: {exc}"
    return gen.data, list(gen.raw_outputs), None


#: A demonstration for few-shot generation: a chunk's text and the question / answer written for it.
Example = tuple[str, Mapping[str, str]]


def _demonstration_turns(examples: Sequence[Example], prompt: str) -> list[dict[str, str]]:
    import json

    turns: list[dict[str, str]] = []
    for text, qa in examples:
        turns.append({"role": "user", "content": prompt.replace("{chunk}", text)})
        turns.append({"role": "assistant", "content": json.dumps({"question": qa["question"],
                                                                  "answer": qa["answer"]})})
    return turns


def load_examples(chunks: Sequence[Chunk], path: str | os.PathLike[str] | None = None) -> list[Example]:
    """Few-shot demonstrations from a JSON file (default ``ragworkbook/data/synthetic_examples.json``):
    ``{"examples": [{"chunk": id, "question", "answer"}]}`` -> ``[(chunk text, {"question", "answer"})]``.

    ValueError naming the file when a demonstration's chunk is not among ``chunks`` or its answer is
    not a span of that chunk (a demonstration must show what the filters keep).
    """
    import json

    from ragworkbook.paths import data_path

    p = Path(path) if path is not None else data_path("synthetic_examples.json")
    data = json.loads(p.read_text(encoding="utf-8"))
    by_id = {c.id: c for c in chunks}
    out: list[Example] = []
    for i, ex in enumerate(data.get("examples", [])):
        chunk = by_id.get(ex.get("chunk"))
        if chunk is None:
            raise ValueError(f"{p}: examples[{i}] names chunk {ex.get('chunk')!r}, which is not among the "
                             "chunks given (the demonstrations were written for the 400/50 windows of the "
                             "notes)")
        if not answer_in_chunk(ex["answer"], chunk.text):
            raise ValueError(f"{p}: examples[{i}]: the answer {ex['answer']!r} is not a span of {chunk.id}")
        out.append((chunk.text, {"question": ex["question"], "answer": ex["answer"]}))
    return out


def generate_questions(chunks: Sequence[Chunk], generator: GeneratorLike, *,
                       examples: Sequence[Example] = (), n_per_chunk: int = 1,
                       options: Mapping[str, JSON] | None = None, system: str | None = GENERATION_SYSTEM,
                       prompt: str = GENERATION_PROMPT, progress: bool = True) -> list[SyntheticQuestion]:
    """Candidate questions for every chunk, in chunk order (a tqdm bar over the calls).

    ``generator`` is any :class:`~ragworkbook.protocols.GeneratorLike` (a live backend, or a
    replay of a recording); ``prompt`` must contain ``{chunk}``. ``examples`` are few-shot
    demonstrations, sent as earlier turns of the chat (a small model imitates a worked turn far
    better than an instruction); the chunks they were written for get no candidates of their own.
    ``n_per_chunk`` > 1 asks again with the demonstrations rotated (a different prompt, so a
    different question at temperature 0); ids are ``s-<chunk id>`` or ``s-<chunk id>-<j>``.
    A failed call gives a candidate with ``error`` set (dropped later as ``generation_failed``);
    set-up errors (no backend, model missing, replay miss) propagate.
    """
    if "{chunk}" not in prompt:
        raise ValueError("prompt must contain the field {chunk}")
    if n_per_chunk < 1:
        raise ValueError(f"n_per_chunk must be >= 1, got {n_per_chunk}")
    from tqdm.auto import tqdm

    demo_texts = {text for text, _ in examples}
    examples = list(examples)
    todo = [(c, j) for c in chunks if c.text not in demo_texts for j in range(n_per_chunk)]
    out = []
    for c, j in tqdm(todo, desc="generating questions", disable=not progress, leave=False):
        shots = examples[j % len(examples):] + examples[:j % len(examples)] if examples else []
        messages = _demonstration_turns(shots, prompt) + [{"role": "user",
                                                           "content": prompt.replace("{chunk}", c.text)}]
        data, raw, error = _ask(generator, messages, question_schema(), system, options)
        qid = f"s-{c.id}" if n_per_chunk == 1 else f"s-{c.id}-{j + 1}"
        q = SyntheticQuestion(id=qid, chunk_id=c.id, page=c.page, error=error, raw=raw)
        if data is not None:
            q.question, q.answer = data["question"].strip(), data["answer"].strip()
        out.append(q)
    return out


@dataclass
class FilterResult:
    """The candidates after filtering (each with its ``checks`` and ``dropped_by``), in input order."""

    candidates: list[SyntheticQuestion]

    @property
    def kept(self) -> list[SyntheticQuestion]:
        """The candidates no filter dropped."""
        return [q for q in self.candidates if q.kept]

    def counts(self) -> dict[str, int]:
        """How many candidates each filter dropped (every filter listed, in order), and how many were kept."""
        out = {f: 0 for f in FILTERS}
        for q in self.candidates:
            if q.dropped_by is not None:
                out[q.dropped_by] += 1
        out["kept"] = len(self.kept)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate: chunk, question, answer, what each check measured, dropped_by."""
        import pandas as pd

        rows = []
        for q in self.candidates:
            rows.append({"id": q.id, "chunk": q.chunk_id, "question": q.question, "answer": q.answer,
                         **q.checks, "dropped_by": q.dropped_by or ""})
        return pd.DataFrame(rows).set_index("id")


def filter_questions(candidates: Sequence[SyntheticQuestion], chunks: Sequence[Chunk],
                     generator: GeneratorLike | None, *, copy_threshold: float = 0.7, min_f1: float = 0.5,
                     dup_threshold: float = 0.9, options: Mapping[str, JSON] | None = None,
                     system: str | None = GENERATION_SYSTEM,
                     embed: Callable[[list[str]], np.ndarray] | None = None,
                     progress: bool = True) -> FilterResult:
    """Apply the filters of the module docstring, in order, and record what each measured.

    ``generator`` answers the round-trip check (``None`` skips that filter: every survivor of
    the deterministic filters passes it, and ``checks["answerable"]`` stays unset). ``embed``
    maps texts to vectors for the duplicate filter (default: the local MiniLM). The
    candidates are updated in place and returned in a :class:`FilterResult`.
    """
    thresholds = {"copy_threshold": copy_threshold, "min_f1": min_f1, "dup_threshold": dup_threshold}
    for name, val in thresholds.items():
        if not 0.0 <= float(val) <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, got {val}")
    from tqdm.auto import tqdm

    from ragworkbook.metrics.generation import token_f1

    by_id = {c.id: c for c in chunks}
    cands = list(candidates)
    for q in cands:
        q.checks, q.dropped_by = {}, None
        if q.error is not None:
            q.dropped_by = "generation_failed"
            continue
        if q.chunk_id not in by_id:
            raise ValueError(f"candidate {q.id}: its chunk {q.chunk_id!r} is not among the chunks given")
        text = by_id[q.chunk_id].text
        q.checks["copy_ratio"] = round(copy_ratio(q.question, text), 4)
        q.checks["answer_in_chunk"] = answer_in_chunk(q.answer, text)
        if not q.question.endswith("?") or len(_words(q.question)) < 4 or not q.answer:
            q.dropped_by = "malformed"
        elif refers_to_passage(q.question):
            q.dropped_by = "refers_to_passage"
        elif q.checks["copy_ratio"] >= copy_threshold:
            q.dropped_by = "copies_chunk"
        elif not q.checks["answer_in_chunk"]:
            q.dropped_by = "answer_not_in_chunk"
    if generator is not None:
        survivors = [q for q in cands if q.dropped_by is None]
        for q in tqdm(survivors, desc="round-trip check", disable=not progress, leave=False):
            chunk_text = by_id[q.chunk_id].text
            prompt = ANSWER_PROMPT.replace("{chunk}", chunk_text).replace("{question}", q.question)
            data, _, error = _ask(generator, prompt, answer_schema(), system, options)
            if data is None:
                q.checks["check_error"] = error
                q.dropped_by = "check_failed"
                continue
            got = data["answer"].strip()  # empty = no answer; the flag is kept, not trusted over it
            f1 = float(token_f1(got, q.answer)) if got else 0.0
            q.checks.update(answerable=int(data["answerable"]), roundtrip_answer=got,
                            roundtrip_f1=round(f1, 4))
            if not got or f1 < min_f1:
                q.dropped_by = "not_answerable"
    survivors = [q for q in cands if q.dropped_by is None]
    if len(survivors) > 1:
        if embed is None:
            from ragworkbook.embeddings import encode

            embed = encode
        vecs = np.asarray(embed([q.question for q in survivors]), dtype=float)
        vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        kept_idx: list[int] = []
        for i, q in enumerate(survivors):
            sims = [float(vecs[i] @ vecs[j]) for j in kept_idx]
            best = max(sims) if sims else 0.0
            q.checks["max_similarity_to_kept"] = round(best, 4)
            if best >= dup_threshold:
                q.checks["duplicate_of"] = survivors[kept_idx[int(np.argmax(sims))]].id
                q.dropped_by = "duplicate"
            else:
                kept_idx.append(i)
    return FilterResult(cands)


def synthetic_eval_set(questions: Sequence[SyntheticQuestion], name: str = "synthetic") -> EvalSet:
    """The kept questions as an eval set: id, question, reference = the generated answer, and keyword =
    the same answer. The answer is a span of its source chunk (the ``answer_not_in_chunk`` filter saw
    to it), so :func:`~ragworkbook.corpus.ground_truth.keyword_qrels` can label the set under any
    chunking — with the keyword rule's caveats (a short answer may match many chunks)."""
    from ragworkbook.corpus.eval_set import EvalItem, EvalSet

    items = [EvalItem(id=q.id, question=q.question, keyword=q.answer, reference=q.answer)
             for q in questions if q.kept]
    if not items:
        raise ValueError("no question was kept: there is nothing to build an eval set from")
    return EvalSet(items, name=name, description="questions generated from chunks by a local model, "
                                                 "filtered",
                   source="ragworkbook.corpus.synthetic")


def save_synthetic_eval_set(questions: Sequence[SyntheticQuestion], path: str | os.PathLike[str], *,
                            name: str = "synthetic", description: str = "", source: str = "") -> Path:
    """Write the kept questions in the eval-set format of ``ragworkbook/data/eval_set.json``
    (atomically), with each item's source ``chunk`` and ``page`` beside ``id``, ``question``, ``keyword`` and
    ``reference``; :func:`ragworkbook.corpus.eval_set.load_eval_set` reads it back."""
    from ragworkbook._io import atomic_write_json

    kept = [q for q in questions if q.kept]
    if not kept:
        raise ValueError("no question was kept: there is nothing to save")
    payload = {"name": name, "description": description or "questions generated from chunks by a local "
               "model, filtered (ragworkbook.corpus.synthetic)", "source": source,
               "items": [{"id": q.id, "question": q.question, "keyword": q.answer, "reference": q.answer,
                          "chunk": q.chunk_id, "page": q.page} for q in kept]}
    return atomic_write_json(path, payload)


def load_synthetic(path: str | os.PathLike[str]) -> list[SyntheticQuestion]:
    """Read back the questions written by :func:`save_synthetic_eval_set` (all of them kept)."""
    import json

    p = Path(path)
    data = json.loads(p.read_text(encoding="utf-8"))
    out = []
    for i, it in enumerate(data.get("items", [])):
        missing = [k for k in ("id", "question", "reference", "chunk", "page") if k not in it]
        if missing:
            raise ValueError(f"{p}: items[{i}] lacks {', '.join(missing)} (not written by "
                             "save_synthetic_eval_set?)")
        out.append(SyntheticQuestion(id=it["id"], chunk_id=it["chunk"], page=int(it["page"]),
                                     question=it["question"], answer=it["reference"]))
    return out


def _answer_offset(answer: str, text: str) -> tuple[int, int] | None:
    words = [re.escape(w) for w in answer.strip(" .,;:!?\"'").split()]
    if not words:
        return None
    m = re.search(r"\s+".join(words), text, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def answer_span_qrels(questions: Sequence[SyntheticQuestion], source_chunks: Sequence[Chunk],
                      chunks: Sequence[Chunk]) -> dict[str, dict[str, int]]:
    """Relevance judgements of the kept questions under another chunking: ``{question id: {chunk id: 1}}``.

    The answer's occurrence in its source chunk fixes a character span of the page; a chunk of
    ``chunks`` is relevant when it lies on that page and contains the whole span (case and runs of
    white space ignored when the answer is located). Unlike the keyword rule, an answer such as "6"
    does not make every chunk that mentions a 6 relevant: only the chunks that hold *this* occurrence.
    A question whose span no chunk contains whole (a boundary cut it) has no relevant chunk, and
    scores 0 — the label follows the text, as it should. ``source_chunks`` must be the chunking the
    questions were generated from (their ``chunk_id`` must be among them).
    """
    by_id = {c.id: c for c in source_chunks}
    out: dict[str, dict[str, int]] = {}
    for q in questions:
        if not q.kept:
            continue
        src = by_id.get(q.chunk_id)
        if src is None:
            raise ValueError(f"question {q.id}: its source chunk {q.chunk_id!r} is not among source_chunks")
        span = _answer_offset(q.answer, src.text)
        if span is None:
            raise ValueError(f"question {q.id}: its answer {q.answer!r} is not in its source chunk "
                             f"{src.id}")
        start, end = src.start + span[0], src.start + span[1]
        out[q.id] = {c.id: 1 for c in chunks if c.page == src.page and c.start <= start and c.end >= end}
    return out


def synthetic_qrels(questions: Sequence[SyntheticQuestion]) -> dict[str, dict[str, int]]:
    """Relevance judgements of the kept questions: ``{question id: {source chunk id: 1}}``."""
    return {q.id: {q.chunk_id: 1} for q in questions if q.kept}

"""ragworkbook.pipeline.naive: the naive RAG pipeline with a fake retriever and generator (no model)."""

from __future__ import annotations

import json

import pytest
from fakes.pipelines import tiny_eval_set

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.llm.base import Generator
from ragworkbook.pipeline.answers import RAGAnswer, load_answers, save_answers
from ragworkbook.pipeline.naive import (
    PROMPT_TEMPLATE,
    SYSTEM_PROMPT,
    NaiveRAG,
    build_prompt,
)
from ragworkbook.retrieval.base import Hit

CHUNKS = [Chunk("p01-c01", 1, "The encoder is a stack of N = 6 identical layers.", 0),
          Chunk("p02-c01", 2, "We use h = 8 parallel attention heads.", 0),
          Chunk("p03-c01", 3, "Training used the Adam optimizer.", 0),
          Chunk("p04-c01", 4, "Dropout Pdrop = 0.1 for the base model.", 0)]


class FakeRetriever:
    """Ranks chunks by the number of shared lowercase words; records the calls."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.calls = []

    def search(self, query, k=5):
        self.calls.append((query, k))
        q = set(query.lower().replace("?", "").split())
        scores = [float(len(q & set(c.text.lower().rstrip(".").split()))) for c in self.chunks]
        order = sorted(range(len(self.chunks)), key=lambda i: -scores[i])[:k]
        return [Hit(self.chunks[i], scores[i], r) for r, i in enumerate(order, 1)]


class EchoGenerator(Generator):
    """A real Generator subclass whose answer reveals what it was sent."""

    backend = "fake"

    def __init__(self):
        super().__init__("echo-1")
        self.seen = []

    def _chat_once(self, messages, options, schema):
        self.seen.append((messages, options))
        return f"  answer #{len(self.seen)} ({len(messages)} messages)\n"


@pytest.fixture
def rag():
    return NaiveRAG(FakeRetriever(CHUNKS), EchoGenerator(), k=3)


def test_answer_retrieves_k_and_prompts_with_them(rag):
    ans = rag.answer("How many attention heads?")
    assert isinstance(ans, RAGAnswer)
    assert rag.retriever.calls == [("How many attention heads?", 3)]
    assert len(ans.contexts) == 3 and ans.context_ids[0] == "p02-c01"
    assert [h.rank for h in ans.contexts] == [1, 2, 3]
    assert ans.answer == "answer #1 (2 messages)"  # stripped
    assert ans.generation.backend == "fake" and ans.generation.model == "echo-1"
    messages, options = rag.generator.seen[0]
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert messages[1]["content"] == ans.prompt
    assert ans.prompt.startswith("Context:\n[1] We use h = 8 parallel attention heads.\n\n[2] ")
    assert ans.prompt.endswith("Question: How many attention heads?\n"
                               "Answer in one short sentence, using only the context above.")
    assert options["temperature"] == 0.0 and options["seed"] == 0


def test_build_prompt_keeps_order_and_accepts_strings_chunks_hits():
    p = build_prompt(" Q? ", ["first", CHUNKS[0], Hit(CHUNKS[1], 1.0, 3)])
    assert p == ("Context:\n[1] first\n\n[2] The encoder is a stack of N = 6 identical layers.\n\n"
                 "[3] We use h = 8 parallel attention heads.\n\nQuestion: Q?\n"
                 "Answer in one short sentence, using only the context above.")
    with pytest.raises(TypeError, match="a context must be a str, a chunk"):
        build_prompt("Q", [3])


def test_answer_from_given_chunks_does_not_retrieve(rag):
    ans = rag.answer_from("Which optimizer?", [CHUNKS[3], CHUNKS[2]])
    assert rag.retriever.calls == []
    assert ans.context_texts == [CHUNKS[3].text, CHUNKS[2].text]
    assert "[1] Dropout" in ans.prompt and "[2] Training" in ans.prompt


def test_custom_template_system_and_options():
    gen = EchoGenerator()
    rag = NaiveRAG(FakeRetriever(CHUNKS), gen, k=1, prompt_template="{question}|{context}", system=None,
                   options={"num_predict": 32})
    ans = rag.answer("adam?")
    assert ans.prompt.startswith("adam?|[1] ")
    messages, options = gen.seen[0]
    assert [m["role"] for m in messages] == ["user"] and options["num_predict"] == 32
    assert rag.describe()["generator"] == "fake:echo-1"


def test_bad_configuration_errors():
    with pytest.raises(ValueError, match="k must be a positive integer"):
        NaiveRAG(FakeRetriever(CHUNKS), EchoGenerator(), k=0)
    with pytest.raises(ValueError, match=r"prompt_template lacks \{context\}"):
        NaiveRAG(FakeRetriever(CHUNKS), EchoGenerator(), prompt_template="{question}")
    with pytest.raises(TypeError, match=r"retriever must have .search"):
        NaiveRAG(object(), EchoGenerator())
    with pytest.raises(TypeError, match="get_generator"):
        NaiveRAG(FakeRetriever(CHUNKS), object())
    with pytest.raises(ValueError, match="question must be a non-empty str"):
        NaiveRAG(FakeRetriever(CHUNKS), EchoGenerator()).answer("  ")
    assert PROMPT_TEMPLATE.count("{context}") == 1


def test_run_over_eval_set_and_save_load_roundtrip(rag, tmp_path):
    answers = rag.run(tiny_eval_set(2), progress=False)
    assert [a.id for a in answers] == ["q1", "q2"]
    assert [a.question for a in answers] == ["How many heads?", "Which optimizer?"]
    assert [a.reference for a in answers] == ["The model used 8 heads.", "They used Adam."]
    assert [a.answer for a in answers] == ["answer #1 (2 messages)", "answer #2 (2 messages)"]
    # strings and dicts work too
    assert rag.run(["Which optimizer?", {"question": "heads?", "id": "x"}], progress=False)[1].id == "x"

    path = save_answers(answers, tmp_path / "runs" / "run.json", meta=rag.describe())
    data = json.loads(path.read_text())
    assert data["format"] == "ragworkbook-rag-run/1" and data["meta"]["k"] == 3
    first = data["answers"][0]
    assert first["contexts"][0] == {"rank": 1, "id": "p02-c01", "page": 2, "score": 1.0,  # "heads"
                                    "text": CHUNKS[1].text}
    assert first["backend"] == "fake" and first["model"] == "echo-1"
    before = path.read_bytes()
    save_answers(answers, path, meta=rag.describe())
    assert path.read_bytes() == before  # deterministic bytes
    loaded = load_answers(path)
    assert [a.answer for a in loaded] == [a.answer for a in answers]
    assert loaded[0].context_ids == answers[0].context_ids
    assert loaded[0].context_texts == answers[0].context_texts


def test_load_answers_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved RAG run"):
        load_answers(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="not a saved RAG run"):
        load_answers(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"format": ')
    with pytest.raises(ValueError, match=r"y\.json is not a saved RAG run: invalid JSON at line 1"):
        load_answers(tmp_path / "y.json")

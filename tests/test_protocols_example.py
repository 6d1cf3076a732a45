"""The README's "your own parts" example: a retriever and a generator of one's own in the pipeline."""

from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.ground_truth import keyword_qrels
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.evaluation.evaluate import evaluate
from ragworkbook.llm.base import Generator
from ragworkbook.pipeline.naive import NaiveRAG
from ragworkbook.protocols import GeneratorLike, PipelineLike, RetrieverLike
from ragworkbook.retrieval.base import Hit


class MyRetriever:
    def __init__(self, chunks):
        self.chunks = chunks

    def search(self, query, k):
        words = set(query.lower().split())
        scored = sorted(self.chunks, key=lambda c: -len(words & set(c.text.lower().split())))
        return [Hit(c, 0.0, rank) for rank, c in enumerate(scored[:k], start=1)]


class MyModel(Generator):
    backend = "my-api"

    def __init__(self, model):
        super().__init__(model)
        self.seen = []

    def _chat_once(self, messages, options, schema):
        self.seen.append((messages[-1]["content"], options["temperature"]))
        return "The answer is in the context."


def test_own_retriever_and_generator_run_through_evaluate():
    chunks = chunk_pages(load_corpus())
    eval_set = load_eval_set()
    retriever, model = MyRetriever(chunks), MyModel("my-model")
    assert isinstance(retriever, RetrieverLike) and isinstance(model, GeneratorLike)
    pipeline = NaiveRAG(retriever, model, k=3)
    assert isinstance(pipeline, PipelineLike)
    report = evaluate(pipeline, eval_set, qrels=keyword_qrels(chunks, eval_set), k=3,
                      metrics=["recall@3", "token_f1"], progress=False)
    assert len(model.seen) == 8 and all(t == 0.0 for _, t in model.seen)
    assert all(r["answer"] == "The answer is in the context." for r in report.rows)
    assert report.meta["backend"] == "my-api" and report.meta["retriever"] == "MyRetriever"
    assert report.aggregates["recall@3"].n == 8
    # the first question's prompt holds the retriever's top chunk
    assert retriever.search(eval_set[0].question, 1)[0].chunk.text.strip()[:40] in model.seen[0][0]

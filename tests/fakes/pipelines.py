"""A table-driven RAG pipeline and a small eval set, for tests of the evaluation loop (no model).

``FakePipeline(answers, rankings)`` answers each question from a fixed table and
"retrieves" fixed chunk ids (the chunk text is ``"text of <id>"``). It meets
``ragworkbook.protocols.PipelineLike``: ``answer(question)`` returns an object with
``.answer`` and ``.contexts`` (hits with ``.chunk.id`` / ``.chunk.text``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ragworkbook.corpus.eval_set import EvalSet, eval_set_from_records

#: Three questions on the bundled paper notes, with keyword and reference answer.
TINY_RECORDS = [
    {"id": "q1", "question": "How many heads?", "keyword": "h = 8", "reference": "The model used 8 heads."},
    {"id": "q2", "question": "Which optimizer?", "keyword": "Adam", "reference": "They used Adam."},
    {"id": "q3", "question": "What dropout?", "keyword": "Pdrop", "reference": "Dropout was 0.1."},
]


def tiny_eval_set(n: int = 3, name: str = "tiny") -> EvalSet:
    """The first ``n`` questions of :data:`TINY_RECORDS` as an eval set."""
    return eval_set_from_records(TINY_RECORDS[:n], name=name)


@dataclass
class FakeChunk:
    id: str
    text: str


@dataclass
class FakeHit:
    chunk: FakeChunk


@dataclass
class FakeAnswer:
    question: str
    answer: str
    contexts: list


class FakePipeline:
    """Answers from a fixed table (question -> answer); retrieves fixed chunk ids (question -> ids)."""

    def __init__(self, answers: dict[str, str], rankings: dict[str, list[str]]):
        self.answers = answers
        self.rankings = rankings

    def answer(self, question: str) -> FakeAnswer:
        hits = [FakeHit(FakeChunk(cid, f"text of {cid}")) for cid in self.rankings[question]]
        return FakeAnswer(question, self.answers[question], hits)

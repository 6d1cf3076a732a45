"""Synthetic questions: generation through the generator interface, each filter, the eval set and qrels."""

from __future__ import annotations

import json

import pytest
from fakes.judges import bag_embed

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.ground_truth import keyword_qrels
from ragworkbook.corpus.synthetic import (
    FILTERS,
    SyntheticQuestion,
    answer_in_chunk,
    answer_span_qrels,
    copy_ratio,
    filter_questions,
    generate_questions,
    load_synthetic,
    refers_to_passage,
    save_synthetic_eval_set,
    synthetic_eval_set,
    synthetic_qrels,
)
from ragworkbook.llm.base import Generator

CHUNKS = [
    Chunk("c1", 1, "Training used the Adam optimizer with beta1 = 0.9 and beta2 = 0.98.", 0),
    Chunk("c2", 1, "The encoder is a stack of six identical layers.", 0),
    Chunk("c3", 2, "Dropout of 0.1 is applied to every sub-layer output.", 0),
    Chunk("c4", 2, "Label smoothing of 0.1 hurts perplexity but helps BLEU.", 0),
    Chunk("c5", 3, "The base model trained for 12 hours on eight P100 GPUs.", 0),
    Chunk("c6", 3, "Residual connections surround every sub-layer of the stack.", 0),
    Chunk("c7", 4, "The optimizer was Adam, with a warm-up of 4000 steps.", 0),
    Chunk("c8", 4, "Garbage in, garbage out.", 0),
]
GENERATED = {
    "c1": {"question": "Which optimizer was used to train the model?", "answer": "the Adam optimizer"},
    "c2": {"question": "The encoder is a stack of six identical layers?", "answer": "six"},
    "c3": {"question": "Dropout rate applied", "answer": "0.1"},
    "c4": {"question": "What does the passage say about label smoothing?", "answer": "hurts perplexity"},
    "c5": {"question": "How long did the base model train?", "answer": "three days"},
    "c6": {"question": "What surrounds every sub-layer of the network?", "answer": "Residual connections"},
    "c7": {"question": "Which optimizer was used to train the model?", "answer": "Adam"},
}
ROUNDTRIP = {"Which optimizer was used to train the model?": {"answerable": 1, "answer": "Adam optimizer"},
             "What surrounds every sub-layer of the network?": {"answerable": 0, "answer": ""}}


class Scripted(Generator):
    """Answers the generation prompt from GENERATED (by chunk text), the round trip from ROUNDTRIP."""

    backend = "fake"

    def __init__(self):
        super().__init__("scripted")
        self.prompts: list[str] = []
        self.turns: list[int] = []

    def _chat_once(self, messages, options, schema):
        # the request itself: the last user turn with a passage (not a demonstration, not a retry note)
        prompt = [m["content"] for m in messages if m["role"] == "user" and "Passage:" in m["content"]][-1]
        self.turns.append(len(messages))
        self.prompts.append(prompt)
        if "answerable" in schema["properties"]:
            question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
            return json.dumps(ROUNDTRIP[question])
        chunk = next(c for c in CHUNKS if c.text in prompt)
        return json.dumps(GENERATED[chunk.id]) if chunk.id in GENERATED else "not json"


def test_helpers():
    assert copy_ratio("The encoder is a stack of six identical layers?", CHUNKS[1].text) == 1.0
    # the longest shared run is "the encoder": 2 of the question's 8 words
    assert copy_ratio("How many layers does the encoder stack have?", CHUNKS[1].text) == pytest.approx(2 / 8)
    assert copy_ratio("", CHUNKS[1].text) == 0.0
    assert answer_in_chunk("ADAM  optimizer.", CHUNKS[0].text) and not answer_in_chunk("SGD", CHUNKS[0].text)
    assert not answer_in_chunk(" . ", CHUNKS[0].text)
    assert refers_to_passage("According to the passage, what is used?")
    assert not refers_to_passage("What did the paper use?")


def test_generation_then_every_filter(tmp_path):
    gen = Scripted()
    cands = generate_questions(CHUNKS, gen, progress=False)
    assert [q.id for q in cands] == [f"s-c{i}" for i in range(1, 9)]
    assert cands[7].error and cands[7].error.startswith("output_parse_error") and len(cands[7].raw) == 3
    result = filter_questions(cands, CHUNKS, gen, embed=bag_embed, progress=False)
    dropped = {q.chunk_id: q.dropped_by for q in result.candidates}
    assert dropped == {"c1": None, "c2": "copies_chunk", "c3": "malformed", "c4": "refers_to_passage",
                       "c5": "answer_not_in_chunk", "c6": "not_answerable", "c7": "duplicate",
                       "c8": "generation_failed"}
    assert result.counts() == {**{f: 0 for f in FILTERS}, "copies_chunk": 1, "malformed": 1,
                               "refers_to_passage": 1, "answer_not_in_chunk": 1, "not_answerable": 1,
                               "duplicate": 1, "generation_failed": 1, "kept": 1}
    c1 = result.candidates[0]
    assert c1.checks["roundtrip_f1"] == 1.0 and c1.checks["answerable"] == 1
    assert result.candidates[6].checks["duplicate_of"] == "s-c1"
    # the round trip is only asked about the survivors of the deterministic filters (c1, c6, c7)
    assert sum("Answer the question using only the passage" in p for p in gen.prompts) == 3
    frame = result.to_frame()
    assert list(frame.index) == [q.id for q in cands] and frame.loc["s-c2", "dropped_by"] == "copies_chunk"
    es = synthetic_eval_set(result.candidates)
    assert [(it.id, it.question, it.reference, it.keyword) for it in es] == [
        ("s-c1", "Which optimizer was used to train the model?", "the Adam optimizer", "the Adam optimizer")]
    assert synthetic_qrels(result.candidates) == {"s-c1": {"c1": 1}}
    path = save_synthetic_eval_set(result.candidates, tmp_path / "synthetic.json", name="s")
    back = load_eval_set(path)
    assert back.name == "s" and [(it.id, it.keyword) for it in back] == [("s-c1", "the Adam optimizer")]
    assert json.loads(path.read_text())["items"][0]["chunk"] == "c1"
    # the answer as keyword labels the set under another chunking too
    assert keyword_qrels(CHUNKS, back) == {"s-c1": {"c1": 1}}


def test_without_a_checker_and_errors():
    gen = Scripted()
    cands = generate_questions(CHUNKS[:1] + CHUNKS[6:7], gen, progress=False)
    result = filter_questions(cands, CHUNKS, None, dup_threshold=0.99, embed=bag_embed, progress=False)
    assert [q.dropped_by for q in result.candidates] == [None, "duplicate"]  # identical text
    assert "answerable" not in result.candidates[0].checks
    with pytest.raises(ValueError, match="min_f1 must be between 0 and 1"):
        filter_questions(cands, CHUNKS, None, min_f1=2)
    with pytest.raises(ValueError, match="not among the chunks given"):
        filter_questions(cands, CHUNKS[1:], None, progress=False)
    with pytest.raises(ValueError, match="must contain the field"):
        generate_questions(CHUNKS, gen, prompt="no field")
    with pytest.raises(ValueError, match="no question was kept"):
        synthetic_eval_set([q for q in result.candidates if not q.kept])


def test_demonstrations_and_several_candidates_per_chunk():
    gen = Scripted()
    demo = (CHUNKS[1].text, {"question": "How many identical layers form the encoder?", "answer": "six"})
    other = (CHUNKS[2].text, {"question": "What dropout rate is applied to sub-layers?", "answer": "0.1"})
    cands = generate_questions(CHUNKS[:3], gen, examples=[demo, other], n_per_chunk=2, progress=False)
    # the two demonstration chunks get no candidates; the first chunk gets two, asked with rotated demos
    assert [q.id for q in cands] == ["s-c1-1", "s-c1-2"]
    assert gen.turns == [6, 6]  # the system prompt, two demonstrations (user + assistant), the request
    assert [q.question for q in cands] == [GENERATED["c1"]["question"]] * 2
    with pytest.raises(ValueError, match="n_per_chunk must be >= 1"):
        generate_questions(CHUNKS, gen, n_per_chunk=0)


def test_answer_span_labels_follow_a_new_chunking(tmp_path):
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.pages import Page

    text = "The optimizer was Adam. " * 3 + "The encoder has six identical layers, and so does the decoder."
    old = chunk_pages([Page(1, text)], size=60, overlap=20, min_chars=1)
    new = chunk_pages([Page(1, text)], size=40, overlap=0, min_chars=1)
    src = next(c for c in old if "six identical" in c.text)
    q = SyntheticQuestion(id="s-1", chunk_id=src.id, page=1, question="How many layers has the encoder?",
                          answer="six  IDENTICAL layers")
    holders = [c.id for c in new if "six identical layers" in c.text]
    assert holders and answer_span_qrels([q], old, new) == {"s-1": {cid: 1 for cid in holders}}
    # for the answer "Adam" the keyword rule marks every chunk that says Adam; the span rule only its own
    q2 = SyntheticQuestion(id="s-2", chunk_id=old[0].id, page=1, question="Which optimizer was used?",
                           answer="Adam")
    assert len(answer_span_qrels([q2], old, old)["s-2"]) < len(keyword_qrels(old, {"s-2": "Adam"})["s-2"])
    path = save_synthetic_eval_set([q, q2], tmp_path / "s.json")
    assert [(b.id, b.chunk_id, b.answer) for b in load_synthetic(path)] == [
        ("s-1", src.id, q.answer), ("s-2", old[0].id, "Adam")]
    lost = SyntheticQuestion(id="s-3", chunk_id="p09-c09", page=9, question="Where?", answer="here")
    with pytest.raises(ValueError, match="not among source_chunks"):
        answer_span_qrels([lost], old, new)

"""Word support: the deterministic faithfulness signal, with its unsupported words and its blind spots."""

from __future__ import annotations

import pytest

from ragworkbook.judging.metrics import word_support as judged_word_support
from ragworkbook.judging.results import JudgeSample
from ragworkbook.metrics.registry import parse_metric
from ragworkbook.metrics.support import stop_words, tokens, word_support

CONTEXT = ("The 80th Venice International Film Festival was held from 30 August to 9 September 2023. "
           "Comandante, directed by Edoardo De Angelis, opened the festival on 30 August.")


def test_an_invented_answer_is_caught_and_its_words_listed():
    ws = word_support("The festival opened with Madres Paralelas by Pedro Almodovar in 2021.", CONTEXT)
    assert ws.unsupported == ["Madres", "Paralelas", "Pedro", "Almodovar", "2021"]
    assert ws.total == 7 and ws.supported == 2 and ws.score == pytest.approx(2 / 7)  # festival, opened
    assert str(ws).startswith("0.286 (2 of 7 words in the context; not found: Madres, Paralelas")


def test_a_copied_answer_is_fully_supported_after_stemming():
    ws = word_support("Comandante opens the festival; it was directed by Edoardo De Angelis.", CONTEXT)
    assert ws.score == 1.0 and ws.unsupported == []  # "opens" matches "opened" (Porter stems)
    assert word_support("Comandante opens the festival.", CONTEXT, stem=False).unsupported == ["opens"]


def test_numbers_are_whole_tokens():
    assert tokens("BLEU 28.4 on EN-DE, 41.0 on EN-FR") == ["bleu", "28.4", "on", "en", "de", "41.0", "on",
                                                           "en", "fr"]
    assert word_support("It scored 28.4.", "It scored 28 and 4.").unsupported == ["28.4"]


def test_the_blind_spots_negation_paraphrase_and_recombination():
    # negation: "no" is a stop word, every other word is the context's
    shooting = "A mass shooting took place at the festival on Sunday."
    assert word_support("There was no mass shooting at the festival.", shooting).score == 1.0
    assert "no" in stop_words() and "not" in stop_words()
    # paraphrase: a faithful answer in other words loses support
    assert word_support("The festival commenced on 30 August.", CONTEXT).unsupported == ["commenced"]
    # recombination: the context's words in a false order are fully supported
    assert word_support("Comandante opened the festival on 9 September.", CONTEXT).score == 1.0


def test_no_word_to_check_is_undefined_never_one():
    assert word_support("", CONTEXT).score is None
    assert word_support("It was what it is.", CONTEXT).score is None  # stop words only
    assert word_support("It was what it is.", CONTEXT, content_only=False).total == 5
    with pytest.raises(TypeError, match="contexts must be a string or a sequence of strings"):
        word_support("x", [1])
    with pytest.raises(TypeError, match="answer must be a string"):
        word_support(None, CONTEXT)


def test_it_is_a_registered_judged_metric_that_needs_no_llm():
    m = parse_metric("word-support")
    # it needs the contexts, no judge
    assert (m.kind, m.family, m.spec.needs) == ("word_support", "judged", frozenset({"contexts"}))
    sample = JudgeSample(question="q", answer="Madres Paralelas opened it.", contexts=[CONTEXT])
    r = judged_word_support(sample)
    assert r.outcome == "scored" and r.detail["unsupported"] == ["Madres", "Paralelas"]
    assert r.items == [{"word": "Madres", "supported": 0}, {"word": "Paralelas", "supported": 0}]
    empty = judged_word_support(JudgeSample(question="q", answer="it is", contexts=[CONTEXT]))
    assert (empty.outcome, empty.reason) == ("undefined", "no_content_words")


def test_evaluate_computes_it_without_a_judge():
    from ragworkbook.evaluation.outputs import evaluate_outputs

    rep = evaluate_outputs([{"id": "a", "question": "When?", "answer": "Comandante opened it on 30 August.",
                             "contexts": [CONTEXT]}], metrics=["word_support"], progress=False)
    assert rep.rows[0]["metrics"]["word_support"] == 1.0
    assert rep.reliability("word_support")["status"] == "unmeasured"

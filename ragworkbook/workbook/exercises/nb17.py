"""Exercises of notebook 17 (human evaluation and a hand-built eval set) and their solutions."""

from __future__ import annotations

import json

from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.handbuilt import HandItem, MergeResult, merge_batch
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.corpus.synthetic import generate_questions, load_examples
from ragworkbook.judging.datasets import load_ragchecker
from ragworkbook.llm import get_generator
from ragworkbook.paths import data_path
from ragworkbook.stats.agreement import accuracy, cohen_kappa, kappa_interpretation
from ragworkbook.stats.sample_size import items_for_width
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, solves


def _sign(x: int) -> str:
    return "B" if x > 0 else "A" if x < 0 else "tie"


def annotator_signs(aspect: str = "overall") -> tuple[list[str], list[str]]:
    """RAGChecker's two annotators' preferences on ``aspect``, collapsed to A / tie / B (all 280 pairs)."""
    pairs = load_ragchecker(predictions=False).pairs
    return [_sign(p.labels[aspect][0]) for p in pairs], [_sign(p.labels[aspect][1]) for p in pairs]


def _kappa_parts() -> tuple[float, float, float, float]:
    a, b = annotator_signs()
    pairs = load_ragchecker(predictions=False).pairs
    s1 = [p.labels["overall"][0] for p in pairs]
    s2 = [p.labels["overall"][1] for p in pairs]
    scale = [-2, -1, 0, 1, 2]
    return (cohen_kappa(a, b, labels=["A", "tie", "B"]), accuracy(a, b),
            cohen_kappa(s1, s2, labels=scale), cohen_kappa(s1, s2, labels=scale, weights="quadratic"))


@exercise("17.1", "Two annotators, corrected for chance",
          "RAGChecker's two annotators each gave all 280 pairs an overall preference from -2 to 2. Collapse "
          "each label to its sign (A, tie, B) and compute Cohen's kappa between the two annotators, to 2 "
          "decimals.",
          reveals=[r"code:annotator_agreement\(", r"code:cohen_kappa\(s1", r"kappa \(A/tie/B\)"])
def _kappa_answer() -> Number:
    kappa, raw, kappa5, weighted5 = _kappa_parts()
    return Number(kappa, 2, "kappa", mistakes=[
        Mistake(raw, "that is the raw agreement; kappa subtracts the agreement chance alone would give from "
                     "each annotator's own label frequencies"),
        Mistake(kappa5, "that is kappa on the five-point scale; the task collapses each label to its sign"),
        Mistake(weighted5, "that is the quadratically weighted kappa on the five-point scale; the task asks "
                           "for the unweighted kappa of the signs")],
        low="p_e comes from the product of the two annotators' label frequencies, not from 1/3",
        high="did you correct for chance agreement, (p_o - p_e) / (1 - p_e)?")


@solves("17.1")
def _solve_kappa() -> Solution:
    kappa, raw, kappa5, weighted5 = _kappa_parts()
    return Solution(kappa,
                    f"The signs agree on {raw:.3f} of the pairs (p_o); from each annotator's own frequencies "
                    "of A, tie and B, chance alone would give p_e = the sum over labels of the product of "
                    f"their shares; kappa = (p_o - p_e) / (1 - p_e) = {kappa:.3f} "
                    f"({kappa_interpretation(kappa)}). On the five-point scale kappa is {kappa5:.3f}, and "
                    f"{weighted5:.3f} with quadratic weights, which count a -2 against a -1 as a small "
                    "disagreement.")


_P, _WIDTH = 0.2, 0.1


@exercise("17.2", "How many answers to label",
          "You expect a hallucination rate near 0.2 and want to know it to within +-0.05: a 95% Wilson "
          "interval at most 0.1 wide. How many answers must you label (a whole number)? Compute it with "
          "items_for_width.",
          reveals=[r"code:items_for_width\(0\.1, 0\.2", r"width 0\.1 \(±0\.05\)"])
def _items_answer() -> Count:
    wilson = items_for_width(_WIDTH, _P)
    wald = items_for_width(_WIDTH, _P, method="wald")
    wald_hint = ("that is the Wald formula n = z^2 p (1 - p) / h^2; the task names the Wilson interval, "
                 "which needs a slightly different n")
    wald_mistake = [Mistake(wald, wald_hint)] if wald != wilson else []
    return Count(wilson, "the number of answers", mistakes=wald_mistake + [
        Mistake(items_for_width(_WIDTH, 0.5), "that is the worst case p = 0.5; the task expects a rate "
                                              "near 0.2, which needs fewer"),
        Mistake(items_for_width(_WIDTH / 2, _P), "that makes the interval 0.05 wide in all (+-0.025); the "
                                                 "task asks for +-0.05"),
        Mistake(items_for_width(2 * _WIDTH, _P), "that makes the interval 0.2 wide (+-0.1); the task asks "
                                                 "for +-0.05")],
        fewer="at that many answers the interval is still wider than 0.1",
        more="fewer answers already give an interval 0.1 wide")


@solves("17.2")
def _solve_items() -> Solution:
    wilson = items_for_width(_WIDTH, _P)
    wald = items_for_width(_WIDTH, _P, method="wald")
    return Solution(wilson, f"items_for_width(0.1, p=0.2) = {wilson}: the smallest n whose Wilson interval "
                            "at 0.2 is at most 0.1 wide (the Wald formula 1.96^2 x 0.2 x 0.8 / 0.05^2 gives "
                            f"{wald}). The worst case p = 0.5 needs {items_for_width(_WIDTH, 0.5)}, and "
                            "halving the width roughly quadruples n "
                            f"({items_for_width(_WIDTH / 2, _P)} at 0.2).")


# --- the hand-built eval set ------------------------------------------------------------------
def first_version() -> list[HandItem]:
    """Week 1 of the demonstration: the eight written questions of the bundled eval set."""
    return [HandItem(it.id, it.question, it.reference, source="rag-cookbook evaluation recipe "
                     "(eval_set.json)", added="2026-11-02", author="rag-cookbook author", keyword=it.keyword,
                     tags=("written",)) for it in load_eval_set()]


def second_batch() -> list[HandItem]:
    """Week 2 of the demonstration: the three question-and-answer demonstrations written by the project's
    authors, and the candidates notebook 08's model proposed for two chunks (replayed), marked unreviewed."""
    doc = json.loads(data_path("synthetic_examples.json").read_text(encoding="utf-8"))
    batch = [HandItem(f"d{i}", ex["question"], ex["answer"], source="synthetic_examples.json "
                      "(demonstrations)", added="2026-11-09", author="the project's authors",
                      evidence=ex["chunk"], tags=("written",))
             for i, ex in enumerate(doc["examples"], start=1)]
    chunks = chunk_pages(load_corpus())
    generator = get_generator(recording=data_path("recordings", "08_eval_set.json"))
    wanted = {"p01-c01", "p01-c04"}
    picked = [c for c in chunks if c.id in wanted]
    candidates = generate_questions(picked, generator, examples=load_examples(chunks), n_per_chunk=3,
                                    options={"num_predict": 128}, progress=False)
    batch += [HandItem(q.id, q.question, q.answer, source="notebook 08's question generator (SmolLM2-135M)",
                       added="2026-11-09", author="SmolLM2-135M, not reviewed", evidence=q.chunk_id,
                       tags=("model-proposed", "to review")) for q in candidates if not q.error]
    return batch


def _merged() -> MergeResult:
    v1 = merge_batch([], first_version(), version="v1", date="2026-11-02")
    return merge_batch(v1.items, second_batch(), version="v2", date="2026-11-09", history=v1.history)


@exercise("17.3", "What a week's merge adds",
          "The week-2 batch printed above is merged into v1 with merge_batch (exact duplicates after "
          "normalisation dropped, questions with a similarity of 0.85 or more to one already in the set held "
          "back). Predict how many of its items are added (a whole number).",
          reveals=[r"code:merge_batch\(v1", r"added \['d1'"])
def _added_answer() -> Count:
    res = _merged()
    n_batch = len(res.added) + len(res.duplicates) + len(res.near_duplicates) + len(res.clashes)
    return Count(len(res.added), "the number of items added", mistakes=[
        Mistake(n_batch, "that is the whole batch: some of its questions repeat others"),
        Mistake(n_batch - 1, "one repeat is still counted: one question is asked twice word for word, and "
                             "another differs from an earlier one by only a few words")],
        more="look for questions that repeat one already in the set or earlier in the batch",
        fewer="a question that shares a topic with another is not a duplicate; only near-identical wording "
              "is held back")


@solves("17.3")
def _solve_added() -> Solution:
    res = _merged()
    dups = ", ".join(f"{new} repeats {old}" for new, old in res.duplicates)
    nears = ", ".join(f"{new} is {sim:.2f} similar to {old}" for new, old, sim in res.near_duplicates)
    return Solution(len(res.added), f"{len(res.added)} added. Dropped as exact duplicates: {dups}. Held back "
                                    f"as near duplicates: {nears}. Everything else is new, even two "
                                    "questions on the same chunk, when their wording differs enough.")

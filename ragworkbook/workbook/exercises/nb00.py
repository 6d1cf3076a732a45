"""Exercises of notebook 00 (set-up and tour) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, exercise, solves

_RANKING = ["doc_3", "doc_7", "doc_1", "doc_5", "doc_2"]
_RELEVANT = {"doc_1", "doc_5", "doc_9"}


def _first_k_at_ceiling() -> int:
    from ragworkbook.metrics.retrieval import recall_at_k

    values = {k: recall_at_k(_RANKING, _RELEVANT, k) for k in range(1, len(_RANKING) + 1)}
    ceiling = max(values.values())
    return min(k for k, v in values.items() if v == ceiling)


@exercise("00.1", "Where recall stops growing",
          "Predict the smallest k at which Recall@k of the first-taste ranking reaches its highest value.")
def _check_ceiling(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"k should be a whole number, got {type(answer).__name__}"
    want = _first_k_at_ceiling()
    if answer == want:
        return True, f"Recall@k first reaches its ceiling at k = {want}"
    when = "late" if answer > want else "early"
    return False, f"k = {answer} is too {when}: compute recall_at_k for k = 1..5"


@solves("00.1")
def _solve_ceiling() -> Solution:
    from ragworkbook.metrics.retrieval import recall_at_k

    k = _first_k_at_ceiling()
    return Solution(k, "The relevant documents doc_1 and doc_5 sit at ranks 3 and 4, so Recall@k is 0, 0, "
                       f"1/3, 2/3, 2/3: it reaches {recall_at_k(_RANKING, _RELEVANT, k):.3f} at k = {k} "
                       "and stays there, because doc_9 was never retrieved.")


def _replay_miss_name() -> str:
    from ragworkbook.llm import ReplayMissError, get_generator
    from ragworkbook.paths import data_path

    gen = get_generator(backend="replay", recording=data_path("recordings", "07_naive_rag.json"))
    try:
        gen.chat("A question nobody recorded: what is the airspeed of an unladen swallow?")
    except ReplayMissError as exc:
        return type(exc).__name__
    raise AssertionError("the replay generator answered a request that was never recorded")


@exercise("00.2", "What replay does with a new question",
          "Predict what a notebook's replay generator does when asked something that was never recorded: "
          "name the exception it raises (or write 'answers' if you think it answers).")
def _check_replay(answer: Any) -> tuple[bool, str]:
    if not isinstance(answer, str):
        return False, f"write the exception's name as a string, got {type(answer).__name__}"
    want = _replay_miss_name()
    if answer.strip() == want:
        return True, f"a strict replay raises {want}: it never invents an answer"
    if answer.strip().lower() in ("answers", "it answers"):
        return False, "a replay has no model to answer with; it can only read back what was recorded"
    return False, f"{answer.strip()!r} is not what it raises; try it: gen.chat('something new')"


@solves("00.2")
def _solve_replay() -> Solution:
    name = _replay_miss_name()
    return Solution(name, f"Replay is strict: a request that is not in the recording raises {name}, whose "
                          "message names the nearest recorded request and what differs. That is what makes a "
                          "replayed notebook trustworthy: it can only print answers a model really gave.")

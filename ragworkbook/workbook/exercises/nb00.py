"""Exercises of notebook 00 (set-up and tour) and their solutions."""

from __future__ import annotations

from ragworkbook.llm import ReplayMissError, get_generator
from ragworkbook.metrics.retrieval import recall_at_k
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Count, Mistake, Solution, exercise, same_text, solves, text_answer

_RANKING = ["doc_3", "doc_7", "doc_1", "doc_5", "doc_2"]
_RELEVANT = {"doc_1", "doc_5", "doc_9"}


def _recalls() -> dict[int, float]:
    return {k: recall_at_k(_RANKING, _RELEVANT, k) for k in range(1, len(_RANKING) + 1)}


def _first_k_at_ceiling() -> int:
    values = _recalls()
    return min(k for k, v in values.items() if v == max(values.values()))


@exercise("00.1", "Where recall stops growing",
          "Predict the smallest k at which Recall@k of the first-taste ranking reaches its highest value.",
          reveals=[r"recall@4", r"ranks? 3 and 4", r"code:recall_at_k\([^)]*,\s*4\)",
                   r"code:range\(1,\s*6\)", r"doc_3, doc_7, doc_1, doc_5\b"])
def _ceiling() -> Count:
    last = len(_RANKING)
    return Count(_first_k_at_ceiling(), "k", mistakes=[
        Mistake(last, "Recall@5 equals the ceiling, but does a smaller k reach it already? Where is "
                      "the last relevant document that was retrieved?"),
        Mistake(len(_RELEVANT), "that is the number of relevant documents; recall counts the ones in "
                                "the top k (is doc_9 in the ranking at all?)")],
        more="a smaller k already reaches the ceiling",
        fewer="a relevant document still comes after that rank")


@solves("00.1")
def _solve_ceiling() -> Solution:
    k = _first_k_at_ceiling()
    steps = ", ".join(f"{v:.3f}" for v in _recalls().values())
    return Solution(k, "The relevant documents doc_1 and doc_5 sit at ranks 3 and 4, so Recall@k for "
                       f"k = 1..5 is {steps}: it reaches its ceiling at k = {k} and stays there, because "
                       "doc_9 was never retrieved.")


def _replay_miss_name() -> str:
    gen = get_generator(backend="replay", recording=data_path("recordings", "07_naive_rag.json"))
    try:
        gen.chat("A question nobody recorded: what is the airspeed of an unladen swallow?")
    except ReplayMissError as exc:
        return type(exc).__name__
    raise AssertionError("the replay generator answered a request that was never recorded")


@exercise("00.2", "What replay does with a new question",
          "Predict what a notebook's replay generator does when asked something that was never recorded: "
          "name the exception it raises (or write 'answers' if you think it answers).")
@text_answer("the exception's name")
def _check_replay(answer: str) -> tuple[bool, str]:
    name = answer.strip().strip("'\"`").rsplit(".", 1)[-1].removesuffix("()")
    if name.lower() in ("answers", "it answers", "answer"):
        return False, "a replay has no model to answer with; it can only read back what was recorded"
    ok, _ = same_text(name, _replay_miss_name(), "the exception")
    if ok:
        return True, f"a strict replay raises {_replay_miss_name()}: it never invents an answer"
    return False, (f"{answer.strip()!r} is not what it raises; try it: "
                   "notebook_generator.chat('something new') inside try / except Exception as exc, "
                   "and print type(exc).__name__")


@solves("00.2")
def _solve_replay() -> Solution:
    name = _replay_miss_name()
    return Solution(name, f"Replay is strict: a request that is not in the recording raises {name}, whose "
                          "message names the recording, the request's hash, what most likely changed and the "
                          "command that records it. That is what makes a "
                          "replayed notebook trustworthy: it can only print answers a model really gave.")

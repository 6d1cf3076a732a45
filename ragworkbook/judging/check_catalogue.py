"""Which labelled data sets ``judge-check`` knows (:data:`DATASETS`, :data:`ALIASES`), what each
measures and with which defaults, and where the embedded judge's recorded run on each is bundled
(:func:`recording_path`). The runner is :mod:`ragworkbook.judging.check_runner`; see
:mod:`ragworkbook.judging.check` for what is measured."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

__all__ = ["DatasetSpec", "Documented", "DATASETS", "ALIASES", "RECORDED_PAIRS", "JUDGES", "WORD_SUPPORT",
           "WORD_SUPPORT_THRESHOLD", "resolve_dataset", "recording_path", "RELIABILITY_MIN_KAPPA",
           "MIN_LABELLED_PAIRS"]


class Documented(TypedDict):
    """A published figure to print beside the measured one."""

    pairwise_accuracy: float
    judge: str
    source: str


#: The lower bound of the kappa interval a judge needs on its judge-check before the targets view
#: rates (or the gate gates) its metric: above 0.60 is "substantial" agreement
#: (:data:`ragworkbook.stats.agreement.KAPPA_BANDS`, Landis & Koch).
RELIABILITY_MIN_KAPPA = 0.6
#: The fewest labelled pairs (scored on both items) a judge-check needs before its judge can be trusted:
#: below it a kappa of 1.0 is a matter of luck (2 pairs agree perfectly by chance one time in 16).
MIN_LABELLED_PAIRS = 30

#: ``judge_check``'s ``judge="word-support"``: the deterministic word support, not an LLM.
WORD_SUPPORT = "word-support"
#: What ``--judge`` accepts: ``llm`` (the generator given as a judge) or the deterministic word support.
JUDGES = ("llm", WORD_SUPPORT)

_RAGAS = "RAGAS paper, Es et al. 2023, arXiv:2309.15217"


@dataclass(frozen=True)
class DatasetSpec:
    """One data set ``judge-check`` knows: what is judged, by which metric, with which defaults."""

    name: str
    source: str  # "wikieval" or "ragchecker"
    metric: str  # the package metric checked ("pairwise" for the pairwise judge)
    default_limit: int
    consistency_items: int
    wikieval_set: str | None = None
    threshold: float | None = None
    documented: Documented | None = None
    description: str = ""


DATASETS: dict[str, DatasetSpec] = {
    "wikieval-faithfulness": DatasetSpec(
        "wikieval-faithfulness", "wikieval", "faithfulness", 8, 3, "faithfulness", 1.0,
        {"pairwise_accuracy": 0.95, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval faithfulness pairs: a grounded and an ungrounded answer per question, with the context"),
    "wikieval-answer-relevance": DatasetSpec(
        "wikieval-answer-relevance", "wikieval", "answer_relevancy", 20, 5, "answer_relevance", 0.5,
        {"pairwise_accuracy": 0.78, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval answer-relevance pairs: a complete and an incomplete answer per question"),
    "wikieval-context-relevance": DatasetSpec(
        "wikieval-context-relevance", "wikieval", "context_relevance", 20, 5, "context_relevance", 0.5,
        {"pairwise_accuracy": 0.70, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval context-relevance pairs: the original context and a longer one with added text"),
    "ragchecker": DatasetSpec(
        "ragchecker", "ragchecker", "pairwise", 10, 3, None, None, None,
        "RAGChecker meta-evaluation: two systems' answers per query with the reference answer, "
        "two annotators' preferences"),
}

#: Word support's default threshold: an answer is judged faithful when at least 90% of its content
#: words occur in the context (chosen before measuring; ``threshold=`` changes it).
WORD_SUPPORT_THRESHOLD = 0.9

#: How many pairs the bundled recordings of the embedded judge hold (``recording_path``): a replay can ask
#: for at most these (``limit=RECORDED_PAIRS[name]``); the self-consistency repeats are recorded too.
RECORDED_PAIRS = {"wikieval-faithfulness": 30, "wikieval-answer-relevance": 50,
                  "wikieval-context-relevance": 30, "ragchecker": 24}

ALIASES = {
    "ff": "wikieval-faithfulness", "faithfulness": "wikieval-faithfulness",
    "ar": "wikieval-answer-relevance", "answer-relevance": "wikieval-answer-relevance",
    "answer_relevancy": "wikieval-answer-relevance",
    "cr": "wikieval-context-relevance", "context-relevance": "wikieval-context-relevance",
    "context_relevance": "wikieval-context-relevance",
    "ragchecker-pairs": "ragchecker", "pairwise": "ragchecker",
}


def resolve_dataset(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` for a name or alias; ValueError listing the names otherwise."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in DATASETS:
        raise ValueError(f"unknown judge-check dataset {name!r}; choose one of: {', '.join(DATASETS)} "
                         f"(aliases: {', '.join(sorted(ALIASES))})")
    return DATASETS[key]


def recording_path(name: str) -> Path:
    """The bundled recording of the embedded judge's run on a data set
    (``ragworkbook/data/recordings/judge_check_<name>.json``)."""
    from ragworkbook.paths import data_path

    spec = resolve_dataset(name)
    return data_path("recordings", f"judge_check_{spec.name.replace('-', '_')}.json")

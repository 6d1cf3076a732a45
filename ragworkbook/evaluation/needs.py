"""What each metric family needs, said in words, from the registry's declarations.

The registry (:mod:`ragworkbook.metrics.registry`) declares what every metric needs (its
``needs``: relevance judgements, a reference answer, an LLM judge, the retrieved contexts).
:func:`family_needs` reads those declarations per family, and :func:`nothing_to_score` turns
them into the message ``eval --answers`` prints when no metric can be computed for a file (no
reference, no relevance, no ``--judge``), instead of an empty table: which family needs what,
and how an answers file or the command line gives it. Only the wording of each need lives
here (:data:`HOW`); which metric needs what is the registry's.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragworkbook.metrics.registry import FAMILIES, NEEDS, specs

__all__ = ["NAMES", "HOW", "family_needs", "nothing_to_score"]

#: Each need of the registry (:data:`ragworkbook.metrics.registry.NEEDS`) in a few words.
NAMES: dict[str, str] = {"relevance": "relevance judgements", "reference": "a reference answer",
                         "judge": "an LLM judge", "contexts": "the retrieved contexts"}

#: How ``eval --answers`` gets each need of the registry (:data:`ragworkbook.metrics.registry.NEEDS`).
HOW: dict[str, str] = {
    "relevance": "--qrels FILE, or per record relevant_ids / reference_context_ids or a keyword",
    "reference": "per record reference or ground_truth",
    "judge": "--judge, with --backend and --model",
    "contexts": "per record contexts or retrieved_contexts; for relevance by id, retrieved_context_ids do",
}


def family_needs(family: str) -> tuple[list[str], list[str]]:
    """``(needed by every metric of the family, needed by some of them only)``, in :data:`NEEDS` order."""
    sets = [set(s.needs) for s in specs(family)]
    every = set.intersection(*sets) if sets else set()
    some = set.union(*sets) - every if sets else set()
    return [n for n in NEEDS if n in every], [n for n in NEEDS if n in some]


def nothing_to_score(source: str, given: Iterable[str] = ()) -> str:
    """The message for an answers file none of whose metrics can be computed: per family, what its
    metrics need (``given``: the needs that are met, marked as such)."""
    have = set(given)
    lines = [f"nothing to score in {source}: no metric can be computed from what it gives. Each family of "
             "metrics needs:"]
    for family in FAMILIES:
        every, some = family_needs(family)
        def said(n: str) -> str:
            return f"{NAMES[n]} ({HOW[n]})" + (" - given" if n in have else "")

        if every:
            need = "; and ".join(said(n) for n in every)
            extra = f"; some also need {' and '.join(NAMES[n] for n in some)}" if some else ""
        else:  # no need shared by the whole family (word_support needs no judge): name each
            need, extra = "depending on the metric, " + "; ".join(said(n) for n in some), ""
        names = ", ".join(s.name for s in specs(family) if s.default)
        lines.append(f"  {family} ({names}, ...): {need}{extra}")
    lines.append("Give one of them (`ragworkbook schema answers` lists the fields of a record).")
    return "\n".join(lines)

"""ragworkbook.evaluation.needs: what each metric family needs, read from the registry."""

from __future__ import annotations

from ragworkbook.evaluation.needs import HOW, NAMES, family_needs, nothing_to_score
from ragworkbook.metrics.registry import FAMILIES, NEEDS, specs


def test_every_need_of_the_registry_is_worded():
    assert set(HOW) == set(NEEDS) == set(NAMES)


def test_family_needs_come_from_the_specs():
    for family in FAMILIES:
        every, some = family_needs(family)
        for s in specs(family):
            assert set(every) <= set(s.needs) <= set(every) | set(some), s.name
    assert family_needs("retrieval") == (["relevance", "contexts"], [])
    # the text-based context metrics (non_llm_context_*) compare contexts, not an answer with a reference
    assert family_needs("generation") == ([], ["reference", "contexts"])
    # word_support (judged like a judge, computed without one) needs only the contexts
    assert family_needs("judged") == ([], ["reference", "judge", "contexts"])


def test_the_message_names_each_family_its_defaults_and_how_to_give_what_it_needs():
    msg = nothing_to_score("x.jsonl", given={"contexts"})
    lines = msg.splitlines()
    assert lines[0].startswith("nothing to score in x.jsonl: no metric can be computed")
    assert [line.split(" (")[0].strip() for line in lines[1:4]] == list(FAMILIES)
    assert "the retrieved contexts (" in lines[1] and " - given" in lines[1]
    assert "token_f1" in lines[2] and HOW["reference"] in lines[2]
    assert "--judge" in lines[3]
    assert "depending on the metric, a reference answer" in lines[3]
    assert "the retrieved contexts (" in lines[3]

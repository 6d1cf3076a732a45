"""A rule-based fake judge for the context-side metrics (completeness / utilization, NLI, QuestEval).

No model: every verdict follows a word-overlap rule, so a test can work out the expected score by
hand. Content words are lowercase runs of letters and digits longer than three characters.
"""

from __future__ import annotations

import json
import re

from ragworkbook.llm.base import Generator

WORD = re.compile(r"[a-z0-9]+")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 3}


def _field(prompt: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", prompt, flags=re.M)
    return m.group(1) if m else ""


def _after(prompt: str, head: str) -> str:
    return prompt.split(f"{head}\n", 1)[1].split("\n\n", 1)[0]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


class ContextRuleJudge(Generator):
    """Answers the prompts of judging.coverage, judging.nli, judging.questeval and the claim extraction.

    - claims: the answer's sentences;
    - coverage: a sentence is *relevant* when it shares a content word with the question, *used*
      when at least half of its content words occur in the answer;
    - NLI: *contradiction* when the claim has a number the premise lacks while the premise has
      numbers, else *entailment* when every content word of the claim is in the premise, else *neutral*;
    - question generation: one question per answer sentence holding a number (the number replaced
      by "which year"), the number as its answer;
    - question answering: the context sentence sharing most content words with the question; its
      first number when it shares at least two words and has a number, else unanswerable.
    """

    backend = "fake"

    def __init__(self, model: str = "context-rule-judge"):
        super().__init__(model)
        self.calls = 0

    def _chat_once(self, messages, options, schema):
        self.calls += 1
        prompt = next(m["content"] for m in messages if m["role"] == "user")  # the request, not a retry note
        props = schema["properties"]
        if "statements" in props:
            return json.dumps({"statements": sentences(_field(prompt, "Answer"))})
        if "sentences" in props:
            q, a = words(_field(prompt, "Question")), words(_field(prompt, "Answer"))
            units = [re.sub(r"^\d+\. ", "", u) for u in _after(prompt, "Sentences:").splitlines()]
            out = []
            for u in units:
                uw = words(u)
                used = bool(uw) and len(uw & a) / len(uw) >= 0.5
                out.append({"relevant": int(bool(uw & q)), "used": int(used)})
            return json.dumps({"sentences": out})
        if "label" in props:
            premise = prompt.split("Premise (retrieved context):\n", 1)[1].split("\n\nHypothesis:", 1)[0]
            claim = _field(prompt, "Hypothesis")
            pn, cn = set(NUMBER.findall(premise)), set(NUMBER.findall(claim))
            if cn - pn and pn:
                label = "contradiction"
            elif words(claim) <= words(premise):
                label = "entailment"
            else:
                label = "neutral"
            return json.dumps({"reason": "rule", "label": label})
        if "questions" in props:
            pairs = []
            for s in sentences(_field(prompt, "Answer")):
                m = NUMBER.search(s)
                if m:
                    question = (s[:m.start()] + "which year" + s[m.end():]).rstrip(". ") + "?"
                    pairs.append({"question": question, "answer": m.group(0)})
            return json.dumps({"questions": pairs or [{"question": "What?", "answer": "nothing"}]})
        if "answerable" in props:
            context = prompt.split("Context:\n", 1)[1].split("\n\nQuestion:", 1)[0]
            context = re.sub(r"^\[\d+\] ", "", context, flags=re.M)
            qw = words(_field(prompt, "Question"))
            best = max(sentences(context), key=lambda s: len(words(s) & qw), default="")
            m = NUMBER.search(best)
            if len(words(best) & qw) >= 2 and m:
                return json.dumps({"answerable": 1, "answer": m.group(0)})
            return json.dumps({"answerable": 0, "answer": ""})
        raise AssertionError(f"unexpected schema {sorted(props)}")

"""Small deterministic fake generators for the judge tests (no model, no network)."""

from __future__ import annotations

import json
import re
import threading

from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm.base import Generator

WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 3}


def _field(prompt: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", prompt, flags=re.M)
    return m.group(1) if m else ""


def _block(prompt: str, name: str, until: str) -> str:
    start = prompt.index(f"{name}:\n") + len(name) + 2
    return prompt[start:prompt.index(f"\n\n{until}", start)]


class RuleJudge(Generator):
    """A rule-based 'judge': statements = answer sentences; a statement or context is
    supported/useful when its content words overlap the other text enough."""

    backend = "fake"

    def __init__(self, model: str = "rule-judge"):
        super().__init__(model)
        self.calls = 0
        self.lock = threading.Lock()

    def _chat_once(self, messages, options, schema):
        with self.lock:
            self.calls += 1
        prompt = next(m["content"] for m in messages if m["role"] == "user")  # not retry feedback
        props = schema["properties"]
        if "statements" in props:
            answer = _field(prompt, "Answer")
            if "don't know" in answer.lower():
                return json.dumps({"statements": []})
            sents = [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]
            return json.dumps({"statements": sents})
        if "verdicts" in props:
            context = _block(prompt, "Context", "Statements")
            stmts = [re.sub(r"^\d+\. ", "", s) for s in prompt.split("Statements:\n", 1)[1]
                     .split("\n\n", 1)[0].splitlines()]
            cw = words(context)
            out = []
            for s in stmts:
                sw = words(s)
                ok = bool(sw) and len(sw & cw) / len(sw) >= 0.6
                out.append({"reason": "word overlap", "verdict": int(ok)})
            return json.dumps({"verdicts": out})
        if "questions" in props:
            answer = _field(prompt, "Answer")
            n = props["questions"]["minItems"]
            nc = int("don't know" in answer.lower() or "not sure" in answer.lower())
            return json.dumps({"questions": [f"What about {answer}"] * n, "noncommittal": nc})
        # single verdict: context vs answer/reference (precision) or vs question (relevance)
        context = _field(prompt, "Context")
        target = _field(prompt, "Reference answer") or _field(prompt, "Answer") or _field(prompt, "Question")
        ok = len(words(context) & words(target)) >= 2
        return json.dumps({"reason": "word overlap", "verdict": int(ok)})


class GarbageJudge(Generator):
    """Always answers with text that is not JSON."""

    backend = "fake"

    def __init__(self):
        super().__init__("garbage")
        self.calls = 0

    def _chat_once(self, messages, options, schema):
        self.calls += 1
        return "Sure! Here is my verdict: yes"


class EmptyClaimsJudge(RuleJudge):
    """Extracts no statement from any answer."""

    def _chat_once(self, messages, options, schema):
        if "statements" in schema["properties"]:
            with self.lock:
                self.calls += 1
            return json.dumps({"statements": []})
        return super()._chat_once(messages, options, schema)


class BlockingJudge(Generator):
    """Never answers until ``release`` is set (to exercise the timeout)."""

    backend = "fake"

    def __init__(self):
        super().__init__("blocking")
        self.release = threading.Event()

    def _chat_once(self, messages, options, schema):
        self.release.wait(0.5)
        return json.dumps({"reason": "late", "verdict": 1})


def bag_embed(texts):
    """A deterministic bag-of-words embedding (hashing into 64 dims) for fast tests."""
    import zlib

    import numpy as np

    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in WORD.findall(t.lower()):
            out[i, zlib.crc32(w.encode()) % 64] += 1.0
        if not out[i].any():
            out[i, 0] = 1.0
    return out


# The carbon-pricing sample the judge tests share (chunk texts of our own).
CHUNKS = [
    "The EU border adjustment mechanism taxes imports at the border.",
    "Canada federal carbon pricing since 2019 charges fossil fuels.",
    "Canada introduced carbon contracts for difference in 2023 guaranteeing carbon prices "
    "for industrial emitters.",
    "Pricing mechanisms include carbon taxes, cap-and-trade and contracts for difference.",
    "Canadian provinces run clean fuel standards alongside federal carbon pricing in Canada.",
]
CARBON = JudgeSample(
    question="Which carbon pricing mechanism did Canada implement in 2023?",
    answer="Canada introduced carbon contracts for difference in 2023. "
    "The contracts guarantee carbon prices for industrial emitters.",
    contexts=CHUNKS,
    reference="Canada introduced carbon contracts for difference in 2023. "
    "They stabilise revenue for heavy industry.",
    sample_id="carbon",
)

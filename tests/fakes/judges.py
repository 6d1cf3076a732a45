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


# A data field of a prompt: "Label: value" on one line, or "Label:" alone on its line and the
# value in the lines below, up to a blank line. Only the labels of the data are read, never the
# instructions around them, so rewording an instruction cannot change what a fake judge answers.
_FIELD = re.compile(r"^([A-Z][A-Za-z ]{0,40}):(?: (.*)|\n((?:.+\n?)+))$", flags=re.M)


def first_prompt(messages) -> str:
    """The request's prompt: the first user message (later ones are retry feedback)."""
    return next(m["content"] for m in messages if m["role"] == "user")


def prompt_fields(prompt: str) -> dict[str, str]:
    """The data fields of a judge prompt, label (lower case) -> value."""
    return {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)).strip()
            for m in _FIELD.finditer(prompt)}


def numbered(block: str) -> list[str]:
    """The items of a numbered list ("1. first\n2. second")."""
    return [re.sub(r"^\d+\.\s*", "", line).strip() for line in block.splitlines() if line.strip()]


def schema_kind(schema: dict | None) -> str:
    """What a judge request asks for, from its JSON schema alone: its required keys."""
    required = tuple(sorted((schema or {}).get("required", ())))
    kinds = {("statements",): "statements", ("verdicts",): "verdicts",
             ("noncommittal", "questions"): "questions", ("reason", "verdict"): "verdict"}
    if required not in kinds:
        raise AssertionError(f"a fake judge got a schema it does not know: {schema}")
    return kinds[required]


def noncommittal(answer: str) -> bool:
    return "don't know" in answer.lower() or "not sure" in answer.lower()


class RuleJudge(Generator):
    """A rule-based 'judge': statements = answer sentences; a statement or context is
    supported/useful when its content words overlap the other text enough.

    It tells the requests apart by their JSON schema and reads only the data fields of the
    prompt (question, answer, reference answer, context, statements).
    """

    backend = "fake"

    def __init__(self, model: str = "rule-judge"):
        super().__init__(model)
        self.calls = 0
        self.prompts: list[str] = []  # every prompt it was sent
        self.lock = threading.Lock()

    def _chat_once(self, messages, options, schema):
        with self.lock:
            self.calls += 1
            self.prompts.append(first_prompt(messages))
        fields = prompt_fields(first_prompt(messages))
        kind = schema_kind(schema)
        if kind == "statements":
            answer = fields["answer"]
            if noncommittal(answer):
                return json.dumps({"statements": []})
            sents = [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]
            return json.dumps({"statements": sents})
        if kind == "verdicts":
            cw = words(fields["context"])
            out = []
            for s in numbered(fields["statements"]):
                sw = words(s)
                ok = bool(sw) and len(sw & cw) / len(sw) >= 0.6
                out.append({"reason": "word overlap", "verdict": int(ok)})
            return json.dumps({"verdicts": out})
        if kind == "questions":
            answer = fields["answer"]
            n = schema["properties"]["questions"]["minItems"]
            return json.dumps({"questions": [f"What about {answer}"] * n,
                               "noncommittal": int(noncommittal(answer))})
        # one verdict: a context against the reference answer or the answer (context precision),
        # or against the question (context relevance)
        target = fields.get("reference answer") or fields.get("answer") or fields["question"]
        ok = len(words(fields["context"]) & words(target)) >= 2
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
        if schema_kind(schema) == "statements":
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

"""A stand-in ragas LLM that answers with judgments the package's judge already made, and
ragas embeddings that are the package's MiniLM.

Import this module only after ``conftest.reference("ragas")`` succeeded (it imports ragas).

:class:`JudgmentsLLM` holds a table: the exact text of a prompt ragas may send -> the
answer(s) to give. The table is filled by rendering ragas's own prompt objects
(``metric.<name>_prompt.to_string(input)``) with the inputs the metric will build, so a
prompt is recognised by the prompt object (its output model) and its data, never by the
wording of its instruction; a reworded ragas prompt is rendered the same way. A prompt not
in the table raises :class:`NotJudged`: ragas asked the judge something the package never
asked its judge.
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before ragas is imported: no usage telemetry

from collections.abc import Callable, Sequence  # noqa: E402

import numpy as np  # noqa: E402
from langchain_core.exceptions import OutputParserException  # noqa: E402
from langchain_core.output_parsers import PydanticOutputParser  # noqa: E402
from langchain_core.outputs import Generation, LLMResult  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from ragas.embeddings.base import BaseRagasEmbeddings  # noqa: E402
from ragas.llms.base import BaseRagasLLM  # noqa: E402
from ragas.prompt.pydantic_prompt import fix_output_format_prompt  # noqa: E402
from ragas.prompt.utils import extract_json  # noqa: E402
from ragas.run_config import RunConfig  # noqa: E402


class NotJudged(Exception):
    """ragas sent a prompt the stand-in has no judgment for (the package never asked it)."""


class JudgeFailed(Exception):
    """The package's judge call failed without any output (a timeout, a backend error)."""


def reads(model: type[BaseModel], text: str, *, first_try: bool = True) -> BaseModel | None:
    """What ragas reads from a raw model output for ``model``, as its output parser does:
    langchain's Pydantic parser (which also closes a truncated JSON text) on the first JSON
    structure of the text (on a first try; a fixed output is read as it is). None when it
    cannot read it."""
    try:
        return PydanticOutputParser(pydantic_object=model).parse(extract_json(text) if first_try else text)
    except OutputParserException:
        return None


class JudgmentsLLM(BaseRagasLLM):
    """A ragas LLM answering from a table of prompts (see the module docstring).

    ``asked`` lists every prompt ragas sent, in order. ragas's retry of a failing call is off
    (``RunConfig(max_retries=1)``): an answer is given once.
    """

    def __init__(self) -> None:
        super().__init__(run_config=RunConfig(max_retries=1))
        self.table: dict[str, list[str] | BaseException] = {}
        self.asked: list[str] = []
        self.fix_prompts: list[str] = []  # ragas's "fix the output format" prompts in the table

    def answer(self, prompt, data: BaseModel, outputs: Sequence[BaseModel | str]) -> str:
        """Answer ``prompt`` rendered with ``data`` by ``outputs`` (one per generation ragas asks
        for: a model instance, written as ragas's JSON, or a raw text). Returns the prompt text."""
        text = prompt.to_string(data)
        self.table[text] = [o if isinstance(o, str) else o.model_dump_json() for o in outputs]
        return text

    def answer_raw(self, prompt, data: BaseModel, raw_outputs: Sequence[str], error: str | None,
                   n: int = 1) -> BaseModel | None:
        """Answer with the raw outputs of a judge call the package could not use: the first one
        for the prompt, the next (the judge's retry) for ragas's "fix the output format" prompt.
        Returns what ragas reads from them (None: ragas cannot read either, and raises). Without
        any output (a timeout, a backend error) the prompt raises :class:`JudgeFailed`."""
        if not raw_outputs:
            self.table[prompt.to_string(data)] = JudgeFailed(error or "the judge call failed")
            return None
        first = raw_outputs[0]
        text = self.answer(prompt, data, [first] * n)
        got = reads(prompt.output_model, first)
        if got is not None:
            return got
        retry = raw_outputs[1] if len(raw_outputs) > 1 else first
        fix = fix_output_format_prompt
        self.fix_prompts.append(self.answer(fix, fix.input_model(output_string=first, prompt_value=text),
                                            [fix.output_model(text=retry)]))
        return reads(prompt.output_model, retry, first_try=False)

    def generate_text(self, prompt, n: int = 1, temperature: float | None = 0.01, stop=None,
                      callbacks=None) -> LLMResult:
        text = prompt.to_string()
        self.asked.append(text)
        got = self.table.get(text)
        if got is None:
            raise NotJudged("the package's judge was never asked this prompt: ..." + text[-400:])
        if isinstance(got, BaseException):
            raise got
        if len(got) != n:
            raise AssertionError(f"ragas asked for {n} generations, the stand-in holds {len(got)}")
        return LLMResult(generations=[[Generation(text=o) for o in got]])

    async def agenerate_text(self, prompt, n: int = 1, temperature: float | None = 0.01, stop=None,
                             callbacks=None) -> LLMResult:
        return self.generate_text(prompt, n, temperature, stop, callbacks)

    def is_finished(self, response: LLMResult) -> bool:
        return True


class PackageEmbeddings(BaseRagasEmbeddings):
    """ragas embeddings computed by a function of the package's kind (texts -> array (n, d))."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        super().__init__()
        self.embed = embed
        self.run_config = RunConfig()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed(list(texts)).tolist()

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

"""The public data sets the workbook reads, each declared once: where it comes from, under which
licence, and the exact bytes of every file (sha256 and size), at a pinned upstream commit.

Nothing here is shipped with the package: :mod:`ragworkbook.datasets.cache` downloads a file on
first use from its ``url`` (or from ``$RAGWORKBOOK_DATASETS_MIRROR``, laid out like the
project's ``../shared/data``: ``<mirror>/<relpath>``), checks it against ``sha256`` and ``size``
and keeps it in ``$RAGWORKBOOK_CACHE/datasets/<relpath>``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DataFile", "Dataset", "CATALOGUE", "get"]


@dataclass(frozen=True)
class DataFile:
    """One file of a data set: its name inside the data set, where upstream serves it, where it lives
    in the mirror and cache layout (``relpath``), and its exact bytes (``sha256``, ``size``)."""

    name: str
    url: str
    relpath: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Dataset:
    """A public data set: ``name`` (what ``ragworkbook datasets fetch NAME`` takes), a one-line
    ``title``, ``licence``, ``citation``, ``homepage``, the pinned ``commit`` its files are read at,
    its ``files`` and ``parser`` (``"module:function"``, the loader that reads it)."""

    name: str
    title: str
    licence: str
    citation: str
    homepage: str
    commit: str
    files: tuple[DataFile, ...]
    parser: str

    def file(self, name: str) -> DataFile:
        """The file called ``name`` (KeyError naming the files it has otherwise)."""
        for f in self.files:
            if f.name == name:
                return f
        raise KeyError(f"data set {self.name!r} has no file {name!r}; it has: "
                       + ", ".join(f.name for f in self.files))

    @property
    def size(self) -> int:
        """Bytes of all its files."""
        return sum(f.size for f in self.files)


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_TREC = "f4253652c8efd0d86ddffd0d163cc0a0f813111a"
_TREC_FILES = (
    ("LICENSE.md", "LICENSE.md", "6b0d9eebe4ed7fba95623e5314342c4399f6f896fba2e6806e45cb2b97b9a268", 2193),
    ("out.test", "test/out.test", "eec0abb32bfb99fa78d239a3440b2c6cb01b06dead7e2338fd75b5c280d9eba0", 1009),
    ("out.test.a", "test/out.test.a",
     "8fd8f08c0b5c9064dc955263dc98ceed34b6d7421ebef363be0043256ccb1d68", 3355),
    ("out.test.aq", "test/out.test.aq", "6e884d1ab060f5cede2e85490fb1f62e6ca664b8da99e7a8dfffeedefe9433eb",
     13133),
    ("out.test.aqZ", "test/out.test.aqZ", "3282cbce1e5c8e11619954dac0144a0541b219de528156c72b7b2acba168ac75",
     13830),
    ("out.test.aqc", "test/out.test.aqc", "c4872c36186a26756867131a5dfe2c3e2aff001e1e9288a8584c5f4380b6ffc7",
     13109),
    ("out.test.aqcM", "test/out.test.aqcM",
     "7e858844afe8201d75a2720cfed75227df13f63ced9a400833547d89a144a96c",
     13106),
    ("out.test.aql", "test/out.test.aql", "8aaf42d1f0261a8e3f5fa0de2be7a8c46df719617565a3667482eaced620ff91",
     13157),
    ("out.test.meas_params", "test/out.test.meas_params",
     "4caf844f1c8b595299f8035d0aa96aa47c73681228690b7529d4a9224775a243", 3004),
    ("qrels.rel_level", "test/qrels.rel_level",
     "4430ec2026fcb964851e03bd73df21daf27e7ef4783d20ad63634182bc9df843",
     75346),
    ("qrels.test", "test/qrels.test",
     "6c44a070a10bfb14b123cadc597227fc63c1acec109bc6d1e5a6bc4763906698", 75042),
    ("results.test", "test/results.test", "69019319f6cb9ce861b4ad08d90898170d3d2b27da580fb3cba59e557ff2fd20",
     65490),
    ("results.trunc", "test/results.trunc",
     "4a85d6b7b21b69b59728fa0aa7452199640f70d96529b86d0cca8f9c9292e438",
     25274),
)

TREC_EVAL = Dataset(
    name="trec_eval",
    title="trec_eval's conformance suite: test qrels and runs, and trec_eval 10's exact output for each "
          "command of its quicktest",
    licence="NIST software notice (LICENSE.md): use, copy and distribute with the notice kept intact",
    citation="usnistgov/trec_eval, test/ (trec_eval 10.0), National Institute of Standards and Technology",
    homepage="https://github.com/usnistgov/trec_eval",
    commit=_TREC,
    files=tuple(DataFile(n, _raw("usnistgov/trec_eval", _TREC, p), f"trec_eval_tests/{n}", h, s)
                for n, p, h, s in _TREC_FILES),
    parser="ragworkbook.corpus.trec:read_qrels",
)

_RC = "6091f08c00e676e87a970f2aeb4a23a484746348"
RAGCHECKER = Dataset(
    name="ragchecker",
    title="RAGChecker's human meta-evaluation (280 answer pairs, two annotators) with RAGChecker's own "
          "scores, and its checked example",
    licence="Apache-2.0 (LICENSE, NOTICE: Copyright Amazon.com, Inc. or its affiliates)",
    citation="Ru et al., RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented "
             "Generation, NeurIPS 2024 Datasets and Benchmarks, arXiv:2408.08067",
    homepage="https://github.com/amazon-science/RAGChecker",
    commit=_RC,
    files=tuple(DataFile(n, _raw("amazon-science/RAGChecker", _RC, p), f"ragchecker_meta_eval/{n}", h, s)
                for n, p, h, s in (
        ("human_labeled_data.json", "data/meta_evaluation/human_labeled_data.json",
         "42651629afc007396a709c89e89ada3b587e0bcc26246c951225866715e265ce", 2347698),
        ("baseline_ragchecker.json", "data/meta_evaluation/baseline_ragchecker.json",
         "1fce14cc54bf276c3ed2bb48976ba42e85159651b64c181bc19795152db6e3d6", 1238661),
        ("example_checking_outputs.json", "examples/checking_outputs.json",
         "225906c9883d8b79613935256f04579758559bacf26edf50b5b8121c36ec5bc2", 16642),
        ("LICENSE", "LICENSE", "09e8a9bcec8067104652c168685ab0931e7868f9c8284b66f5ae6edae5f1130b", 10142),
        ("NOTICE", "NOTICE", "d4290ed64c2edd0fce1d84e3f9dfb2881240fe534def76b8cd29ed6af683e287", 67),
    )),
    parser="ragworkbook.judging.datasets:load_ragchecker",
)

_WE = "065440b21447fd79c8dffb56fc7b328605ba9e1e"
_WE_REPO = "noah-13/llm-based-reference-free-rag-eval-metrics-meta-eval"
WIKIEVAL = Dataset(
    name="wikieval",
    title="WikiEval (the RAGAS paper's meta-evaluation set) as good/bad pairs: faithfulness, answer "
          "relevance, context relevance",
    licence="MIT (LICENSE: Copyright (c) 2025 Xinyuan Cheng); the passages are Wikipedia's (CC BY-SA 4.0); "
            "explodinggradients/WikiEval states no licence",
    citation="Es et al., RAGAS: Automated Evaluation of Retrieval Augmented Generation, EACL 2024 demos, "
             "arXiv:2309.15217; pairs from noah-13/llm-based-reference-free-rag-eval-metrics-meta-eval",
    homepage="https://huggingface.co/datasets/explodinggradients/WikiEval",
    commit=_WE,
    files=tuple(DataFile(n, _raw(_WE_REPO, _WE, p), f"wikieval/{n}", h, s) for n, p, h, s in (
        ("ff.csv", "experiment/input/ff.csv",
         "14859928621525caf8fa0849c70c3924a2d714d6f9bff65c87211382b0b53881",
         486614),
        ("ar.csv", "experiment/input/ar.csv",
         "f1be98718ac342f362da16fd2bb0f60ab826b355d4877fb9e998f8b900f023cc",
         53302),
        ("cr.csv", "experiment/input/cr.csv",
         "98cff25b61b607ebb782854faa21b9a99a76016e9c6e4d74d8798b1543f6aee5",
         473786),
        ("LICENSE", "License", "149c82de161bf1b340e4df382ea45782fe295d00c58354d3fd8932c184b5ba98", 1168),
    )),
    parser="ragworkbook.judging.datasets:load_wikieval",
)

_FJ = "ca35eb45d0d32cffd5ddc2d6513c4e8342cb9f5d"
RAGTRUTH = Dataset(
    name="ragtruth",
    title="RAGTruth test-split material: 2,617 responses of six LLMs to 439 QA, Summary and Data2txt "
          "sources, with human hallucination spans",
    licence="MIT (RAGTruth, Copyright (c) 2023 Particle Media); redistributed by vectara/FaithJudge",
    citation="Niu et al., RAGTruth: A Hallucination Corpus for Developing Trustworthy Retrieval-Augmented "
             "Language Models, ACL 2024, arXiv:2401.00396",
    homepage="https://github.com/ParticleMedia/RAGTruth",
    commit=_FJ,
    files=tuple(DataFile(n, _raw("vectara/FaithJudge", _FJ, f"eval_data/{n}"), f"ragtruth/upstream/{n}", h,
                         s) for n, h, s in (
        ("ragtruth_qa.jsonl", "72db1847b6f5102102d55ed8094c14abcfeeebeca37bbee8ed72d1e0041c6b62", 989651),
        ("ragtruth_summary.jsonl",
         "18b34dfba2df8218dc2fe3f04296d9be136203f3f18a5bed23272f4d3ccd44ac", 1307847),
        ("ragtruth_data2txt.jsonl", "85a791ea9b9eb85294fb68c148dc35488fdbde8a47adaa7ddd53afa41f44d75b",
         1628510),
    )),
    parser="ragworkbook.judging.ragtruth:load_ragtruth",
)

#: Every data set, by name.
CATALOGUE: dict[str, Dataset] = {d.name: d for d in (TREC_EVAL, RAGCHECKER, WIKIEVAL, RAGTRUTH)}


def get(name: str) -> Dataset:
    """The data set called ``name``; ValueError naming the known ones otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(CATALOGUE)} "
                         "(`ragworkbook datasets list`)") from None

"""The metric registry: one declaration per metric, read by everything else.

Every metric the package computes is declared here once, as a
:class:`MetricSpec`: its canonical name, its aliases (including the names
trec_eval and ir_measures use), its family, whether it takes a cutoff ``k``
and which other parameters it takes, its direction, and what it needs to be
computed (relevance judgements, a reference answer, an LLM judge). The batch
engine (:mod:`ragworkbook.metrics.batch`), the generation metrics, the judged
metrics, the evaluate loop, the comparison gate, the targets table, the
widgets and every command resolve metric names through :func:`parse_metric`;
nothing else keeps a list of metric names.

The implementations live with their engines, keyed by the canonical name:
retrieval kernels in :data:`ragworkbook.metrics.batch.KERNELS`, generation
scorers in :data:`ragworkbook.metrics.generation.SCORERS`, judged metrics in
:data:`ragworkbook.judging.metrics.METRICS` (a test checks that the three
tables and this registry name the same metrics). Adding a retrieval metric is
one kernel, one :class:`MetricSpec` below, and its tests.

Names
-----
A metric name is ``base`` or ``base@k`` (also ``base_k``, ``base.k`` and
trec_eval's ``ndcg_cut_10``); ``base`` is matched case-insensitively against
the canonical names and aliases. The parsed :class:`Metric` remembers the
text the user wrote (:attr:`Metric.name`) and prints it: ``ir-eval --metric
ndcg_cut_10`` answers ``ndcg_cut_10``, ``--metric nDCG@10`` answers
``nDCG@10``. Two names for the same metric and cutoff are the same metric
(:attr:`Metric.key`, e.g. ``ndcg@10``): the first spelling asked for is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = [
    "FAMILIES",
    "NEEDS",
    "MetricSpec",
    "Metric",
    "REGISTRY",
    "get_spec",
    "specs",
    "parse_metric",
    "parse_metrics",
    "find_metric",
    "known_names",
]

#: The three families of metrics.
FAMILIES = ("retrieval", "generation", "judged")
#: What a metric can need: relevance judgements (qrels), a reference answer, an LLM judge, the retrieved
#: contexts (their texts for a judge or a keyword, their ids for relevance by id).
NEEDS = ("relevance", "reference", "judge", "contexts")
_CUTOFFS = ("required", "optional", "none")


@dataclass(frozen=True)
class MetricSpec:
    """The declaration of one metric.

    ``name`` is canonical (``"ndcg"``); ``title`` the name as printed in prose
    (``"NDCG@k"``); ``definition`` one line stating it. ``aliases`` are other
    accepted spellings (lower case); ``trec_eval`` the trec_eval measure name
    (``"ndcg_cut"`` for NDCG with a cutoff, ``"ndcg"`` without), when trec_eval
    has it. ``cutoff``: ``"required"`` (P@k), ``"optional"`` (mrr or mrr@k) or
    ``"none"``. ``params``: other parameters the engine reads (``"gain"``,
    ``"max_grade"``). ``higher_is_better`` gives the direction the comparison
    gate and the targets use. ``needs`` lists what must be given to compute it.
    ``scale`` is its range. ``default``: computed by
    :func:`ragworkbook.evaluation.evaluate.evaluate` when no metric is named and
    its needs are met. ``derived_from``: the metric it is computed from.
    """

    name: str
    family: str
    title: str
    definition: str
    aliases: tuple[str, ...] = ()
    trec_eval: str | None = None
    cutoff: str = "none"
    params: tuple[str, ...] = ()
    higher_is_better: bool = True
    needs: frozenset[str] = field(default_factory=frozenset)
    scale: tuple[float, float] = (0.0, 1.0)
    default: bool = False
    derived_from: str | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {FAMILIES}, got {self.family!r}")
        if self.cutoff not in _CUTOFFS:
            raise ValueError(f"{self.name}: cutoff must be one of {_CUTOFFS}, got {self.cutoff!r}")
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"{self.name}: unknown needs {sorted(unknown)}")

    def with_k(self, k: int | None) -> Metric:
        """This metric at cutoff ``k`` (validated like a parsed name)."""
        return _make(self, k, None)


@dataclass(frozen=True)
class Metric:
    """A metric with its cutoff, as asked for: ``spec``, ``k`` and the ``label`` written.

    Equality and hashing use ``spec`` and ``k`` only: ``P@3`` and
    ``precision@3`` are the same metric.
    """

    spec: MetricSpec
    k: int | None = None
    label: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        """The canonical name with the cutoff: ``precision@3``, ``mrr``, ``ndcg@10``."""
        return self.spec.name if self.k is None else f"{self.spec.name}@{self.k}"

    @property
    def name(self) -> str:
        """The name as the user wrote it (the canonical :attr:`key` when built from a spec)."""
        return self.label or self.key

    @property
    def kind(self) -> str:
        """The canonical name without the cutoff (``"ndcg"``)."""
        return self.spec.name

    @property
    def family(self) -> str:
        """``"retrieval"``, ``"generation"`` or ``"judged"``."""
        return self.spec.family

    @property
    def higher_is_better(self) -> bool:
        """The direction: True unless a smaller value is better (hallucination)."""
        return self.spec.higher_is_better

    def __str__(self) -> str:
        return self.name


def _rel(*needs: str) -> frozenset[str]:
    return frozenset(needs)


_SPECS: tuple[MetricSpec, ...] = (
    # --- retrieval -------------------------------------------------------------------------
    MetricSpec("precision", "retrieval", "Precision@k",
               "relevant documents among the first k, divided by k",
               aliases=("p", "prec"), trec_eval="P", cutoff="required", needs=_rel("relevance", "contexts"),
               default=True),
    MetricSpec("recall", "retrieval", "Recall@k",
               "relevant documents among the first k, divided by all relevant documents",
               aliases=("r",), trec_eval="recall", cutoff="required", needs=_rel("relevance", "contexts"),
               default=True),
    MetricSpec("hit_rate", "retrieval", "Hit Rate@k",
               "1 if any of the first k documents is relevant, else 0",
               aliases=("hitrate", "hit", "hits", "hr"), trec_eval="success", cutoff="required",
               needs=_rel("relevance", "contexts"), default=True),
    MetricSpec("mrr", "retrieval", "MRR",
               "1 / rank of the first relevant document (0 if none within the cutoff); its mean is MRR",
               aliases=("rr", "reciprocal_rank"), trec_eval="recip_rank", cutoff="optional",
               needs=_rel("relevance", "contexts"), default=True),
    MetricSpec("map", "retrieval", "MAP",
               "mean of Precision@i over the ranks i of the relevant documents, divided by all relevant",
               aliases=("ap", "average_precision"), trec_eval="map", cutoff="optional",
               needs=_rel("relevance", "contexts")),
    MetricSpec("r_precision", "retrieval", "R-precision",
               "Precision@R, R = the number of relevant documents of the query",
               aliases=("rprec", "r-precision"), trec_eval="Rprec", needs=_rel("relevance", "contexts")),
    MetricSpec("dcg", "retrieval", "DCG@k",
               "sum of gain(grade) / log2(rank + 1) over the first k",
               trec_eval=None, cutoff="optional", params=("gain",), needs=_rel("relevance", "contexts"),
               scale=(0.0, float("inf"))),
    MetricSpec("ndcg", "retrieval", "NDCG@k",
               "DCG@k divided by the DCG@k of the ideal ranking of every judged document",
               trec_eval="ndcg", cutoff="optional", params=("gain",), needs=_rel("relevance", "contexts"),
               default=True),
    MetricSpec("err", "retrieval", "ERR@k",
               "expected reciprocal rank (Chapelle et al. 2009): sum over ranks r of "
               "R_r / r * prod_{i<r} (1 - R_i), R = (2^grade - 1) / 2^max_grade",
               aliases=("expected_reciprocal_rank",), cutoff="optional", params=("max_grade",),
               needs=_rel("relevance", "contexts")),
    # --- generation (reference-based) ------------------------------------------------------
    MetricSpec("bleu", "generation", "BLEU", "sacrebleu sentence BLEU of the answer against the reference",
               aliases=("sacrebleu",), needs=_rel("reference"), scale=(0.0, 100.0), default=True),
    MetricSpec("rouge_l", "generation", "ROUGE-L", "ROUGE-L F-measure (longest common subsequence, stemmed)",
               aliases=("rougel", "rouge-l"), needs=_rel("reference"), default=True),
    # --- ROUGE-1 / ROUGE-2 (added by EXERCISES, issue 19; not computed by default) --------------
    MetricSpec("rouge_1", "generation", "ROUGE-1", "ROUGE-1 F-measure (unigram overlap, stemmed)",
               aliases=("rouge1", "rouge-1"), needs=_rel("reference")),
    MetricSpec("rouge_2", "generation", "ROUGE-2", "ROUGE-2 F-measure (bigram overlap, stemmed)",
               aliases=("rouge2", "rouge-2"), needs=_rel("reference")),
    # --- end of the ROUGE-1 / ROUGE-2 block ------------------------------------------------------
    MetricSpec("meteor", "generation", "METEOR", "NLTK METEOR with WordNet synonyms",
               needs=_rel("reference"), default=True),
    MetricSpec("embedding_similarity", "generation", "embedding similarity",
               "cosine of the MiniLM embeddings of answer and reference",
               aliases=("semantic_similarity", "cosine"), needs=_rel("reference"), scale=(-1.0, 1.0),
               default=True),
    MetricSpec("bertscore_f1", "generation", "BERTScore F1",
               "BERTScore F1 on the local MiniLM (no baseline rescaling)",
               aliases=("bertscore",), needs=_rel("reference")),
    MetricSpec("exact_match", "generation", "exact match",
               "1 if the SQuAD-normalised answer equals the normalised reference",
               aliases=("em",), needs=_rel("reference")),
    MetricSpec("token_f1", "generation", "token F1",
               "SQuAD token F1: harmonic mean of bag-of-token precision and recall",
               aliases=("f1",), needs=_rel("reference"), default=True),
    # --- judged ---------------------------------------------------------------------------
    MetricSpec("faithfulness", "judged", "faithfulness",
               "claims of the answer supported by the retrieved context / all claims",
               aliases=("groundedness",), needs=_rel("judge", "contexts"), default=True),
    MetricSpec("answer_relevancy", "judged", "answer relevancy",
               "mean cosine of questions generated back from the answer to the question; 0 if noncommittal",
               aliases=("answer_relevance",), needs=_rel("judge"), default=True),
    MetricSpec("context_precision", "judged", "context precision",
               "position-weighted precision of chunks judged useful for the reference answer",
               aliases=("context_precision_with_reference",), needs=_rel("judge", "reference", "contexts"),
               default=True),
    MetricSpec("context_precision_without_reference", "judged", "context precision (no reference)",
               "position-weighted precision of chunks judged useful for the system's answer",
               needs=_rel("judge", "contexts")),
    MetricSpec("context_recall", "judged", "context recall",
               "sentences of the reference attributable to the retrieved context / all sentences",
               needs=_rel("judge", "reference", "contexts"), default=True),
    MetricSpec("context_relevance", "judged", "context relevance",
               "mean of per-chunk relevance verdicts against the question (the triad's first leg)",
               needs=_rel("judge", "contexts")),
    MetricSpec("completeness", "judged", "completeness",
               "relevant context sentences the answer uses / relevant context sentences",
               needs=_rel("judge", "contexts")),
    MetricSpec("utilization", "judged", "utilization",
               "context sentences the answer uses / all context sentences",
               aliases=("context_utilization",), needs=_rel("judge", "contexts")),
    MetricSpec("nli_faithfulness", "judged", "NLI faithfulness",
               "claims of the answer the context entails / all claims (entailment/contradiction/neutral)",
               aliases=("nli_entailment",), needs=_rel("judge", "contexts")),
    MetricSpec("nli_contradiction", "judged", "NLI contradiction rate",
               "claims of the answer the context contradicts / all claims",
               aliases=("contradiction_rate",), higher_is_better=False, needs=_rel("judge", "contexts")),
    MetricSpec("questeval", "judged", "QuestEval-style precision",
               "mean token F1 of the answer's own answers to questions generated from it and the answers "
               "read from the context",
               aliases=("questeval_precision",), needs=_rel("judge", "contexts")),
    MetricSpec("hallucination", "judged", "hallucination",
               "1 when faithfulness < 1 (at least one unsupported claim); its mean is the hallucination rate",
               aliases=("hallucination_rate",), higher_is_better=False, needs=_rel("judge", "contexts"),
               default=True, derived_from="faithfulness"),
    # --- JUDGE (issue 18): the deterministic, reference-free faithfulness signal ---------------
    # Scorer: ragworkbook.metrics.support (through ragworkbook.judging.metrics.METRICS, computed
    # without an LLM); measured like any judge by `ragworkbook judge-check --dataset ff --judge word-support`.
    MetricSpec("word_support", "judged", "word support",
               "content words of the answer found in the retrieved context (stemmed) / content words of the "
               "answer; no LLM",
               aliases=("content_word_support", "word-support")),
    # --- end JUDGE -----------------------------------------------------------------------------
)

#: Canonical name -> spec, in declaration order (the order reports list metrics in).
REGISTRY: dict[str, MetricSpec] = {s.name: s for s in _SPECS}


def _build_aliases() -> dict[str, MetricSpec]:
    table: dict[str, MetricSpec] = {}
    for spec in _SPECS:
        names = {spec.name, *spec.aliases}
        if spec.trec_eval:
            names |= {spec.trec_eval.lower(), f"{spec.trec_eval.lower()}_cut"}
        for n in names:
            other = table.get(n.lower())
            if other is not None and other is not spec:
                raise ValueError(f"metric alias {n!r} names both {other.name} and {spec.name}")
            table[n.lower()] = spec
    return table


_ALIASES = _build_aliases()
# base, then an optional cutoff written @k, _k, .k or trec_eval's _cut_k
_NAME_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*?)(?:_cut)?(?:\s*[@_.]\s*(\d+))?\s*$")


def get_spec(name: str) -> MetricSpec:
    """The spec of a metric named without a cutoff (canonical name or alias); ValueError if unknown."""
    spec = _ALIASES.get(str(name).strip().lower())
    if spec is None:
        raise ValueError(_unknown(name, None))
    return spec


def specs(family: str | None = None) -> list[MetricSpec]:
    """Every spec (of one family), in declaration order."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: use one of {', '.join(FAMILIES)}")
    return [s for s in _SPECS if family is None or s.family == family]


def known_names(family: str | None = None) -> str:
    """The metrics of ``family`` as a comma-separated list for messages (``precision@k, mrr[@k], ...``)."""
    out = []
    for s in specs(family):
        out.append(s.name + {"required": "@k", "optional": "[@k]", "none": ""}[s.cutoff])
    return ", ".join(out)


def _unknown(name: object, family: str | None) -> str:
    return f"unknown metric {name!r}; known metrics: {known_names(family)}"


def _make(spec: MetricSpec, k: int | None, label: str | None) -> Metric:
    shown = label or (spec.name if k is None else f"{spec.name}@{k}")
    if k is not None:
        if spec.cutoff == "none":
            hint = " (its cutoff is R)" if spec.name == "r_precision" else ""
            raise ValueError(f"metric {shown!r}: {spec.name} takes no cutoff{hint}; write {spec.name!r}")
        if k <= 0:
            raise ValueError(f"metric {shown!r}: the cutoff k must be >= 1")
    elif spec.cutoff == "required":
        raise ValueError(f"metric {shown!r} needs a cutoff, e.g. '{spec.name}@10'")
    return Metric(spec, k, label or "")


def parse_metric(name: str | Metric, family: str | None = None) -> Metric:
    """Parse one metric name into a :class:`Metric` (see the module docstring for the syntax).

    ``family`` restricts the accepted metrics (``"retrieval"`` for ``ir-eval``);
    a metric of another family is refused with a message saying what it is.
    ValueError for an unknown name, a missing or unexpected cutoff, or k <= 0.
    """
    if isinstance(name, Metric):
        metric = name
    else:
        if not isinstance(name, str):
            raise TypeError(f"a metric name must be a string like 'ndcg@10', got {name!r}")
        text = name.strip()
        spec = _ALIASES.get(text.lower())
        k: int | None = None
        if spec is None:
            m = _NAME_RE.match(text)
            if m:
                spec = _ALIASES.get(m.group(1).lower().rstrip("_-"))
                k = int(m.group(2)) if m.group(2) is not None else None
        if spec is None:
            raise ValueError(_unknown(name, family))
        metric = _make(spec, k, text)
    if family is not None and metric.family != family:
        raise ValueError(f"metric {metric.name!r} is a {metric.family} metric; only {family} metrics "
                         f"apply here: {known_names(family)}")
    return metric


def parse_metrics(names: str | Metric | Iterable[str | Metric], family: str | None = None) -> list[Metric]:
    """Parse one name, a comma-separated string, or a list of names (each possibly
    comma-separated) into a list of :class:`Metric` without repeats (the first
    spelling of a metric is kept), in the order given. ValueError when empty."""
    if isinstance(names, (str, Metric)):
        names = [names]
    out: list[Metric] = []
    for item in names:
        parts = item.split(",") if isinstance(item, str) else [item]
        for part in parts:
            if isinstance(part, str) and not part.strip():
                continue
            metric = parse_metric(part, family)
            if metric not in out:
                out.append(metric)
    if not out:
        raise ValueError("no metric given: pass names like 'ndcg@10', 'mrr', 'recall@10'")
    return out


def find_metric(metric: str, names: Iterable[str]) -> str | None:
    """The entry of ``names`` that denotes the same metric as ``metric``: the same spelling,
    else the same metric and cutoff under another spelling (``ndcg_cut_3`` finds ``ndcg@3``);
    None when there is none. ``metric`` must be a known name (ValueError otherwise)."""
    names = list(names)
    if metric in names:
        return metric
    key = parse_metric(metric).key
    return next((n for n in names if parse_metric(n).key == key), None)

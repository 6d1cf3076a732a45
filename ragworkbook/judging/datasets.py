"""Public labelled data for measuring a judge: WikiEval pairs and RAGChecker's meta-evaluation.

Two public data sets, not shipped: :mod:`ragworkbook.datasets` downloads them on first use from their
public homes (pinned commits, checked sha256) into the cache (``ragworkbook datasets fetch wikieval``,
``ragworkbook datasets fetch ragchecker``; licences in ``ragworkbook datasets info NAME``):

- **WikiEval** (the RAGAS paper's meta-evaluation set, arXiv:2309.15217), as three
  CSV files of pairs (data set ``wikieval``): for each of 50 questions one good and one
  bad item, as WikiEval was built.

  ==========================  ==========  =====================================  ====================
  set                         file        columns                                good / bad item
  ==========================  ==========  =====================================  ====================
  ``faithfulness``            ``ff.csv``  question, context, answer, label       grounded / ungrounded
                                                                                 answer
  ``answer_relevance``        ``ar.csv``  question, answer, label                complete / incomplete
                                                                                 answer
  ``context_relevance``       ``cr.csv``  question, context, label               original context /
                                                                                 context with added text
  ==========================  ==========  =====================================  ====================

  **Which item is good comes from the construction labels**
  (``ragworkbook/data/wikieval/construction_labels.csv``, this project's own, recomputed from the three
  CSVs by ``derive_construction_labels.py`` beside it), never from the files' ``label``
  column: that column is a slot, not a verdict (its 1 marks the grounded answer in
  only 26 of the 50 faithfulness pairs; ff.csv's pairs 5-7 have the grounded answer
  under label 0). :attr:`WikiEvalItem.label` keeps it, for the record.

- **RAGChecker's meta-evaluation** (arXiv:2408.08067, data set ``ragchecker``): 280
  pairs of answers from two RAG systems to the same query, with the reference
  (ground-truth) answer; each pair labelled by two annotators on correctness,
  completeness and overall quality, from -2 (the first answer, ``model1``, is much
  better) to 2 (the second, ``model2``, is much better); and RAGChecker's own
  per-answer scores for the same pairs (``baseline_ragchecker.json``).

Loading is strict: a missing column or field, a label outside its range, a
question without exactly one good and one bad item, or two annotator records
that do not describe the same pair raise
:class:`~ragworkbook.corpus.jsonfile.DatasetError` naming the file, the line and
the field.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from ragworkbook.judging.results import JudgeSample

from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    element_lines,
    location,
    parse_json,
    read_text,
    require_str,
)

__all__ = [
    "WIKIEVAL_SETS",
    "ASPECTS",
    "WikiEvalItem",
    "WikiEvalPair",
    "WikiEvalSet",
    "load_wikieval",
    "load_construction_labels",
    "CONSTRUCTION_LABELS",
    "ConstructionLabel",
    "RagCheckerPair",
    "RagCheckerMeta",
    "load_ragchecker",
    "round_robin",
]

#: WikiEval set name -> (file, the text columns besides ``question``)
WIKIEVAL_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "faithfulness": ("ff.csv", ("context", "answer")),
    "answer_relevance": ("ar.csv", ("answer",)),
    "context_relevance": ("cr.csv", ("context",)),
}

#: The three aspects RAGChecker's annotators labelled.
ASPECTS = ("correctness", "completeness", "overall")


# --------------------------------------------------------------------------------------------
# WikiEval
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WikiEvalItem:
    """One item: the question, the judged text(s), whether it is the ``good`` item of its pair (the
    construction label: grounded, complete or original), the CSV file's ``label`` column as written
    (not a quality label: never read as the truth) and the ``line`` where its record starts."""

    question: str
    label: int
    answer: str | None = None
    context: str | None = None
    line: int = 0
    good: bool = False


@dataclass(frozen=True)
class WikiEvalPair:
    """The good and the bad item of one question (``id`` = ``"w01"`` ... in file order)."""

    id: str
    question: str
    good: WikiEvalItem
    bad: WikiEvalItem

    def samples(self) -> list[JudgeSample]:
        """The good and the bad item as samples to judge (``sample_id`` ``"<id>-good"``, ``"<id>-bad"``)."""
        from ragworkbook.judging.results import JudgeSample

        return [JudgeSample(question=self.question, answer=it.answer or "",
                            contexts=[it.context] if it.context is not None else [],
                            sample_id=f"{self.id}-{which}")
                for which, it in (("good", self.good), ("bad", self.bad))]


@dataclass(frozen=True)
class WikiEvalSet:
    """The pairs of one WikiEval set, in the order their questions first appear in the file."""

    name: str
    pairs: list[WikiEvalPair]
    path: str = ""

    def __iter__(self) -> Iterator[WikiEvalPair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


def _csv_records(path: Path, text: str, columns: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """The CSV's records with the line each starts on; a missing column is an error naming the file."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise DatasetError(f"{path}: the file is empty (expected a header: {', '.join(columns)})") from None
    except csv.Error as exc:
        raise DatasetError(f"{path}, line 1: not valid CSV ({exc})") from None
    missing = [c for c in columns if c not in header]
    if missing:
        raise DatasetError(f"{path}, line 1: the header has no column {missing[0]!r} "
                           f"(it has: {', '.join(header) or 'nothing'}; expected: {', '.join(columns)})")
    records: list[tuple[int, dict[str, str]]] = []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DatasetError(f"{path}, line {start}: not valid CSV ({exc})") from None
        if row:
            if len(row) != len(header):
                raise DatasetError(f"{path}, line {start}: {len(row)} fields where the header has "
                                   f"{len(header)} (an unquoted comma or quote?)")
            records.append((start, dict(zip(header, row, strict=True))))
        start = reader.line_num + 1
    return records


def _label(value: str, where: str) -> int:
    if value.strip() not in ("0", "1"):
        raise DatasetError(f"{where}: field 'label' must be 0 or 1, got {value!r}")
    return int(value)


#: The construction labels of the WikiEval files: which item of each pair is the good one.
CONSTRUCTION_LABELS = "construction_labels.csv"


@dataclass(frozen=True)
class ConstructionLabel:
    """Whether one WikiEval item is the ``good`` one of its pair, for which ``question``, and the
    ``evidence`` that decided it (the similarity to the text the other file shares)."""

    good: bool
    question: str
    evidence: str = ""


def load_construction_labels(path: PathLike | None = None) -> dict[tuple[str, int], ConstructionLabel]:
    """The construction labels of the WikiEval files: ``(file, row) -> ConstructionLabel`` (row: the
    0-based data row of that file; good: the grounded answer, the complete answer, the original context).

    ``path`` defaults to the project's ``ragworkbook/data/wikieval/construction_labels.csv`` (columns
    ``file, row, question, good, evidence``); DatasetError naming the line for a bad record."""
    from ragworkbook.paths import data_path

    p = Path(path) if path is not None else data_path("wikieval", CONSTRUCTION_LABELS)
    out: dict[tuple[str, int], ConstructionLabel] = {}
    for line, rec in _csv_records(p, read_text(p), ("file", "row", "question", "good")):
        where = location(p, line)
        row, good = rec["row"].strip(), rec["good"].strip()
        if not row.isdigit():
            raise DatasetError(f"{where}: field 'row' must be a row number (0, 1, ...), got {rec['row']!r}")
        if good not in ("0", "1"):
            raise DatasetError(f"{where}: field 'good' must be 0 or 1, got {rec['good']!r}")
        key = (rec["file"].strip(), int(row))
        if key in out:
            raise DatasetError(f"{where}: {key[0]} row {key[1]} is labelled twice")
        out[key] = ConstructionLabel(good == "1", rec["question"], rec.get("evidence", ""))
    return out


def load_wikieval(name: str, path: PathLike | None = None, truth: PathLike | None = None) -> WikiEvalSet:
    """Load one WikiEval set (``"faithfulness"``, ``"answer_relevance"``, ``"context_relevance"``).

    ``path`` defaults to the data set's file (``ragworkbook.datasets``: downloaded and checked on
    first use; DatasetMissing naming ``ragworkbook datasets fetch wikieval`` when it cannot be);
    ``truth``, the construction labels that say which item of a pair is good, to the project's own
    (``ragworkbook/data/wikieval/construction_labels.csv``) for the data set's file, to
    ``construction_labels.csv`` beside ``path`` for a file you give. Every data row needs a
    construction label with the same question, and every question
    exactly one good and one bad item (else DatasetError naming the lines); pairs keep the order in
    which their questions first appear. The files' ``label`` column is checked (0 or 1) and kept
    on each item but never decides which item is good.
    """
    if name not in WIKIEVAL_SETS:
        raise ValueError(f"unknown WikiEval set {name!r}; choose one of: {', '.join(WIKIEVAL_SETS)}")
    filename, text_cols = WIKIEVAL_SETS[name]
    if path is None:
        from ragworkbook.datasets import dataset_file
        from ragworkbook.paths import data_path

        path = dataset_file("wikieval", filename)
        truth = data_path("wikieval", CONSTRUCTION_LABELS) if truth is None else truth
    p = Path(path)
    t = Path(truth) if truth is not None else p.parent / CONSTRUCTION_LABELS
    if not t.is_file():
        raise DatasetError(f"{p}: no construction labels at {t}: which item of a pair is good is read from "
                           f"them (the 'label' column is not a quality label); pass truth=PATH")
    truth_of = load_construction_labels(t)
    columns = ("question", *text_cols, "label")
    by_question: dict[str, list[WikiEvalItem]] = {}
    for row, (line, rec) in enumerate(_csv_records(p, read_text(p), columns)):
        where = location(p, line)
        for col in ("question", *text_cols):
            require_str(rec, col, where, "record")
        key = (p.name, row)
        if key not in truth_of:
            raise DatasetError(f"{where}: {t.name} has no label for {p.name} row {row}")
        if truth_of[key].question != rec["question"]:
            raise DatasetError(f"{where}: the question differs from {t.name}'s for {p.name} row {row} "
                               f"({truth_of[key].question[:60]!r}); the labels are for another version of "
                               "the file")
        item = WikiEvalItem(question=rec["question"], label=_label(rec["label"], where),
                            answer=rec.get("answer") if "answer" in text_cols else None,
                            context=rec.get("context") if "context" in text_cols else None, line=line,
                            good=truth_of[key].good)
        by_question.setdefault(item.question, []).append(item)
    if not by_question:
        raise DatasetError(f"{p}: no records after the header")
    pairs = []
    for i, (question, items) in enumerate(by_question.items(), start=1):
        goods = sorted(it.good for it in items)
        if goods != [False, True]:
            lines = ", ".join(str(it.line) for it in items)
            raise DatasetError(f"{p}, lines {lines}: the question {question[:60]!r} has {goods.count(True)} "
                               f"good and {goods.count(False)} bad items in {t.name}; a WikiEval pair needs "
                               "exactly one of each")
        good = next(it for it in items if it.good)
        bad = next(it for it in items if not it.good)
        pairs.append(WikiEvalPair(f"w{i:02d}", question, good, bad))
    return WikiEvalSet(name, pairs, str(p))


# --------------------------------------------------------------------------------------------
# RAGChecker's meta-evaluation
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RagCheckerPair:
    """One meta-evaluation pair: a query, its reference answer, two systems' answers, and the
    two annotators' -2..2 preferences per aspect (positive = ``answer2`` better).

    ``labels[aspect]`` is ``(annotator 1, annotator 2)``; ``predictions[aspect]`` is
    RAGChecker's ``(score of answer1, score of answer2)`` when its predictions were loaded.
    """

    id: str
    instance_id: int
    dataset: str
    query: str
    reference: str
    answer1: str
    answer2: str
    system1: str
    system2: str
    labels: dict[str, tuple[int, int]]
    predictions: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    line: int = 0

    def preferences(self, aspect: str) -> tuple[str, str]:
        """The two annotators' choice on ``aspect``: ``"A"`` (answer 1 better), ``"B"`` or ``"tie"``."""
        a, b = self.labels[aspect]
        return _sign(a), _sign(b)

    def pairwise_input(self) -> PairwiseInput:
        """The pair as the pairwise judge takes it (:func:`~ragworkbook.judging.pairwise.pairwise_many`)."""
        return {"question": self.query, "answer_a": self.answer1, "answer_b": self.answer2,
                "reference": self.reference, "pair_id": self.id}


def _sign(x: int) -> str:
    return "B" if x > 0 else "A" if x < 0 else "tie"


class PairwiseInput(TypedDict):
    """One pair for the pairwise judge: the question and the two answers; optionally the reference
    answer, the context and an id."""

    question: str
    answer_a: str
    answer_b: str
    reference: NotRequired[str | None]
    context: NotRequired[str | None]
    pair_id: NotRequired[str]


@dataclass(frozen=True)
class RagCheckerMeta:
    """The 280 pairs in file order (annotator records 2i and 2i + 1 are pair i)."""

    pairs: list[RagCheckerPair]
    path: str = ""
    predictions_path: str = ""

    def __iter__(self) -> Iterator[RagCheckerPair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


def _record_list(path: Path, what: str) -> tuple[list[JSON], list[int]]:
    text = read_text(path)
    data = parse_json(path, text)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON array of {what}, got {type(data).__name__}")
    lines = _array_lines(text)
    return data, lines


def _array_lines(text: str) -> list[int]:
    """Line numbers where the elements of a top-level JSON array start."""
    return element_lines('{"_": ' + text + "}", "_")


def _where(path: Path, lines: list[int], i: int) -> str:
    return f"{location(path, lines[i] if i < len(lines) else None)} (record {i})"


def _answer(rec: JSONObject, key: str, where: str) -> tuple[str, str]:
    m = rec.get(key)
    if not isinstance(m, dict):
        raise DatasetError(f"{where}: field {key!r} must be an object with 'model_name' and 'response'")
    return (require_str(m, "response", f"{where}, {key}", "answer", allow_empty=True),
            require_str(m, "model_name", f"{where}, {key}", "answer"))


def _preference(rec: JSONObject, aspect: str, where: str) -> int:
    key = f"{aspect}_label"
    if key not in rec:
        raise DatasetError(f"{where}: record is missing the field {key!r}")
    v = rec[key]
    if isinstance(v, bool) or not isinstance(v, int) or not -2 <= v <= 2:
        raise DatasetError(f"{where}: field {key!r} must be an integer from -2 to 2, got {v!r}")
    return v


def load_ragchecker(path: PathLike | None = None, predictions: PathLike | None | bool = True
                    ) -> RagCheckerMeta:
    """Load RAGChecker's meta-evaluation pairs (``human_labeled_data.json``), and by default
    RAGChecker's predictions for them (``baseline_ragchecker.json``; ``predictions=False``: none).
    Both default to the ``ragchecker`` data set's files (:mod:`ragworkbook.datasets`).

    The labels file holds two records per pair, one per annotator, consecutive and
    with the same ``instance_id``, query and answers (else DatasetError naming both
    records). The predictions file holds one record per pair, in the same order.
    """
    from ragworkbook.datasets import dataset_file

    p = Path(path) if path is not None else dataset_file("ragchecker", "human_labeled_data.json")
    data, lines = _record_list(p, "annotator records")
    if len(data) % 2:
        raise DatasetError(f"{p}: {len(data)} records; expected two per pair (one per annotator)")
    pairs = []
    for i in range(0, len(data), 2):
        recs = data[i:i + 2]
        wheres = [_where(p, lines, i), _where(p, lines, i + 1)]
        for rec, where in zip(recs, wheres, strict=True):
            if not isinstance(rec, dict):
                raise DatasetError(f"{where}: expected an object, got {type(rec).__name__}")
        first, second = recs
        same = ("instance_id", "query", "gt_answer")
        for key in same:
            if first.get(key) != second.get(key):
                raise DatasetError(f"{wheres[1]}: field {key!r} differs from {wheres[0]}; the two annotator "
                                   "records of a pair must be consecutive and describe the same pair")
        a1, s1 = _answer(first, "model1", wheres[0])
        a2, s2 = _answer(first, "model2", wheres[0])
        if (_answer(second, "model1", wheres[1]) != (a1, s1)
                or _answer(second, "model2", wheres[1]) != (a2, s2)):
            raise DatasetError(f"{wheres[1]}: the answers differ from {wheres[0]}; the two annotator records "
                               "of a pair must describe the same two answers")
        iid = first.get("instance_id")
        if isinstance(iid, bool) or not isinstance(iid, int):
            raise DatasetError(f"{wheres[0]}: field 'instance_id' must be an integer, got {iid!r}")
        labels = {a: (_preference(first, a, wheres[0]), _preference(second, a, wheres[1])) for a in ASPECTS}
        pairs.append(RagCheckerPair(
            id=f"r{iid:03d}", instance_id=iid, dataset=require_str(first, "dataset", wheres[0], "record"),
            query=require_str(first, "query", wheres[0], "record"),
            reference=require_str(first, "gt_answer", wheres[0], "record"),
            answer1=a1, answer2=a2, system1=s1, system2=s2, labels=labels,
            line=lines[i] if i < len(lines) else 0))
    pred_path = ""
    if predictions is not False:
        pp = dataset_file("ragchecker", "baseline_ragchecker.json") if predictions in (True, None) else \
            Path(predictions)  # type: ignore[arg-type]
        pairs = _with_predictions(pairs, pp)
        pred_path = str(pp)
    return RagCheckerMeta(pairs, str(p), pred_path)


def _score(m: JSONObject, aspect: str, where: str) -> float | None:
    key = f"{aspect}_label"
    if key not in m:
        raise DatasetError(f"{where}: RAGChecker's scores have no field {key!r}")
    v = m[key]
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DatasetError(f"{where}: field {key!r} must be a number or null, got {v!r}")
    return float(v)


def _with_predictions(pairs: list[RagCheckerPair], path: Path) -> list[RagCheckerPair]:
    data, lines = _record_list(path, "prediction records")
    if len(data) != len(pairs):
        raise DatasetError(f"{path}: {len(data)} records for {len(pairs)} labelled pairs; "
                           "expected one per pair")
    out = []
    for i, (rec, pair) in enumerate(zip(data, pairs, strict=True)):
        where = _where(path, lines, i)
        if not isinstance(rec, dict) or rec.get("instance_id") != pair.instance_id:
            raise DatasetError(f"{where}: expected the record of instance_id {pair.instance_id} "
                               f"(the predictions must be in the order of the labelled pairs)")
        scores = []
        for key in ("model1", "model2"):
            m = rec.get(key)
            if not isinstance(m, dict) or not isinstance(m.get("ragchecker"), dict):
                raise DatasetError(f"{where}: field {key!r} has no 'ragchecker' scores")
            scores.append(m["ragchecker"])
        preds = {a: (_score(scores[0], a, f"{where}, model1"), _score(scores[1], a, f"{where}, model2"))
                 for a in ASPECTS}
        out.append(RagCheckerPair(**{**pair.__dict__, "predictions": preds}))
    return out


def round_robin(pairs: Sequence[RagCheckerPair]) -> list[RagCheckerPair]:
    """The pairs reordered so that the source data sets take turns (first pair of each data set,
    then the second of each, ...; data sets in order of first appearance, pairs in file order).

    A ``--limit`` then samples every data set instead of the first one only."""
    groups: dict[str, list[RagCheckerPair]] = {}
    for pr in pairs:
        groups.setdefault(pr.dataset, []).append(pr)
    out: list[RagCheckerPair] = []
    depth = max((len(g) for g in groups.values()), default=0)
    for j in range(depth):
        out.extend(g[j] for g in groups.values() if j < len(g))
    return out

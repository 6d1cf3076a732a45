"""An eval set built by hand and grown every week: items with their provenance, merges, versions, leaks.

The best eval set is made of real questions: start with about fifty that users actually asked
(from logs, support tickets, the people the system is for), answer each by hand from the
documents, and add a batch every week. This module keeps the bookkeeping honest:

- :class:`HandItem`: what to write down per item, beyond the question and its reference: where
  the question came from (``source``), when it was added (``added``) and by whom (``author``),
  where the answer is stated (``evidence``: a page or chunk; ``keyword``: the keyword ground
  truth), free ``tags`` (topic, difficulty, "no answer in the documents") and ``notes``;
- :func:`merge_batch`: adds a week's batch to the set. A new item whose question is the same
  after normalisation (:func:`normalize_question`: case, punctuation, spacing) as one already
  in the set, or as an earlier item of the batch, is an **exact duplicate** and is not added;
  one whose similarity (:func:`question_similarity`) with an existing question is at least
  ``near`` is a **near duplicate**, held back for a person to decide (paraphrases can be
  deliberate); an id already used is a **clash** and is refused. The result carries a
  :class:`VersionRecord`: the version, the date, what was added, held and refused, and the
  SHA-256 of the resulting items, so a report can name the exact set it was computed on;
- :func:`find_leaks`: the items whose question or reference shares a run of ``n`` words with a
  text the system sees (its prompt, few-shot examples, fine-tuning data). A test question the
  system has been shown is not a test;
- :func:`save_hand_set` / :func:`load_hand_set`: the set as JSON that
  :func:`ragworkbook.corpus.eval_set.load_eval_set` also reads (it ignores the extra fields),
  with the version history beside the items.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.eval_set import EvalItem, EvalSet
from ragworkbook.corpus.jsonfile import DatasetError

__all__ = ["HandItem", "VersionRecord", "MergeResult", "normalize_question", "question_similarity",
           "merge_batch", "content_hash", "Leak", "find_leaks", "save_hand_set", "load_hand_set",
           "to_eval_set"]

FORMAT = "ragworkbook-hand-eval-set/1"


@dataclass(frozen=True)
class HandItem:
    """One hand-written item: the eval-set fields (``id``, ``question``, ``reference``, ``keyword``)
    and its provenance: ``source`` (where the question came from), ``added`` (ISO date),
    ``author`` (who wrote the reference), ``evidence`` (where the answer is stated), ``tags``
    and ``notes``."""

    id: str
    question: str
    reference: str
    source: str
    added: str
    author: str
    keyword: str | None = None
    evidence: str = ""
    tags: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        for name in ("id", "question", "reference", "source", "added", "author"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v.strip():
                raise ValueError(f"item {self.id!r}: field {name!r} must be a non-empty string, got {v!r}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.added):
            raise ValueError(f"item {self.id!r}: 'added' is an ISO date (YYYY-MM-DD), got {self.added!r}")
        if isinstance(self.tags, str):
            raise ValueError(f"item {self.id!r}: 'tags' is a list of strings, not one string")
        object.__setattr__(self, "tags", tuple(self.tags))

    def to_dict(self) -> JSONObject:
        d = asdict(self)
        d["tags"] = list(self.tags)
        return d

    @classmethod
    def from_mapping(cls, m: Mapping[str, JSON]) -> HandItem:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(m) - known)
        if unknown:
            raise ValueError(f"unknown fields {unknown}; an item has: {sorted(known)}")
        missing = [f for f in ("id", "question", "reference", "source", "added", "author") if f not in m]
        if missing:
            raise ValueError(f"item {m.get('id', '?')!r} is missing {', '.join(missing)}")
        return cls(**{**m, "tags": tuple(m.get("tags", ()))})


_PUNCT = re.compile(r"[^\w\s]")


def normalize_question(text: str) -> str:
    """Lower case, accents and punctuation removed, runs of spaces collapsed (NFKD)."""
    t = unicodedata.normalize("NFKD", str(text))
    t = "".join(ch for ch in t if not unicodedata.combining(ch))
    return " ".join(_PUNCT.sub(" ", t.lower()).split())


def question_similarity(a: str, b: str) -> float:
    """Similarity of two questions from 0 to 1: difflib's ratio (2 x matching characters / total)
    on the normalised texts (:func:`normalize_question`)."""
    return difflib.SequenceMatcher(None, normalize_question(a), normalize_question(b), autojunk=False).ratio()


def content_hash(items: Sequence[HandItem]) -> str:
    """``sha256:`` of the items' canonical JSON (sorted keys, in set order): names one exact version."""
    blob = json.dumps([it.to_dict() for it in items], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class VersionRecord:
    """One merge in the set's history: ``version``, ``date``, the ids ``added``, the new ids held as
    ``near_duplicates`` or dropped as ``duplicates``, refused ``clashes``, the size after the merge
    and the ``sha256`` of the resulting items."""

    version: str
    date: str
    added: tuple[str, ...]
    duplicates: tuple[str, ...]
    near_duplicates: tuple[str, ...]
    clashes: tuple[str, ...]
    size: int
    sha256: str
    note: str = ""

    def to_dict(self) -> JSONObject:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class MergeResult:
    """The set after a merge (``items``), what happened to each new item, and the ``record``.

    ``duplicates``: ``(new id, id it repeats)``; ``near_duplicates``: ``(new id, most similar id,
    similarity)``, held back; ``clashes``: new items whose id is already used."""

    items: list[HandItem]
    added: list[HandItem]
    duplicates: list[tuple[str, str]]
    near_duplicates: list[tuple[str, str, float]]
    clashes: list[str]
    record: VersionRecord
    history: list[VersionRecord] = field(default_factory=list)


def merge_batch(current: Sequence[HandItem], batch: Sequence[HandItem], *, version: str, date: str,
                near: float = 0.85, similarity: Callable[[str, str], float] = question_similarity,
                accept: Sequence[str] = (), note: str = "",
                history: Sequence[VersionRecord] = ()) -> MergeResult:
    """Merge a week's ``batch`` into ``current`` (see the module docstring).

    ``near``: the similarity from which a new question is held as a near duplicate (1 turns the
    check off); ``accept``: ids of near duplicates a person has read and decided to keep (they are
    added); ``similarity``: any ``(question, question) -> [0, 1]`` (e.g. a MiniLM cosine);
    ``history``: the earlier records, to which this merge's record is appended in the result.
    """
    if not 0 < near <= 1:
        raise ValueError(f"near is a similarity in (0, 1], got {near!r}")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise ValueError(f"date is an ISO date (YYYY-MM-DD), got {date!r}")
    if any(r.version == version for r in history):
        raise ValueError(f"version {version!r} is already in the history")
    items = list(current)
    ids = {it.id for it in items}
    if len(ids) != len(items):
        raise ValueError("the current set has repeated ids")
    seen = {normalize_question(it.question): it.id for it in items}
    accepted = set(accept)
    added: list[HandItem] = []
    dups: list[tuple[str, str]] = []
    nears: list[tuple[str, str, float]] = []
    clashes: list[str] = []
    for it in batch:
        if it.id in ids:
            clashes.append(it.id)
            continue
        key = normalize_question(it.question)
        if key in seen:
            dups.append((it.id, seen[key]))
            continue
        if near < 1 and it.id not in accepted and items:
            best = max(items, key=lambda old: similarity(it.question, old.question))
            sim = float(similarity(it.question, best.question))
            if sim >= near:
                nears.append((it.id, best.id, sim))
                continue
        items.append(it)
        added.append(it)
        ids.add(it.id)
        seen[key] = it.id
    unknown = sorted(accepted - {it.id for it in batch})
    if unknown:
        raise ValueError(f"accept names ids that are not in the batch: {', '.join(unknown)}")
    record = VersionRecord(version, date, tuple(i.id for i in added), tuple(d[0] for d in dups),
                           tuple(n[0] for n in nears), tuple(clashes), len(items), content_hash(items), note)
    return MergeResult(items, added, dups, nears, clashes, record, [*history, record])


@dataclass(frozen=True)
class Leak:
    """An item's ``field`` (question or reference) shares the word run ``words`` with the text
    named ``text_name``."""

    item_id: str
    field: str
    text_name: str
    words: str


def _word_runs(text: str, n: int) -> set[tuple[str, ...]]:
    w = normalize_question(text).split()
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def find_leaks(items: Sequence[HandItem | EvalItem], texts: Mapping[str, str], n: int = 6) -> list[Leak]:
    """Items whose question or reference shares a run of ``n`` consecutive words (after
    :func:`normalize_question`) with one of ``texts`` (name -> text the system sees: prompt
    templates, few-shot demonstrations, fine-tuning examples). One leak per item, field and text:
    the first shared run."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n (words in a shared run) must be a whole number >= 2, got {n!r}")
    runs = {name: _word_runs(t, n) for name, t in texts.items()}
    leaks = []
    for it in items:
        for fname in ("question", "reference"):
            text = getattr(it, fname)
            words = normalize_question(text).split()
            for name, r in runs.items():
                hit = next((tuple(words[i:i + n]) for i in range(len(words) - n + 1)
                            if tuple(words[i:i + n]) in r), None)
                if hit is not None:
                    leaks.append(Leak(it.id, fname, name, " ".join(hit)))
    return leaks


def to_eval_set(items: Sequence[HandItem], name: str = "", description: str = "") -> EvalSet:
    """The items as the :class:`~ragworkbook.corpus.eval_set.EvalSet` that ``evaluate`` runs on."""
    return EvalSet([EvalItem(it.id, it.question, it.keyword, it.reference) for it in items], name,
                   description)


def save_hand_set(path: str | os.PathLike[str], items: Sequence[HandItem], history: Sequence[VersionRecord],
                  *, name: str, description: str = "") -> Path:
    """Write the set with its history as JSON (``format``, ``name``, ``description``, ``version``,
    ``history``, ``items``); :func:`ragworkbook.corpus.eval_set.load_eval_set` reads it too."""
    if not history:
        raise ValueError("a saved set needs its history (at least the first merge's record)")
    if history[-1].sha256 != content_hash(items):
        raise ValueError("the items are not the ones the last history record describes (its sha256 differs)")
    doc = {"format": FORMAT, "name": name, "description": description, "version": history[-1].version,
           "history": [r.to_dict() for r in history], "items": [it.to_dict() for it in items]}
    p = Path(path)
    p.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def load_hand_set(path: str | os.PathLike[str]) -> tuple[list[HandItem], list[VersionRecord]]:
    """Read a set written by :func:`save_hand_set`; DatasetError when its items do not match the last
    record's sha256 (edited by hand since the merge) or the file is not such a set."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{p}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DatasetError(f"{p}: not a hand-built eval set (expected \"format\": {FORMAT!r})")
    try:
        items = [HandItem.from_mapping(m) for m in doc["items"]]
        history = [VersionRecord(**{k: tuple(v) if isinstance(v, list) else v for k, v in r.items()})
                   for r in doc["history"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"{p}: {exc}") from None
    if not history or history[-1].sha256 != content_hash(items):
        raise DatasetError(f"{p}: the items do not match the sha256 of the last version record: the file was "
                           "edited after its last merge; add changes through merge_batch")
    return items, history

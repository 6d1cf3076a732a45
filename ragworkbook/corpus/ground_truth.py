"""Keyword-substring ground truth for retrieval, and the diagnostics it needs.

Definition (rag-cookbook's): a chunk is relevant to a question when the
question's keyword occurs in the chunk text, compared case-insensitively
(``keyword.lower() in text.lower()``). Relevance is binary (grade 1).

The rule is cheap and verifiable, and it fails in three visible ways, which
:func:`keyword_diagnostics` reports per question:

- **no match**: the keyword is in no chunk (a typo, different extraction such
  as ``d_model`` vs ``dmodel``, or the fact is missing) -> every metric is 0 or
  undefined for that question;
- **too many**: the keyword is in more than ``too_many`` chunks (a common word
  such as ``dmodel`` used all over the paper) -> relevance no longer means
  "answers the question", and Recall@k is capped at k / |relevant|;
- **split**: the keyword occurs in a page but some occurrence is not wholly
  inside any chunk (cut by a chunk boundary) -> the chunk that states the fact
  is not marked relevant. With the documented windows (400 / 50) a keyword of
  at most ``overlap + 1`` characters can never be split, because consecutive
  windows share ``overlap`` characters (the one exception: a page whose dropped,
  too-short last window starts with a long run of whitespace, so its text reaches
  past the overlap); chunkers without overlap can split it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.corpus.eval_set import EvalItem, EvalSet
from ragworkbook.corpus.pages import Corpus, Page

__all__ = [
    "keyword_qrels",
    "graded_keyword_qrels",
    "keyword_diagnostics",
    "KeywordDiagnostic",
    "find_occurrences",
]

Qrels = dict[str, dict[str, int]]


def _items(eval_set: EvalSet | Iterable[EvalItem] | Mapping[str, str]) -> list[tuple[str, str]]:
    if isinstance(eval_set, Mapping):
        return [(str(k), v) for k, v in eval_set.items()]  # keywords are checked, not stringified
    out = []
    for it in eval_set:
        if not isinstance(it, EvalItem):
            raise TypeError(f"expected EvalItem objects (from load_eval_set), got {type(it).__name__}")
        out.append((it.id, it.keyword))
    return out


def _check_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    if isinstance(chunks, EvalSet) or isinstance(chunks, Mapping):
        raise TypeError("the first argument must be the chunks and the second the eval set: "
                        "keyword_qrels(chunks, eval_set)")
    out = list(chunks)
    for i, c in enumerate(out):
        if not isinstance(c, Chunk):
            raise TypeError(f"chunks[{i}] is a {type(c).__name__}, expected a Chunk (from chunk_pages); "
                            "the call is keyword_qrels(chunks, eval_set)")
    return out


def _check_keyword(qid: str, kw: str) -> None:
    if not isinstance(kw, str) or not kw:
        what = "an empty keyword" if isinstance(kw, str) else f"a keyword that is not a string ({kw!r})"
        raise ValueError(
            f"question {qid!r} has {what}: keyword ground truth needs a non-empty string"
        )


def keyword_qrels(
    chunks: Sequence[Chunk],
    eval_set: EvalSet | Iterable[EvalItem] | Mapping[str, str],
    case_sensitive: bool = False,
) -> Qrels:
    """``{qid: {chunk_id: 1}}``: the chunks whose text contains the question's keyword.

    Case-insensitive by default (``keyword.lower() in chunk.text.lower()``).
    ``eval_set`` may be an :class:`EvalSet`, a list of :class:`EvalItem`, or a
    mapping ``{qid: keyword}``. Every question gets an entry, possibly ``{}``
    (no relevant chunk; see :func:`keyword_diagnostics`). Chunk ids keep the
    chunks' order.
    """
    qrels: Qrels = {}
    texts = [(c.id, c.text if case_sensitive else c.text.lower()) for c in _check_chunks(chunks)]
    for qid, kw in _items(eval_set):
        _check_keyword(qid, kw)
        needle = kw if case_sensitive else kw.lower()
        qrels[qid] = {cid: 1 for cid, t in texts if needle in t}
    return qrels


def graded_keyword_qrels(
    chunks: Sequence[Chunk], keywords: Mapping[str, Sequence[str]], case_sensitive: bool = False
) -> Qrels:
    """Graded relevance from several keywords: grade = how many of the question's keywords the chunk contains.

    ``keywords``: ``{qid: [kw1, kw2, ...]}`` (e.g. the eval keyword plus the
    answer's value, ``["h = 8", "heads"]``). Chunks with grade 0 are left out.
    Use with NDCG's graded gains.
    """
    qrels: Qrels = {}
    chunks = _check_chunks(chunks)
    for qid, kws in keywords.items():
        if isinstance(kws, str):
            raise TypeError(f"keywords[{qid!r}] must be a list of strings, not one string")
        for kw in kws:
            _check_keyword(qid, kw)
        needles = [k if case_sensitive else k.lower() for k in kws]
        rel: dict[str, int] = {}
        for c in chunks:
            t = c.text if case_sensitive else c.text.lower()
            g = sum(1 for n in needles if n in t)
            if g > 0:
                rel[c.id] = g
        qrels[qid] = rel
    return qrels


def find_occurrences(text: str, keyword: str, case_sensitive: bool = False) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence of ``keyword`` in ``text``."""
    if not keyword:
        raise ValueError("keyword must be a non-empty string")
    hay, needle = (text, keyword) if case_sensitive else (text.lower(), keyword.lower())
    out = []
    i = hay.find(needle)
    while i >= 0:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


@dataclass(frozen=True)
class KeywordDiagnostic:
    """What the keyword rule does for one question.

    ``chunk_ids``: the relevant chunks; ``pages``: pages whose text contains the
    keyword; ``split``: ``(page, offset)`` of occurrences not wholly inside
    any chunk; ``status``: ``"ok"``, or a ``+``-joined set of ``"no match"``,
    ``"too many"``, ``"split"``.
    """

    qid: str
    keyword: str
    n_chunks: int
    chunk_ids: list[str]
    pages: list[int]
    split: list[tuple[int, int]] = field(default_factory=list)
    too_many_threshold: int = 5

    @property
    def no_match(self) -> bool:
        """True when the keyword is in no chunk."""
        return self.n_chunks == 0

    @property
    def too_many(self) -> bool:
        """True when the keyword is in more than ``too_many_threshold`` chunks."""
        return self.n_chunks > self.too_many_threshold

    @property
    def is_split(self) -> bool:
        """True when some occurrence of the keyword lies in no single chunk."""
        return bool(self.split)

    @property
    def status(self) -> str:
        """``"ok"`` or the ``+``-joined flags (``"no match"``, ``"too many"``, ``"split"``)."""
        flags = [
            name
            for name, on in (
                ("no match", self.no_match),
                ("too many", self.too_many),
                ("split", self.is_split),
            )
            if on
        ]
        return "+".join(flags) if flags else "ok"


def keyword_diagnostics(
    chunks: Sequence[Chunk],
    eval_set: EvalSet | Iterable[EvalItem] | Mapping[str, str],
    pages: Corpus | Sequence[Page] | None = None,
    too_many: int = 5,
    case_sensitive: bool = False,
) -> list[KeywordDiagnostic]:
    """Per question: how many chunks match, which pages hold the keyword, and split occurrences.

    ``too_many``: a keyword matching more than this many chunks is flagged.
    ``pages``: the pages the chunks were cut from (needed for the split check
    and the ``pages`` list; without it only chunk counts are reported). An
    occurrence at offset ``o`` of page ``p`` is *split* when no chunk of page
    ``p`` has ``chunk.start <= o`` and ``o + len(keyword) <= chunk.end``
    (chunk offsets refer to the original page text, see :class:`Chunk`).
    """
    if isinstance(too_many, bool) or not isinstance(too_many, int) or too_many < 0:
        raise ValueError(f"too_many must be a non-negative int, got {too_many!r}")
    qrels = keyword_qrels(chunks, eval_set, case_sensitive=case_sensitive)
    page_list = list(pages.pages if isinstance(pages, Corpus) else pages) if pages is not None else []
    by_page: dict[int, list[Chunk]] = {}
    for c in chunks:
        by_page.setdefault(c.page, []).append(c)
    out = []
    for qid, kw in _items(eval_set):
        hit_pages: list[int] = []
        split: list[tuple[int, int]] = []
        for p in page_list:
            occ = find_occurrences(p.text, kw, case_sensitive)
            if occ:
                hit_pages.append(p.page)
            for o in occ:
                if not any(c.start <= o and o + len(kw) <= c.end for c in by_page.get(p.page, [])):
                    split.append((p.page, o))
        if not page_list:
            hit_pages = sorted({c.page for c in chunks if c.id in qrels[qid]})
        out.append(
            KeywordDiagnostic(
                qid=qid,
                keyword=kw,
                n_chunks=len(qrels[qid]),
                chunk_ids=list(qrels[qid]),
                pages=hit_pages,
                split=split,
                too_many_threshold=too_many,
            )
        )
    return out

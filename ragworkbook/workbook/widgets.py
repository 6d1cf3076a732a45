"""Small ipywidgets for playing with retrieval metrics in a notebook.

- :func:`k_slider`: move k and watch Precision@k, Recall@k, Hit Rate@k and NDCG@k.
- :class:`RankingEditor` / :func:`reorder_ranking`: move documents up and down a
  ranking and watch DCG, IDCG and NDCG change.

The numbers shown come from the batch kernels of the metric registry
(:func:`ragworkbook.metrics.batch.score_ranking`); the pure functions
:func:`metrics_at_k` and :func:`ndcg_breakdown` compute them so they can be
tested (and printed) without a browser.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ipywidgets

from ragworkbook.metrics import retrieval as rm
from ragworkbook.metrics.batch import score_ranking
from ragworkbook.metrics.registry import Metric, get_spec, parse_metric

__all__ = ["metrics_at_k", "ndcg_breakdown", "k_slider", "RankingEditor", "reorder_ranking"]


def metrics_at_k(ranking: Sequence[Hashable], relevance: Mapping[Hashable, float], k: int,
                 gain: str = "linear",
                 metrics: Sequence[str | Metric] = ("precision", "recall", "hit_rate", "ndcg")
                 ) -> dict[str, float]:
    """``metrics`` (registry names or :class:`Metric` objects taking a cutoff; default Precision,
    Recall, Hit Rate and NDCG) of one ranking at cutoff ``k``, as ``{"precision@3": ..., ...}``,
    computed by the batch kernels; a metric's other parameters are kept."""
    return score_ranking(ranking, relevance, [_at_k(m, k) for m in metrics], gain=gain)


def _at_k(metric: str | Metric, k: int) -> Metric:
    """``metric`` at cutoff ``k`` (a bare ``"precision"`` is accepted though its cutoff is required)."""
    if not isinstance(metric, Metric):
        try:
            metric = parse_metric(metric, "retrieval")
        except ValueError:
            metric = get_spec(metric).bind(k=k)
    return metric.spec.bind(**{**metric.kwargs, "k": k})


def ndcg_breakdown(ranking: Sequence[Hashable], relevance: Mapping[Hashable, float], k: int | None = None,
                   gain: str = "linear") -> dict[str, float]:
    """DCG@k, IDCG@k (the DCG@k of the ideal order of every judged document) and NDCG@k of a
    ranking (``k=None``: the whole ranking)."""
    k = len(ranking) if k is None else k
    ideal = sorted(relevance, key=lambda d: relevance[d], reverse=True)
    dcg = score_ranking(ranking, relevance, f"dcg@{k}", gain=gain)[f"dcg@{k}"]
    idcg = score_ranking(ideal, relevance, f"dcg@{k}", gain=gain)[f"dcg@{k}"] if ideal else 0.0
    ndcg = score_ranking(ranking, relevance, f"ndcg@{k}", gain=gain)[f"ndcg@{k}"]
    return {"dcg": dcg, "idcg": idcg, "ndcg": ndcg}


def _ranking_html(ranking: Sequence[Hashable], relevance: Mapping[Hashable, float], k: int | None) -> str:
    rows = []
    for i, doc in enumerate(ranking, start=1):
        grade = relevance.get(doc, 0)
        style = "font-weight:bold" if grade > 0 else "color:#888"
        cut = "" if k is None or i != k else "<tr><td colspan=3><hr style='margin:2px'></td></tr>"
        cells = f"<td>{i}</td><td>{html.escape(str(doc))}</td><td>{grade}</td>"
        rows.append(f"<tr style='{style}'>{cells}</tr>{cut}")
    return "<table><tr><th>rank</th><th>doc</th><th>grade</th></tr>" + "".join(rows) + "</table>"


def k_slider(ranking: Sequence[Hashable], relevance: Mapping[Hashable, float] | Sequence[Hashable],
             max_k: int | None = None, gain: str = "linear", value: int = 3) -> ipywidgets.VBox:
    """A slider over k showing P@k, Recall@k, Hit Rate@k and NDCG@k (an ipywidgets VBox)."""
    import ipywidgets as widgets

    rel = relevance if isinstance(relevance, Mapping) else {d: 1 for d in relevance}
    rm.check_gain(gain)
    max_k = max_k or max(len(ranking), 1)
    slider = widgets.IntSlider(value=min(value, max_k), min=1, max=max_k, description="k")
    out = widgets.HTML()

    def update(change=None):
        k = slider.value
        vals = metrics_at_k(ranking, rel, k, gain)
        cells = "".join(f"<td style='padding:0 1em'>{name} = {v:.3f}</td>" for name, v in vals.items())
        out.value = f"<table><tr>{cells}</tr></table>" + _ranking_html(ranking, rel, k)

    slider.observe(update, names="value")
    update()
    box = widgets.VBox([slider, out])
    _with_picture(box, lambda: f"<p><b>k = {slider.value}</b> (slider from {slider.min} to {slider.max})</p>"
                               + out.value)
    return box


_PICTURE_NOTE = ("<p style='color:#777;font-size:90%'>A picture of the widget as it was saved: run the "
                 "cell to use it.</p>")


def _with_picture(box: ipywidgets.Box, html_of: Callable[[], str]) -> None:
    """Give a widget box a static picture of itself: an HTML rendering of its current state beside the
    widget view in what it displays. JupyterLab shows the widget when it can (a running kernel, or a
    trusted notebook with its saved state loaded) and the picture otherwise, where it would show the
    widget's text repr."""
    def bundle(**kwargs: object) -> dict[str, str]:
        data = type(box)._repr_mimebundle_(box, **kwargs)
        data["text/html"] = html_of() + _PICTURE_NOTE
        return data

    box._repr_mimebundle_ = bundle


class RankingEditor:
    """A ranking you can reorder (select a document, press ↑ or ↓) while DCG, IDCG
    and NDCG are recomputed. ``.widget`` is the ipywidgets box to display;
    ``.order`` the current ranking; ``.move(i, delta)`` moves programmatically."""

    def __init__(self, ranking: Sequence[Hashable], relevance: Mapping[Hashable, float], k: int | None = None,
                 gain: str = "linear"):
        import ipywidgets as widgets

        rm.check_gain(gain)
        self.order = list(ranking)
        self.relevance = dict(relevance)
        self.k = k
        self.gain = gain
        self.select = widgets.Select(rows=max(len(self.order), 2), description="ranking")
        self.up = widgets.Button(description="↑ up")
        self.down = widgets.Button(description="↓ down")
        self.out = widgets.HTML()
        self.up.on_click(lambda _: self.move(self.select.index, -1))
        self.down.on_click(lambda _: self.move(self.select.index, +1))
        buttons = widgets.VBox([self.up, self.down])
        self.widget = widgets.VBox([widgets.HBox([self.select, buttons]), self.out])
        self._refresh(0)
        _with_picture(self.widget, self._picture)

    def _picture(self) -> str:
        items = "".join(f"<li>{html.escape(d)} (grade {self.relevance.get(d, 0)})</li>" for d in self.order)
        return f"<ol>{items}</ol><p>{self.out.value}</p>"

    @property
    def scores(self) -> dict[str, float]:
        """DCG, IDCG and NDCG of the current order."""
        return ndcg_breakdown(self.order, self.relevance, self.k, self.gain)

    def move(self, index: int | None, delta: int) -> None:
        """Move the document at ``index`` by ``delta`` positions (clamped to the list)."""
        if index is None:
            return
        new = min(max(index + delta, 0), len(self.order) - 1)
        doc = self.order.pop(index)
        self.order.insert(new, doc)
        self._refresh(new)

    def _refresh(self, selected: int) -> None:
        labels = [f"{i}. {d}  (grade {self.relevance.get(d, 0)})" for i, d in enumerate(self.order, 1)]
        self.select.options = list(zip(labels, range(len(labels)), strict=True))
        self.select.index = selected if self.order else None
        s = self.scores
        k = "" if self.k is None else f"@{self.k}"
        self.out.value = (f"DCG{k} = {s['dcg']:.3f} &nbsp; IDCG{k} = {s['idcg']:.3f} &nbsp; "
                          f"<b>NDCG{k} = {s['ndcg']:.3f}</b> ({self.gain} gain)")


def reorder_ranking(ranking: Sequence[Hashable], relevance: Mapping[Hashable, float], k: int | None = None,
                    gain: str = "linear") -> ipywidgets.Box:
    """The :class:`RankingEditor` widget box for ``ranking`` (display it in a notebook)."""
    return RankingEditor(ranking, relevance, k, gain).widget

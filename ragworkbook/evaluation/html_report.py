"""A saved report as one self-contained HTML page a team can read: ``ragworkbook report FILE --html OUT``.

The page needs nothing but a browser: the CSS is inline, the plots are inline SVG, there is no
script, no font, no image and no link to fetch. It shows, from the report alone:

- how the run was made (system, judge, eval set, questions, complete or not);
- every metric's mean with its 95% bootstrap interval (drawn on the metric's scale), the number
  of values scored, failed and undefined, and why values are missing;
- for a judged metric, the judge's card: its agreement with human labels (Cohen's kappa with
  its interval, pairwise accuracy against the data set's baseline) when ``judge-check`` measured
  it, else "unmeasured", and whether the package trusts it
  (:func:`ragworkbook.judging.reliability.trusted`);
- the judge's ledger: per metric, requests, model calls, failures, cache hits, tokens and seconds
  (:mod:`ragworkbook.judging.ledger`);
- one row per question: its values (or ``failed``/``undefined`` with the reason), and in a
  fold the question, answer, reference and contexts.

Every text of the report is escaped (:func:`html.escape`): an answer holding markup shows it as
text. The page is written atomically (:func:`ragworkbook._io.atomic_write_text`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from html import escape
from pathlib import Path

from ragworkbook._io import atomic_write_text
from ragworkbook._types import JSON, JSONObject
from ragworkbook.evaluation.report import Report

__all__ = ["render_html", "write_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:72rem;
 padding:0 1rem;color:#1d2330;background:#fff;line-height:1.4}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d6dae3;
 padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{padding:.3rem .6rem;border-bottom:1px solid #e6e9ef;text-align:left;vertical-align:top}
th{background:#f3f5f9;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.meta{color:#4a5263;font-size:.9rem}.meta span{margin-right:1.2rem}
.bad{color:#a1260d}.warn{color:#8a5a00}.ok{color:#216e39}.muted{color:#7a8191}
.tag{display:inline-block;padding:0 .4rem;border-radius:.6rem;font-size:.8rem;background:#eef0f5}
.tag.failed{background:#fde4df;color:#a1260d}.tag.undefined{background:#fff1cf;color:#8a5a00}
details{margin:.1rem 0}summary{cursor:pointer;color:#2f4a8a}
.qtext{white-space:pre-wrap;max-width:60rem;font-size:.85rem;background:#f8f9fb;padding:.3rem .5rem;
 border-left:3px solid #d6dae3;margin:.2rem 0}
svg text{font-size:10px;fill:#4a5263}
""".strip()


def _fmt(x: JSON, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return escape(str(x))


def _scale(report: Report, metric: str) -> tuple[float, float]:
    """The range a metric's interval is drawn on: the registry's scale; where it is unbounded, the
    values' range (0 included when the scale starts there)."""
    lo, hi = -math.inf, math.inf
    try:
        from ragworkbook.metrics.registry import parse_metric

        lo, hi = (float(v) for v in parse_metric(metric).spec.scale)
    except (ValueError, TypeError, AttributeError):
        pass
    if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
        return lo, hi
    vals = [v for v in report.values(metric) if v is not None] or [0.0, 1.0]
    a = lo if math.isfinite(lo) else min(vals)
    b = hi if math.isfinite(hi) else max(vals)
    return (a, b) if b > a else (a - 0.5, b + 0.5)


def _interval_svg(mean: float, low: float, high: float, lo: float, hi: float) -> str:
    """A small inline SVG: the scale as a line, the interval as a bar, the mean as a dot."""
    width, pad = 180, 6

    def x(v: float) -> float:
        v = min(max(v, lo), hi)
        return pad + (v - lo) / (hi - lo) * (width - 2 * pad)

    if any(v is None or math.isnan(v) for v in (mean, low, high)):
        return ('<svg width="180" height="22" role="img" aria-label="no value"><line x1="6" y1="11" x2="174" '
                'y2="11" stroke="#d6dae3"/></svg>')
    return (f'<svg width="{width}" height="22" role="img" aria-label="mean {mean:.3f}, 95% interval '
            f'{low:.3f} to {high:.3f} on {lo:g} to {hi:g}">'
            f'<line x1="{pad}" y1="11" x2="{width - pad}" y2="11" stroke="#d6dae3" stroke-width="2"/>'
            f'<rect x="{x(low):.1f}" y="6" width="{max(x(high) - x(low), 1.5):.1f}" height="10" rx="2" '
            f'fill="#9db4e8"/><circle cx="{x(mean):.1f}" cy="11" r="4" fill="#2f4a8a"/>'
            f'<text x="{pad}" y="21" text-anchor="start">{lo:g}</text>'
            f'<text x="{width - pad}" y="21" text-anchor="end">{hi:g}</text></svg>')


def _meta(report: Report) -> str:
    m = report.meta
    system = f"{m.get('backend')}:{m.get('model')}" if m.get("backend") else (
        f"answers from {m.get('source')}" if m.get("source") else "")
    complete = {True: "yes", False: "no"}.get(m.get("complete"))
    parts = [("questions", len(report.rows)), ("system", system), ("retriever", m.get("retriever")),
             ("k", m.get("k")), ("eval set", m.get("eval_set")), ("judge", m.get("judge")),
             ("complete", complete)]
    out = [f"<span><b>{escape(k)}</b>: {escape(str(v))}</span>" for k, v in parts
           if v not in (None, "")]
    notes = [m[k] for k in ("stopped", "judge_stopped") if m.get(k)]
    html = f'<p class="meta">{"".join(out)}</p>'
    if notes:
        html += "".join(f'<p class="bad">{escape(str(n))}</p>' for n in notes)
    return html


def _unscored_counts(report: Report, metric: str) -> str:
    counts: dict[str, int] = {}
    for why in report.unscored(metric).values():
        key = f"{why.outcome} ({why.reason})"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {escape(k)}" for k, n in counts.items())


def _scores(report: Report) -> str:
    rows = []
    for m, a in report.aggregates.items():
        lo, hi = _scale(report, m)
        ci = f"[{a.ci_low:.3f}, {a.ci_high:.3f}]" if a.n else "–"
        rows.append(f"<tr><td>{escape(m)}</td><td class=\"num\">{_fmt(a.mean)}</td>"
                    f"<td class=\"num\">{ci}</td>"
                    f"<td>{_interval_svg(a.mean, a.ci_low, a.ci_high, lo, hi)}</td>"
                    f"<td class=\"num\">{a.n}</td>"
                    f"<td class=\"num{' bad' if a.failed else ''}\">{a.failed}</td>"
                    f"<td class=\"num{' warn' if a.undefined else ''}\">{a.undefined}</td>"
                    f"<td class=\"muted\">{_unscored_counts(report, m)}</td></tr>")
    return ("<h2>Scores</h2><p class=\"muted\">Mean over the questions scored, with its 95% bootstrap "
            "interval; failed and undefined values are counted, never averaged in.</p>"
            "<table id=\"scores\"><tr><th>metric</th><th>mean</th><th>95% interval</th><th>on the metric's "
            "scale</th><th>n</th><th>failed</th><th>undefined</th><th>why not scored</th></tr>"
            + "".join(rows) + "</table>")


def _judge_cards(report: Report) -> str:
    from ragworkbook.judging.reliability import describe, trusted

    rows = []
    for m in report.metrics:
        card = report.reliability(m)
        if card is None:
            continue
        ok, why = trusted(card)
        status = card.get("status", "unmeasured")
        base = card.get("baseline") or {}
        diff = (base.get("difference") or {}) if isinstance(base, Mapping) else {}
        base_text = ""
        if base:
            base_text = f"{escape(str(base.get('name')))}"
            if diff.get("value") is not None:
                base_text += f": judge − baseline {diff['value']:+.3f}"
                if diff.get("low") is not None:
                    base_text += f" [{diff['low']:+.3f}, {diff['high']:+.3f}]"
            if base.get("verdict"):
                base_text += f" ({escape(str(base['verdict']))})"
        verdict = ('<span class="ok">trusted</span>' if ok
                   else f'<span class="warn">not rated</span>: {escape(why)}')
        rows.append(f"<tr><td>{escape(m)}</td><td>{escape(status)}</td><td>{escape(describe(card))}</td>"
                    f"<td>{base_text or '–'}</td><td>{verdict}</td></tr>")
    if not rows:
        return ""
    return ("<h2>The judge</h2><p class=\"muted\">Agreement of the judge with human labels, where "
            "<code>ragworkbook judge-check</code> measured it on labelled data, and against the data set's "
            "baseline.</p><table id=\"judge\"><tr><th>metric</th><th>card</th><th>agreement with humans</th>"
            "<th>baseline</th><th>verdict</th></tr>" + "".join(rows) + "</table>")


def _ledger(report: Report) -> str:
    stored = report.meta.get("judge_ledger")
    if not stored:
        return ""
    from ragworkbook.judging.ledger import Ledger

    led = Ledger.from_dict(stored)
    rows = []
    for name, c in [*led.costs.items(), ("total", led.total)]:
        if name in led.derived:
            rows.append(f"<tr><td>{escape(name)}</td><td colspan=\"7\" class=\"muted\">from the judgments of "
                        f"{escape(led.derived[name])} (no calls of its own)</td></tr>")
            continue
        tok = (f" <span class=\"muted\">({c.tokens_unreported} not reported)</span>"
               if c.tokens_unreported else "")
        unknown = c.requests and c.tokens_unreported == c.requests
        cells = [c.requests, c.calls, c.failed, c.cache_hits]
        tag = "th" if name == "total" else "td"
        rows.append(f"<tr><{tag}>{escape(name)}</{tag}>"
                    + "".join(f"<td class=\"num\">{v}</td>" for v in cells)
                    + f"<td class=\"num\">{'–' if unknown else c.prompt_tokens}</td>"
                    f"<td class=\"num\">{'–' if unknown else c.completion_tokens}{tok}</td>"
                    f"<td class=\"num\">{c.seconds:.1f}</td></tr>")
    mode = {"replay": "replayed: the counts recorded when the answers were made"}.get(led.mode, led.mode)
    return ("<h2>What the judging cost</h2><p class=\"muted\">"
            f"{escape(str(report.meta.get('judge', '')))} ({escape(mode)}). Tokens are the backend's own "
            "counts; a cache hit costs no call, token or second; seconds are the sum of each request's wall "
            "time (concurrent requests overlap).</p><table id=\"ledger\"><tr><th>metric</th>"
            "<th>requests</th><th>model calls</th><th>failed</th><th>cache hits</th><th>prompt tokens</th>"
            "<th>completion tokens</th><th>seconds</th></tr>" + "".join(rows) + "</table>")


def _cell(row: JSONObject, metric: str) -> str:
    v = row.get("metrics", {}).get(metric)
    if v is not None:
        return f"<td class=\"num\">{_fmt(float(v))}</td>"
    why = (row.get("unscored") or {}).get(metric) or {"outcome": "failed", "reason": "missing"}
    title = escape(str(why.get("message", "")), quote=True)
    return (f"<td><span class=\"tag {escape(str(why.get('outcome')))}\" title=\"{title}\">"
            f"{escape(str(why.get('outcome')))}: {escape(str(why.get('reason')))}</span></td>")


def _fold(row: JSONObject) -> str:
    parts = [(k, row.get(k)) for k in ("question", "answer", "reference")]
    body = "".join(f"<div><b>{k}</b><div class=\"qtext\">{escape(str(v))}</div></div>"
                   for k, v in parts if v not in (None, ""))
    for i, ctx in enumerate(row.get("contexts") or [], start=1):
        ids = row.get("context_ids") or []
        cid = f" ({escape(str(ids[i - 1]))})" if i <= len(ids) and ids[i - 1] else ""
        body += f"<div><b>context {i}</b>{cid}<div class=\"qtext\">{escape(str(ctx))}</div></div>"
    if row.get("error"):
        body += f"<p class=\"bad\">{escape(str(row['error'].get('message', '')))}</p>"
    question = str(row.get("question", ""))
    short = question if len(question) <= 90 else question[:87] + "..."
    return f"<details><summary>{escape(short)}</summary>{body}</details>"


def _rows(report: Report) -> str:
    head = "".join(f"<th>{escape(m)}</th>" for m in report.metrics)
    rows = "".join(f"<tr><td>{escape(str(r['id']))}</td><td>{_fold(r)}</td>"
                   + "".join(_cell(r, m) for m in report.metrics) + "</tr>" for r in report.rows)
    return (f"<h2>Per question</h2><table id=\"rows\"><tr><th>id</th><th>question</th>{head}</tr>{rows}"
            "</table>")


def render_html(report: Report, *, title: str | None = None, source: str = "") -> str:
    """The page of ``report`` (a :class:`~ragworkbook.evaluation.report.Report`) as HTML text."""
    name = title or report.meta.get("name") or source or "ragworkbook report"
    sub = f'<p class="muted">from {escape(source)}</p>' if source else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(str(name))}</title><style>{_CSS}</style></head><body>"
            f"<h1>{escape(str(name))}</h1>{sub}{_meta(report)}{_scores(report)}{_judge_cards(report)}"
            f"{_ledger(report)}{_rows(report)}"
            "<p class=\"muted\">Made by ragworkbook from a saved report; nothing on this page is fetched.</p>"
            "</body></html>\n")


def write_html(report: Report, path: str | os.PathLike[str], *, title: str | None = None,
               source: str = "") -> Path:
    """Write the page of ``report`` to ``path`` atomically (a reader never sees half a page)."""
    return atomic_write_text(path, render_html(report, title=title, source=source))

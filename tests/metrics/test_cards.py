"""Metric cards and the README's metric table come from the registry."""

from __future__ import annotations

from pathlib import Path

from ragworkbook.cli import main
from ragworkbook.metrics.cards import README_BEGIN, README_END, card, cards, markdown_table
from ragworkbook.metrics.registry import specs

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_holds_the_table_the_registry_gives():
    text = README.read_text(encoding="utf-8")
    assert README_BEGIN in text and README_END in text, "the README lost the fences of its metric table"
    inside = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip("\n")
    assert inside == markdown_table(), ("README.md's metric table differs from the registry: replace the "
                                        "lines between its fences with `ragworkbook metrics --markdown`")


def test_the_table_has_one_row_per_metric():
    rows = markdown_table().splitlines()[2:]
    assert len(rows) == len(specs())
    assert rows[0].startswith("| `precision@k` | retrieval | relevant documents among the first k")
    assert any(r.startswith("| `ndcg[@k]` | retrieval |") and "`gain`=linear" in r for r in rows)


def test_a_card_says_definition_parameters_and_conventions():
    text = card("err")
    assert text.splitlines()[0] == "err[@k]  (retrieval) - ERR@k"
    assert "parameter max_grade (number, max_grade > 0, default 4, run-wide --max-grade)" in text
    assert "conventions: higher is better; range 0 to 1; reads graded relevance" in text
    faith = card("faithfulness")
    assert "judge measured by: ragworkbook judge-check --dataset wikieval-faithfulness" in faith
    assert "target (strict): Faithfulness acceptable 0.8 to 0.95" in faith
    assert "computed from the faithfulness judgments" in card("hallucination_rate")
    assert "lower is better" in card("hallucination")


def test_the_metrics_command_prints_every_card(capsys):
    assert main(["metrics"]) == 0
    assert capsys.readouterr().out == cards() + "\n"
    assert main(["metrics", "--family", "generation"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bleu  (generation) - BLEU") and "ndcg" not in out
    assert main(["metrics", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown_table() + "\n"

"""Rubric metrics (issue 32): a judged metric declared as data, validated like any spec, computed by
``eval`` (``--rubric FILE``), charged in the ledger, and measured by ``judge-check --labels FILE``."""

from __future__ import annotations

import json
import re
import threading

import pytest
from fakes.judges import first_prompt, prompt_fields

from ragworkbook import cli
from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report
from ragworkbook.judging.judge import Judge, run_sync
from ragworkbook.judging.labels import label_check, read_labels
from ragworkbook.judging.results import JudgeSample
from ragworkbook.judging.rubric import (
    Rubric,
    load_rubric,
    register_rubric,
    rubric_metric,
    rubric_prompt,
    rubric_schema,
)
from ragworkbook.llm.base import Generator
from ragworkbook.metrics.registry import REGISTRY, parse_metric, registered, unregister

CITES = Rubric("cites_sources", "how well the answer cites its sources with bracketed numbers like [1]",
               scale=(1, 5), evidence=("question", "contexts", "answer"),
               steps=("Find each claim of the answer.", "Check whether it carries a citation [n].",
                      "Score 5 when every claim is cited, 1 when none is."))


class CitationJudge(Generator):
    """A fake judge for the citation rubric: 1 + the number of [n] citations in the answer (at most 5).
    It reads only the Answer field of the prompt and the scale from the schema."""

    backend = "fake"

    def __init__(self, model: str = "citation-judge"):
        super().__init__(model)
        self.calls = 0
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def _chat_once(self, messages, options, schema):
        with self.lock:
            self.calls += 1
            self.prompts.append(first_prompt(messages))
        assert set(schema["required"]) == {"score", "reason"}
        answer = prompt_fields(first_prompt(messages))["answer"]
        scale = schema["properties"]["score"]["enum"]
        score = min(scale[-1], scale[0] + len(re.findall(r"\[\d+\]", answer)))
        return json.dumps({"score": score, "reason": "counted the citations"})


@pytest.fixture()
def clean_registry():
    """Whatever a test registers under the rubric's name is removed afterwards."""
    yield
    if CITES.name in REGISTRY:
        unregister(CITES.name)


CTX = ["[1] Canada introduced carbon contracts for difference in 2023.",
       "[2] They guarantee a carbon price to heavy industry."]
RECORDS = [
    {"id": "q1", "question": "What did Canada introduce?", "contexts": CTX,
     "answer": "Carbon contracts for difference [1]. They guarantee a price [2].", "reference": "CCfDs."},
    {"id": "q2", "question": "What did Canada introduce?", "contexts": CTX,
     "answer": "Carbon contracts for difference [1].", "reference": "CCfDs."},
    {"id": "q3", "question": "What did Canada introduce?", "contexts": CTX,
     "answer": "Carbon contracts for difference.", "reference": "CCfDs."},
]


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _rubric_file(tmp_path, rubric=CITES):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(rubric.to_dict()), encoding="utf-8")
    return path


# --- the declaration -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, message", [
    ({"name": "Cites Sources"}, "lower-case letters"),
    ({"criterion": "  "}, "criterion is empty"),
    ({"scale": (5, 1)}, "low < high"),
    ({"scale": (1.5, 5)}, "two whole numbers"),
    ({"evidence": ("question", "sources")}, "is not a non-empty list"),
    ({"evidence": ("question", "reference")}, "must include the answer or the contexts"),
    ({"steps": ("",)}, "non-empty strings"),
])
def test_a_bad_rubric_is_refused_naming_the_field(kw, message):
    fields = {"name": "cites_sources", "criterion": "cites its sources", **kw}
    with pytest.raises(ValueError, match=message):
        Rubric(**fields)


def test_its_spec_conforms_like_any_registered_metric(clean_registry):
    from metrics.test_conformance import signature_problems

    spec = rubric_metric(CITES)
    assert spec.family == "judged" and spec.needs == frozenset({"judge", "contexts"})
    assert signature_problems(spec, spec.implementation) == []
    with registered(spec):
        m = parse_metric("cites_sources")
        assert m.spec is spec and m.key == "cites_sources"
        assert main(["metrics", "cites_sources"]) == 0
    assert rubric_metric("ok", "fine", evidence=("answer", "reference")).needs == frozenset(
        {"judge", "reference"})


def test_the_prompt_shows_criterion_steps_scale_and_only_the_evidence_asked_for():
    s = JudgeSample(question="Q?", answer="A [1].", contexts=["c one", "c two"], reference="REF",
                    sample_id="x")
    p = rubric_prompt(CITES, s)
    assert CITES.criterion in p and "from 1 (does not meet" in p and "1. Find each claim" in p
    assert "REF" not in p  # the reference is not among its evidence
    assert p.index("Question: Q?") < p.index("Context:\n[1] c one\n[2] c two") < p.index("Answer: A [1].")
    schema = rubric_schema(CITES)
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]


def test_scores_are_normalised_and_missing_evidence_is_undefined():
    spec = rubric_metric(CITES)
    judge = Judge(CitationJudge())
    got = []
    for rec in RECORDS + [{**RECORDS[0], "id": "q4", "contexts": []}]:
        s = JudgeSample(question=rec["question"], answer=rec["answer"], contexts=rec["contexts"],
                        sample_id=rec["id"])
        got.append(run_sync(spec.implementation(s, judge)))
    assert [r.score for r in got[:3]] == [0.5, 0.25, 0.0]  # ratings 3, 2, 1 on 1..5
    assert [r.detail["rating"] for r in got[:3]] == [3, 2, 1]
    assert got[3].outcome == "undefined" and got[3].reason == "empty_context"


def test_load_rubric_names_the_file_and_field(tmp_path):
    path = _rubric_file(tmp_path)
    assert load_rubric(path) == CITES
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "criterion": "y", "scael": [1, 5]}))
    with pytest.raises(ValueError, match=r"bad.json: unknown field 'scael'"):
        load_rubric(bad)
    bad.write_text(json.dumps({"name": "x", "criterion": "y", "scale": [1, 1]}))
    with pytest.raises(ValueError, match=r"bad.json: rubric 'x': scale"):
        load_rubric(bad)


def test_registering_twice_is_a_no_op_and_another_metric_under_its_name_refused(clean_registry):
    a = register_rubric(CITES)
    assert register_rubric(CITES) is a
    with pytest.raises(ValueError, match="already registered"):
        register_rubric(Rubric("cites_sources", "something else"))
    with pytest.raises(ValueError, match="already registered"):
        register_rubric(Rubric("faithfulness", "a rubric shadowing a built-in"))


# --- computed by eval ------------------------------------------------------------------------------------
def test_eval_computes_a_rubric_from_a_file_and_charges_its_calls(tmp_path, capsys, monkeypatch,
                                                                   clean_registry):
    fake = CitationJudge()
    monkeypatch.setattr(cli._common, "generator", lambda args, announce: fake)
    out = tmp_path / "report.json"
    argv = ["eval", "--answers", str(_write_jsonl(tmp_path / "a.jsonl", RECORDS)), "--judge",
            "--rubric", str(_rubric_file(tmp_path)), "--metric", "token_f1", "--no-progress",
            "--out", str(out)]
    assert main(argv) == 0
    assert "cites_sources" in capsys.readouterr().out
    rep = Report.load(out)
    assert rep.metrics == ["token_f1", "cites_sources"]
    assert [r["metrics"]["cites_sources"] for r in rep.rows] == [0.5, 0.25, 0.0]
    assert rep.summary().loc["cites_sources", "mean"] == pytest.approx(0.25)
    cost = rep.meta["judge_ledger"]["metrics"]["cites_sources"]  # the ledger charges the rubric its calls
    assert cost["requests"] == fake.calls == 3


def test_eval_rubric_needs_the_judge(tmp_path, capsys, clean_registry):
    argv = ["eval", "--answers", str(_write_jsonl(tmp_path / "a.jsonl", RECORDS)), "--rubric",
            str(_rubric_file(tmp_path)), "--no-progress"]
    assert main(argv) == 2
    assert "--rubric defines a judged metric: add --judge" in capsys.readouterr().err


# --- measured by judge-check --labels --------------------------------------------------------------------
def _labelled(tmp_path):
    """Eight answers with one to five citations and a person's 1-5 label of each: the judge's rating
    equals the label on six, is one off on two."""
    answers = ["Carbon contracts for difference.", "Contracts [1].", "Carbon prices [1] [2].",
               "Difference contracts, guaranteed [1] [2] [1].", "Carbon [1] [2] [1] [2].",
               "Carbon contracts.", "A guarantee [2].", "Contracts for difference [1] [2]."]
    labels = [1, 2, 3, 4, 5, 2, 2, 4]
    recs = [{"id": f"i{i}", "question": "What did Canada introduce?", "answer": a, "contexts": CTX,
             "reference": "Carbon contracts for difference.", "label": y}
            for i, (a, y) in enumerate(zip(answers, labels, strict=True))]
    return _write_jsonl(tmp_path / "labels.jsonl", recs), labels


def test_judge_check_labels_reports_agreement_beside_the_baseline(tmp_path, capsys, monkeypatch,
                                                                  clean_registry):
    path, labels = _labelled(tmp_path)
    monkeypatch.setattr(cli._common, "generator", lambda args, announce: CitationJudge())
    out = tmp_path / "check.json"
    argv = ["judge-check", "--labels", str(path), "--rubric", str(_rubric_file(tmp_path)), "--json",
            "--out", str(out)]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(out.read_text())
    assert doc["metric"] == "cites_sources" and doc["n"] == 8 and doc["failures"] == 0
    ratings = [it["rating"] for it in doc["items"]]
    assert ratings == [1, 2, 3, 4, 5, 1, 2, 3]
    assert doc["exact_agreement"]["value"] == pytest.approx(6 / 8)
    from scipy.stats import spearmanr

    assert doc["spearman"]["value"] == pytest.approx(spearmanr(ratings, labels).statistic)
    assert doc["spearman"]["low"] <= doc["spearman"]["value"] <= doc["spearman"]["high"]
    assert doc["kappa"]["value"] is not None
    base = doc["baseline"]
    assert base["name"] == "token F1"  # every record has a reference
    assert base["verdict"] in ("better", "worse", "not shown different")
    assert base["spearman"]["value"] < doc["spearman"]["value"]
    # the text report says the same
    assert main(argv[:-3] + ["--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "Spearman correlation with the labels: 0." in text and "baseline, token F1" in text


def test_judge_check_labels_measures_a_built_in_metric_too(tmp_path, capsys):
    path, _ = _labelled(tmp_path)
    assert main(["judge-check", "--labels", str(path), "--metric", "word_support", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["metric"] == "word_support" and doc["judge"] == "none" and "exact_agreement" not in doc


def test_a_bad_label_file_names_the_line_and_field(tmp_path, capsys):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "q", "answer": "x", "label": 1}) + "\n"
                    + json.dumps({"id": "b", "question": "q", "answer": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"l.jsonl:2: missing field 'label'"):
        read_labels(path)
    csv = tmp_path / "l.csv"
    csv.write_text('id,question,answer,contexts,label\na,q,x,"[""c1"", ""c2""]",3\nb,q,y,one text,high\n')
    with pytest.raises(ValueError, match=r"l.csv:3: label must be a number"):
        read_labels(csv)
    csv.write_text('id,question,answer,contexts,label\na,q,x,"[""c1"", ""c2""]",3\n')
    (item,) = read_labels(csv)
    assert item.sample.contexts == ["c1", "c2"] and item.label == 3.0
    assert main(["judge-check", "--labels", str(path)]) == 2
    assert "--metric NAME, or one --rubric FILE" in capsys.readouterr().err


def test_label_check_on_too_few_items_says_so(clean_registry):
    from ragworkbook.judging.labels import LabelledItem

    spec = register_rubric(CITES)
    items = [LabelledItem(JudgeSample(question="q", answer=r["answer"], contexts=CTX, sample_id=r["id"]), y)
             for r, y in zip(RECORDS, [3, 2, 1], strict=True)]
    res = label_check(items, Judge(CitationJudge()), spec.name)
    assert res.stats["spearman"].too_few and res.stats["baseline"]["verdict"] == "too few"
    assert "too few" in res.format()

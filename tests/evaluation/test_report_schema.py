"""``ragworkbook schema report``: the JSON Schema of the report file, which every report the package saves
validates against (given outputs, a pipeline run with a failed question, a judged run with its card and
ledger), and which refuses what is not a report."""

from __future__ import annotations

import json

from fakes.judges import CARBON, RuleJudge

from ragworkbook.cli import main
from ragworkbook.evaluation.outputs import evaluate_outputs


def _report(tmp_path):
    records = [{"id": "carbon", "question": CARBON.question, "answer": CARBON.answer,
                "contexts": CARBON.contexts, "reference": CARBON.reference},
               {"id": "no-ref", "question": "What does the EU tax?", "answer": "Imports.",
                "contexts": [CARBON.contexts[0]]}]
    card = {"status": "measured", "judge": "fake:rule-judge", "model": "rule-judge", "metric": "faithfulness",
            "dataset": "wikieval-faithfulness", "n": 50, "n_pairs": 50}
    report = evaluate_outputs(records, judge=RuleJudge(), metrics=["faithfulness", "hallucination",
                                                                   "context_recall", "token_f1"],
                              progress=False, judge_reliability=card, name="carbon run")
    return report.save(tmp_path / "report.json")


def test_every_saved_report_validates_against_the_report_schema(tmp_path, capsys):
    from jsonschema import Draft202012Validator

    from ragworkbook.schemas import load_schema, schema_text

    schema = load_schema("report")
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    doc = json.loads(_report(tmp_path).read_text(encoding="utf-8"))
    assert not list(validator.iter_errors(doc))
    record = {"question": "q?", "answer": "a", "contexts": ["a"], "keyword": "a", "reference": "a"}
    plain = evaluate_outputs([record], metrics=["precision@1", "token_f1"], progress=False).to_dict()
    assert not list(validator.iter_errors(json.loads(json.dumps(plain))))
    # a pipeline run: settings, a question whose answer failed (its row error), rankings, the judge
    from fakes.pipelines import FakePipeline, tiny_eval_set

    from ragworkbook.evaluation.evaluate import evaluate

    es = tiny_eval_set()
    pipe = FakePipeline({"How many heads?": "8 heads.", "Which optimizer?": "Adam."},
                        {"How many heads?": ["c1", "c2"], "Which optimizer?": ["c3"]})
    run = evaluate(pipe, es, qrels={"q1": {"c1": 1}}, judge=RuleJudge(), progress=False,
                   metrics=["recall@2", "token_f1", "faithfulness"], out=tmp_path / "run.json")
    assert run.meta["failed_questions"] == 1  # q3: the pipeline has no answer for it
    assert not list(validator.iter_errors(json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))))
    # and it refuses what is not a report
    for broken in ({**doc, "version": 1},
                   {**doc, "rows": [{"id": "x", "question": "q", "metrics": {"m": "0.5"}}]},
                   {**doc, "meta": {**doc["meta"], "judge_ledger": {"total": {}}}}):
        assert list(validator.iter_errors(broken))
    assert main(["schema", "report"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(schema_text("report"))

"""ragworkbook.evaluation: the evaluate loop, the report model and its file, comparison and the gate."""

import json
import math

import pandas as pd
import pytest
from fakes.judges import first_prompt, prompt_fields, schema_kind
from fakes.pipelines import FakePipeline, tiny_eval_set

from ragworkbook.corpus.eval_set import eval_set_from_records
from ragworkbook.evaluation.compare import compare_reports
from ragworkbook.evaluation.evaluate import evaluate, resolve_metrics
from ragworkbook.evaluation.report import Report
from ragworkbook.outcomes import aggregate

EVAL = tiny_eval_set()

GOOD = FakePipeline(
    {"How many heads?": "The model used 8 heads.", "Which optimizer?": "They used Adam.",
     "What dropout?": "Dropout was 0.1."},
    {"How many heads?": ["a", "b", "c"], "Which optimizer?": ["x", "d", "y"],
     "What dropout?": ["e", "z", "w"]},
)
BAD = FakePipeline(
    {"How many heads?": "Twelve.", "Which optimizer?": "SGD with momentum.", "What dropout?": "None at all."},
    {"How many heads?": ["z", "b", "c"], "Which optimizer?": ["x", "y", "w"],
     "What dropout?": ["z", "y", "w"]},
)
QRELS = {"q1": {"a": 1, "c": 1}, "q2": {"d": 1}, "q3": {"e": 2}}
LEXICAL = ["precision", "recall", "mrr", "hit_rate", "ndcg", "bleu", "rouge_l", "token_f1"]


@pytest.fixture(scope="module")
def good():
    return evaluate(GOOD, EVAL, qrels=QRELS, k=3, metrics=LEXICAL, progress=False, name="good")


@pytest.fixture(scope="module")
def bad():
    return evaluate(BAD, EVAL, qrels=QRELS, k=3, metrics=LEXICAL, progress=False, name="bad")


def test_evaluate_rows_and_retrieval_values(good):
    assert good.ids == ["q1", "q2", "q3"]
    # a retrieval metric named without a cutoff is taken at k; the order is the order asked for
    assert good.metrics == ["precision@3", "recall@3", "mrr@3", "hit_rate@3", "ndcg@3", "bleu", "rouge_l",
                            "token_f1"]
    df = good.to_pandas()
    assert df.loc["q1", "precision@3"] == pytest.approx(2 / 3)
    assert df.loc["q2", "mrr@3"] == pytest.approx(0.5)
    assert df.loc["q3", "recall@3"] == 1.0
    assert df.loc["q1", "bleu"] == pytest.approx(100.0)
    assert good.rows[0]["context_ids"] == ["a", "b", "c"]
    assert good.meta["name"] == "good" and good.meta["k"] == 3


def test_aggregates_have_ci_and_counts(good):
    agg = good.aggregates["precision@3"]
    assert agg.mean == pytest.approx((2 / 3 + 1 / 3 + 1 / 3) / 3)
    # percentile bootstrap over (2/3, 1/3, 1/3): a resample of three 1/3 has probability 8/27 and one of
    # three 2/3 has 1/27, both above 2.5%, so the 95% interval runs from 1/3 to 2/3
    assert (agg.ci_low, agg.ci_high) == pytest.approx((1 / 3, 2 / 3))
    assert agg.n == 3 and agg.failed == 0 and agg.undefined == 0
    s = good.summary()
    assert list(s.columns) == ["mean", "ci_low", "ci_high", "n", "failed", "undefined"]


def test_failed_and_undefined_are_counted_not_averaged():
    agg = aggregate([1.0, None, 0.0, None], ["scored", "failed", "scored", "undefined"])
    assert (agg.mean, agg.n, agg.failed, agg.undefined, agg.total) == (0.5, 2, 1, 1, 4)
    none = aggregate([None, None])  # without outcomes a missing value counts as failed, never hidden
    assert none.n == 0 and none.failed == 2 and pd.isna(none.mean)
    with pytest.raises(ValueError, match="item 1 has a NaN value"):
        aggregate([1.0, float("nan")])
    with pytest.raises(ValueError, match="item 0 is marked scored but has no value"):
        aggregate([None], ["scored"])


def test_save_load_roundtrip(tmp_path, good):
    path = good.save(tmp_path / "r.json")
    back = Report.load(path)
    assert back.ids == good.ids and back.metrics == good.metrics
    pd.testing.assert_frame_equal(back.to_pandas(), good.to_pandas())
    assert back.aggregates == good.aggregates


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.pop("rows"), "missing key 'rows'"),
        (lambda d: d.update(format="other"), "'format' must be 'ragworkbook-report'"),
        (lambda d: d["rows"][0]["metrics"].update(bleu="high"),
         "metric 'bleu' must be a finite number or null"),
        (lambda d: d["rows"][0]["metrics"].update(bleu=None),
         "a null value needs its reason under 'unscored'"),
        (lambda d: d["aggregates"]["bleu"].update(n=None),
         "aggregate 'bleu': 'n' must be a non-negative integer"),
        (lambda d: d["aggregates"]["bleu"].update(mean=[1]),
         "aggregate 'bleu': 'mean' must be a number or null"),
        (lambda d: d["aggregates"]["bleu"].update(mean=0.99),
         "stored aggregate of 'bleu' contradicts the rows"),
        (lambda d: d["aggregates"]["bleu"].update(n=2, failed=1), "n = 2 but the rows give 3"),
        (lambda d: d["rows"][1].update(id="q1"), "question id 'q1' appears twice"),
        (lambda d: d["rows"][0]["metrics"].update(nope=1.0), "metric 'nope' not listed"),
        (lambda d: d["aggregates"].pop("bleu"), "no aggregate for metric 'bleu'"),
    ],
)
def test_load_rejects_malformed_reports(tmp_path, good, mutate, message):
    data = good.to_dict()
    data = json.loads(json.dumps(data))
    mutate(data)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message) as exc:
        Report.load(p)
    assert str(p) in str(exc.value)


def test_load_not_json_and_missing(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{"format": "ragworkbook-report",\n  oops')
    with pytest.raises(ValueError, match=r"broken.json is not valid JSON \(line 2"):
        Report.load(p)
    with pytest.raises(FileNotFoundError, match="report file not found"):
        Report.load(tmp_path / "absent.json")


def test_compare_detects_regression(good, bad):
    cmp = compare_reports(good, bad, ["bleu", "token_f1", "recall@3"])
    t = cmp.table
    assert t.loc["bleu", "diff"] < 0 and t.loc["bleu", "n"] == 3
    # 3 questions: the exact sign-flip test cannot go below p = 2/8
    assert t.loc["bleu", "p_value"] == pytest.approx(0.25)
    assert t.loc["bleu", "verdict"] == "no significant change"
    assert not cmp.worse("bleu")
    loose = compare_reports(good, bad, ["bleu"], alpha=0.3)
    assert loose.worse("bleu") and loose.table.loc["bleu", "verdict"] == "worse"
    assert compare_reports(bad, good, ["bleu"], alpha=0.3).table.loc["bleu", "verdict"] == "better"


def test_compare_respects_lower_is_better_metrics():
    """A rise in the hallucination flag is a regression, a rise in faithfulness an improvement."""
    ids = [f"q{i}" for i in range(6)]

    def rep(halluc, faith, name):
        rows = [{"id": i, "question": f"{i}?", "metrics": {"hallucination": h, "faithfulness": f}}
                for i, h, f in zip(ids, halluc, faith, strict=True)]
        return Report(rows=rows, metrics=["faithfulness", "hallucination"], meta={"name": name})

    a = rep([0.0] * 6, [0.5] * 6, "a")
    b = rep([1.0] * 6, [0.9] * 6, "b")  # more hallucination, higher faithfulness
    t = compare_reports(a, b).table
    assert t.loc["hallucination", "diff"] == 1.0 and t.loc["hallucination", "verdict"] == "worse"
    assert t.loc["faithfulness", "verdict"] == "better"
    assert compare_reports(b, a).table.loc["hallucination", "verdict"] == "better"


def test_compare_same_report_no_change(good):
    t = compare_reports(good, good).table
    assert (t["verdict"] == "no significant change").all()
    assert (t["diff"] == 0).all()


def test_compare_errors(good):
    other = evaluate(GOOD, eval_set_from_records([{"id": "q9", "question": "How many heads?", "keyword": "x",
                                                   "reference": "8."}]),
                     metrics=["bleu"], progress=False)
    with pytest.raises(ValueError, match="not on the same questions: only in A: q1, q2, q3; only in B: q9"):
        compare_reports(good, other)
    with pytest.raises(ValueError, match="unknown metric 'meteor'.*metrics in both"):
        compare_reports(good, good, ["meteor"])
    with pytest.raises(ValueError, match="unknown metric 'x'"):
        compare_reports(good, good).worse("x")


def test_compare_drops_failures_and_counts_them(good):
    data = json.loads(json.dumps(good.to_dict()))
    data["rows"][0]["metrics"]["bleu"] = None
    data["rows"][0]["unscored"] = {"bleu": {"outcome": "failed", "reason": "llm_error", "message": "boom"}}
    data["rows"][1]["metrics"]["bleu"] = None
    data["rows"][1]["unscored"] = {"bleu": {"outcome": "undefined", "reason": "empty_reference"}}
    data["aggregates"]["bleu"] = {"mean": 100.0, "ci_low": 100.0, "ci_high": 100.0, "n": 1, "failed": 1,
                                  "undefined": 1}
    b = Report.from_dict(data)
    t = compare_reports(good, b, ["bleu"]).table
    assert (t.loc["bleu", "n"], t.loc["bleu", "failed"], t.loc["bleu", "undefined"]) == (1, 1, 1)


def test_gate_fails_when_a_metric_cannot_be_compared(good):
    data = json.loads(json.dumps(good.to_dict()))
    for r in data["rows"]:
        r["metrics"]["bleu"] = None
        r["unscored"] = {"bleu": {"outcome": "failed", "reason": "timeout", "message": ""}}
    data["aggregates"]["bleu"] = {"mean": None, "ci_low": None, "ci_high": None, "n": 0, "failed": 3,
                                  "undefined": 0}
    cmp = compare_reports(good, Report.from_dict(data), ["bleu", "rouge_l"])
    assert cmp.table.loc["bleu", "verdict"] == "not compared (no pairs)"
    gate = cmp.gate(["bleu", "rouge_l"], min_pairs=1)  # three questions: the minimum is lowered
    assert not gate.passed and gate.worse == [] and list(gate.not_compared) == ["bleu"]
    assert "3 pairs failed" in gate.not_compared["bleu"]
    assert cmp.gate(["rouge_l"], min_pairs=1).passed
    assert "only 3 pairs compared" in cmp.gate(["rouge_l"]).not_compared["rouge_l"]  # the default: 6


def test_resolve_metrics_errors():
    with pytest.raises(ValueError, match="unknown metric 'blue'; known metrics: precision@k, recall@k"):
        resolve_metrics(["blue"], k=3, have_qrels=True, have_judge=False)
    with pytest.raises(ValueError, match="needs relevance judgements: pass qrels"):
        resolve_metrics(["recall"], k=3, have_qrels=False, have_judge=False)
    with pytest.raises(ValueError, match="is judged by an LLM: pass judge="):
        resolve_metrics(["faithfulness"], k=3, have_qrels=False, have_judge=False)
    with pytest.raises(ValueError, match="bleu takes no cutoff"):
        resolve_metrics(["bleu@4"], k=3, have_qrels=False, have_judge=False)
    names = lambda ms: [m.name for m in ms]  # noqa: E731
    assert names(resolve_metrics(None, k=5, have_qrels=False, have_judge=False)) == [
        "bleu", "rouge_l", "meteor", "embedding_similarity", "token_f1"]
    assert names(resolve_metrics(None, k=5, have_qrels=True, have_judge=True)) == [
        "precision@5", "recall@5", "hit_rate@5", "mrr@5", "ndcg@5", "bleu", "rouge_l", "meteor",
        "embedding_similarity", "token_f1", "faithfulness", "answer_relevancy", "context_precision",
        "context_recall", "hallucination"]
    # any cutoff, any spelling; the same metric twice is kept once, as first written
    assert names(resolve_metrics(["P@5", "precision@5", "recip_rank", "ERR@3"], k=3, have_qrels=True,
                                 have_judge=False)) == ["P@5", "mrr@3", "ERR@3"]


def test_evaluate_bad_k():
    with pytest.raises(ValueError, match="k must be a positive integer"):
        evaluate(GOOD, EVAL, k=0, progress=False)


def test_targets_view(good, bad):
    df = good.targets()
    assert list(df["metric"]) == ["recall@3", "mrr@3", "ndcg@3"]
    # NDCG@3 by hand: q1 (1 + 1/2) / (1 + 1/log2 3), q2 (1/log2 3) / 1, q3 1
    ndcg = ((1.5 / (1 + 1 / math.log2(3))) + 1 / math.log2(3) + 1) / 3
    assert df["value"].tolist() == pytest.approx([1.0, (1 + 1 / 2 + 1) / 3, ndcg])
    assert list(df["band"]) == ["good", "good", "good"]
    # the rating adds the bands the bootstrap interval reaches (3 questions: MRR's reaches 1/2)
    lo, hi = good.aggregates["mrr@3"].ci_low, good.aggregates["mrr@3"].ci_high
    assert df.loc[1, ["ci_low", "ci_high"]].tolist() == [lo, hi] and lo <= 0.5
    assert df.loc[1, "rating"] == "good, but the interval reaches acceptable"
    from ragworkbook.cli import format_summary  # eval's table shows the same rating

    line = next(x for x in format_summary(good).splitlines() if x.startswith("mrr@3"))
    assert line.endswith("good, but the interval reaches acceptable")
    assert list(bad.targets()["band"]) == ["poor", "poor", "poor"]  # recall 1/6, MRR 1/9, NDCG 0.10


# --- judged metrics through a fake judge --------------------------------------------------------

def _fake_judge():
    """A judge that reads the answer / statements: "BROKEN" answers get no JSON, "Twelve" is unsupported."""
    from ragworkbook.llm.base import Generator

    class Fake(Generator):
        backend = "fake"

        def _chat_once(self, messages, options, schema):
            fields = prompt_fields(first_prompt(messages))
            kind = schema_kind(schema)
            if kind == "statements":
                if "BROKEN" in fields["answer"]:
                    return "this is not JSON"
                return json.dumps({"statements": [fields["answer"].replace("Twelve.", "Twelve heads.")]})
            if kind == "verdicts":
                n = schema["properties"]["verdicts"]["minItems"]
                v = 0 if "Twelve" in fields["statements"] else 1
                return json.dumps({"verdicts": [{"reason": "the context says so", "verdict": v}] * n})
            if kind == "verdict":
                return json.dumps({"reason": "the context says so", "verdict": 1})
            raise AssertionError(f"unexpected request: {schema}")

    return Fake("fake-judge")


def test_evaluate_with_judge_counts_failures():
    pipe = FakePipeline(
        {"How many heads?": "Twelve.", "Which optimizer?": "BROKEN", "What dropout?": "Dropout was 0.1."},
        GOOD.rankings,
    )
    rep = evaluate(pipe, EVAL, judge=_fake_judge(), progress=False,
                   metrics=["faithfulness", "hallucination", "context_recall", "bleu"])
    assert rep.metrics == ["faithfulness", "hallucination", "context_recall", "bleu"]
    df = rep.to_pandas()
    assert df.loc["q1", "faithfulness"] == 0.0 and df.loc["q1", "hallucination"] == 1.0
    assert df.loc["q3", "faithfulness"] == 1.0 and df.loc["q3", "hallucination"] == 0.0
    assert pd.isna(df.loc["q2", "faithfulness"])
    assert "faithfulness: failed (output_parse_error)" in df.loc["q2", "unscored"]
    assert "hallucination: failed (output_parse_error)" in df.loc["q2", "unscored"]
    why = rep.rows[1]["unscored"]["faithfulness"]
    assert why["outcome"] == "failed" and "did not match the JSON schema" in why["message"]
    agg = rep.aggregates["faithfulness"]
    assert (agg.mean, agg.n, agg.failed, agg.undefined) == (0.5, 2, 1, 0)
    assert rep.aggregates["hallucination"].mean == 0.5
    # the judge's intermediates are kept: the statement it extracted and its verdict
    assert rep.rows[0]["judgments"]["faithfulness"]["items"] == [
        {"statement": "Twelve heads.", "verdict": 0, "reason": "the context says so"}]
    assert rep.rows[0]["judgments"]["context_recall"]["items"] == [
        {"statement": "The model used 8 heads.", "verdict": 1, "reason": "the context says so"}]
    assert rep.meta["judge"] == "fake:fake-judge"
    assert set(rep.targets()["metric"]) == {"faithfulness", "hallucination"}


def test_check_eval_set(good):
    good.check_eval_set(EVAL)
    other = eval_set_from_records([
        {"id": "q1", "question": "How many heads?", "keyword": "x", "reference": "8."},
        {"id": "q2", "question": "Which optimiser?", "keyword": "x", "reference": "A"},
        {"id": "q3", "question": "What dropout?", "keyword": "x", "reference": "0.1"}])
    with pytest.raises(ValueError, match=r"good does not match the eval set: the text of question\(s\) q2"):
        good.check_eval_set(other)
    with pytest.raises(ValueError, match="questions only in the report: q2, q3"):
        good.check_eval_set(other.items[:1])


# --- loading: a BOM, nesting too deep, a malformed meta -------------------------------------------------
def test_a_report_with_a_bom_loads_and_one_nested_too_deep_is_an_error(good, tmp_path):
    path = good.save(tmp_path / "r.json")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert Report.load(path).ids == good.ids
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 2000 + "]" * 2000)
    with pytest.raises(ValueError, match=r"deep\.json is not a valid ragworkbook report: JSON nested too "):
        Report.load(deep)


@pytest.mark.parametrize("key,value,said", [
    ("judge_reliability", "unmeasured", "meta 'judge_reliability' must be an object (metric -> the "
                                        "reliability card of its judge), got a string"),
    ("judge_reliability", ["faithfulness"], "meta 'judge_reliability' must be an object (metric -> the "
                                            "reliability card of its judge), got an array"),
    ("judge_reliability", {"faithfulness": "ok"}, "meta 'judge_reliability' of 'faithfulness' must be an "
                                                  "object (a reliability card), got a string"),
    ("complete", "yes", "meta 'complete' must be true or false, got a string"),
    ("name", 3, "meta 'name' must be a string, got a number"),
    ("settings", [], "meta 'settings' must be an object, got an array"),
])
def test_a_malformed_meta_is_an_error_naming_the_member(good, key, value, said):
    data = json.loads(json.dumps(good.to_dict()))
    data["meta"][key] = value
    with pytest.raises(ValueError) as err:
        Report.from_dict(data, source="r.json")
    assert str(err.value) == f"r.json is not a valid ragworkbook report: {said}"

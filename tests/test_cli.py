"""The end-to-end commands through ragworkbook.cli.main: exit codes and error messages."""

import json

import pandas as pd
import pytest

from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report


def _report(values, name, ids=("q1", "q2", "q3", "q4", "q5", "q6")):
    rows = [{"id": i, "question": f"question {i}?", "reference": "ref", "answer": "ans",
             "metrics": {"bleu": v, "recall@3": 1.0}, "failures": {}}
            for i, v in zip(ids, values, strict=True)]
    return Report(rows=rows, metrics=["bleu", "recall@3"], meta={"name": name})


@pytest.fixture()
def reports(tmp_path):
    a = _report([50, 60, 55, 70, 65, 58], "a").save(tmp_path / "a.json")
    worse = _report([20, 30, 25, 40, 35, 28], "b").save(tmp_path / "b.json")
    other = _report([50, 60, 55, 70, 65, 58], "c", ids=("q1", "q2", "q3", "q4", "q5", "q7")).save(
        tmp_path / "c.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    return a, worse, other, bad


def test_compare_gate_fails_on_regression(reports, capsys):
    a, worse, _, _ = reports
    assert main(["compare", str(a), str(worse), "--fail-if-worse", "bleu"]) == 1
    out, err = capsys.readouterr()
    assert "bleu" in out and "worse" in out
    assert "REGRESSION: B is significantly worse than A on bleu" in err
    # the other direction is an improvement: the gate passes
    assert main(["compare", str(worse), str(a), "--fail-if-worse", "bleu"]) == 0
    # a metric that did not change passes the gate
    assert main(["compare", str(a), str(worse), "--fail-if-worse", "recall@3"]) == 0


def test_compare_json(reports, capsys):
    a, worse, _, _ = reports
    assert main(["compare", str(a), str(worse), "--json", "--metric", "bleu"]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["metrics"]
    assert row["metric"] == "bleu" and row["verdict"] == "worse" and row["diff"] < 0
    assert row["p_value"] == pytest.approx(2 / 64)  # exact sign-flip test, 6 pairs all the same sign


@pytest.mark.parametrize(
    "argv,message",
    [
        (["compare", "{a}", "{missing}"], "report file not found"),
        (["compare", "{a}", "{bad}"], "bad.json is not valid JSON (line 1"),
        (["compare", "{a}", "{other}"], "not on the same questions: only in A: q6; only in B: q7"),
        (["compare", "{a}", "{b}", "--fail-if-worse", "meteor"], "unknown metric 'meteor'"),
        (["compare", "{a}", "{b}", "--alpha", "2"], "alpha must be between 0 and 1"),
        (["compare", "{a}", "{b}", "--eval-set", "{evalset}"],
         "a.json: a does not match the eval set: questions only in the eval set: q7, q8"),
        (["reproduce", "--only", "Z9"], "unknown row id(s) Z9"),
        (["eval", "--eval-set", "{missing}"], "no such file"),
        (["eval", "--metric", "blue"], "unknown metric 'blue'"),
        (["eval", "--metric", "faithfulness"], "is judged by an LLM"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(reports, tmp_path, capsys, argv, message):
    a, b, other, bad = reports
    from ragworkbook.paths import data_path

    paths = {"a": a, "b": b, "other": other, "bad": bad, "missing": tmp_path / "missing.json",
             "evalset": data_path("eval_set.json")}
    argv = [x.format(**{k: str(v) for k, v in paths.items()}) for x in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragworkbook {argv[0]}: error: ")
    assert message in err


@pytest.mark.usefixtures("clean_env", "no_ollama")
def test_backend_problems_exit_1_with_the_fix_not_a_traceback(tmp_path, capsys):
    argv = ["eval", "--backend", "ollama", "--retriever", "bm25", "--metric", "token_f1", "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("ragworkbook eval: error: no Ollama server answering") and "ollama serve" in err
    assert "Traceback" not in err
    # strict replay of a recording that does not exist: a replay miss, saying how to record
    missing = tmp_path / "none.json"
    assert main(["reproduce", "--only", "B7", "--recording", str(missing), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ragworkbook reproduce: error: strict replay:") and "RAGWORKBOOK_RECORD=1" in err


def test_reproduce_json_subset(capsys):
    assert main(["reproduce", "--only", "A1,A3", "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["A1", "A3"]
    assert rows[0]["status"] == "exact" and rows[1]["status"] == "differs"
    assert {"id", "documented", "reproduced", "status", "reason"} <= set(rows[0])


def test_reproduce_table(capsys):
    assert main(["reproduce", "--only", "B9", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "B9  exact" in out and "documented: gain(3) / gain(2) = 2.3" in out


@pytest.mark.usefixtures("clean_env")
def test_eval_end_to_end_in_replay(tmp_path, capsys):
    """`ragworkbook eval` over the bundled eval set, answers replayed from notebook 12's recording."""
    from ragworkbook.paths import data_path

    out = tmp_path / "bm25.json"
    argv = ["eval", "--recording", str(data_path("recordings", "12_end_to_end.json")), "--retriever", "bm25",
            "--metric", "recall,mrr,token_f1", "--no-progress", "--out", str(out), "--name", "bm25"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "8 questions, replay:" in text and "recall@3" in text and f"report saved to {out}" in text
    rep = Report.load(out)
    assert rep.metrics == ["recall@3", "mrr@3", "token_f1"]
    assert len(rep.rows) == 8 and rep.meta["retriever"] == "bm25" and rep.meta["name"] == "bm25"
    assert all(r["answer"] for r in rep.rows)
    # the same run compared with itself: no change, gate passes
    assert main(["compare", str(out), str(out), "--fail-if-worse", "recall@3"]) == 0


@pytest.mark.model
@pytest.mark.usefixtures("clean_env")
def test_reproduce_model_rows_json_in_replay(capsys):
    from ragworkbook.paths import data_path

    rec = str(data_path("recordings", "14_documented_numbers.json"))
    assert main(["reproduce", "--only", "B7", "--json", "--no-progress", "--recording", rec]) == 0
    (row,) = json.loads(capsys.readouterr().out)  # stdout is JSON only
    assert row["id"] == "B7" and row["status"] == "environment" and "replay:" in row["reason"]


@pytest.mark.model
@pytest.mark.usefixtures("clean_env")
def test_eval_with_judge_in_replay_counts_failures(tmp_path, capsys):
    """Notebook 12's dense run with the judge, replayed: an answer without claims has no faithfulness
    (undefined, counted apart from failures)."""
    from ragworkbook.paths import data_path

    out = tmp_path / "dense.json"
    argv = ["eval", "--recording", str(data_path("recordings", "12_end_to_end.json")), "--judge",
            "--metric", "recall,faithfulness,hallucination", "--no-progress", "--out", str(out), "--json"]
    assert main(argv) == 0
    aggs = json.loads(capsys.readouterr().out)
    assert set(aggs) == {"recall@3", "faithfulness", "hallucination"}
    f, h = aggs["faithfulness"], aggs["hallucination"]
    assert (f["n"], f["failed"], f["undefined"]) == (h["n"], h["failed"], h["undefined"]) == (7, 0, 1)
    rep = Report.load(out)
    unscored = rep.unscored("faithfulness")
    assert {q: (u.outcome, u.reason) for q, u in unscored.items()} == {"q6": ("undefined", "no_claims")}
    df = rep.to_pandas()
    assert pd.isna(df.loc["q6", "faithfulness"]) and pd.isna(df.loc["q6", "hallucination"])
    # the hallucination flag of that answer is unscored for the same reason, never 0
    assert {q: (u.outcome, u.reason) for q, u in rep.unscored("hallucination").items()} == \
        {"q6": ("undefined", "no_claims")}
    # elsewhere the flag is 1 exactly when some claim is unsupported (faithfulness below 1)
    scored = df.drop(index="q6")
    assert scored["hallucination"].tolist() == [float(v < 1.0) for v in scored["faithfulness"]]
    assert set(scored["hallucination"]) == {0.0, 1.0}  # both cases occur in this run
    assert f["mean"] == pytest.approx(scored["faithfulness"].mean())
    assert h["mean"] == pytest.approx(scored["hallucination"].mean())

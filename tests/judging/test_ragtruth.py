"""RAGTruth's loader: the data set's three files give the 2,617 responses with their labels."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.judging.ragtruth import TASKS, load_ragtruth


@pytest.mark.datasets("ragtruth")
def test_the_data_set_loads_with_its_counts():
    s = load_ragtruth()
    assert len(s) == 2617 and sum(r.hallucinated for r in s) == 1079
    assert Counter(r.task for r in s) == {"QA": 817, "Summary": 900, "Data2txt": 900}
    assert Counter(r.task for r in s if r.hallucinated) == {"QA": 259, "Summary": 241, "Data2txt": 579}
    assert len({r.model for r in s}) == 6 and len({r.source_id for r in s}) == 439
    first = s.responses[0]
    assert first.id == "14300:gpt-4-0613" and first.question == "how do automotive technicians get paid"
    data2txt = next(r for r in s if r.task == "Data2txt")
    assert json.loads(data2txt.context)["name"] == "Finch & Fork"  # the record, as indented JSON
    for r in s:
        for span in r.spans:
            assert 0 <= span.start <= span.end


def _folder(tmp_path, qa_lines):
    for name in TASKS:
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "ragtruth_qa.jsonl").write_text("\n".join(qa_lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_small_folder_loads(tmp_path):
    rec = {"source_id": 1, "source": {"question": "q?", "passages": "p"},
           "responses": [{"response": "a", "model": "m", "labels": [{"start": 0, "end": 1, "text": "a",
                                                                      "label_type": "Evident Conflict"}]},
                         {"response": "b", "model": "n", "labels": []}]}
    s = load_ragtruth(_folder(tmp_path, [json.dumps(rec)]))
    assert [(r.id, r.hallucinated) for r in s] == [("1:m", True), ("1:n", False)]


@pytest.mark.parametrize("rec,message", [
    ({"source": {}}, r"line 2: expected an object with 'source_id'"),
    ({"source_id": 1, "source": "text", "responses": []}, r"line 2: a QA source needs"),
    ({"source_id": 1, "source": {"question": "q", "passages": "p"}, "responses": [{"response": "a"}]},
     r"line 2: every response needs 'response' and 'model'"),
    ({"source_id": 1, "source": {"question": "q", "passages": "p"},
      "responses": [{"response": "a", "model": "m", "labels": [{"start": "0", "end": 1}]}]},
     r"line 2: label 0 needs integer 'start' and 'end'"),
])
def test_malformed_records_are_named(tmp_path, rec, message):
    ok = json.dumps({"source_id": 0, "source": {"question": "q", "passages": "p"}, "responses": []})
    with pytest.raises(DatasetError, match=message):
        load_ragtruth(_folder(tmp_path, [ok, json.dumps(rec)]))


@pytest.mark.datasets("ragtruth")
def test_word_support_detects_hallucinated_responses_as_measured():
    """The figures of the closing note: 1 - word support on all 2,617 responses, threshold from the other
    half of the sources."""
    from ragworkbook.judging.ragtruth import ragtruth_check

    r = ragtruth_check(signals=("word-support", "always"), spans=False)
    rows = {(x.signal, x.task): x for x in r.rows}
    ws = rows["word-support", "all"]
    assert (round(ws.auroc, 3), round(ws.auroc_low, 3), round(ws.auroc_high, 3)) == (0.766, 0.748, 0.784)
    assert (round(ws.f1, 3), round(ws.precision, 3), round(ws.recall, 3)) == (0.669, 0.603, 0.753)
    assert {t: round(rows["word-support", t].auroc, 3) for t in ("QA", "Summary", "Data2txt")} == \
        {"QA": 0.747, "Summary": 0.673, "Data2txt": 0.684}
    always = rows["always", "all"]
    assert always.auroc == 0.5 and round(always.f1, 3) == 0.584 and always.recall == 1.0


def test_detection_on_a_toy_set():
    import numpy as np

    from ragworkbook.judging.ragtruth import detection

    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    x = np.array([0.9, 0.8, 0.1, 0.2, 0.9, 0.8, 0.1, 0.2])  # perfectly separated, alike in both halves
    halves = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    d = detection("toy", "all", y, x, halves, n_resamples=200)
    assert d.auroc == 1.0 and d.f1 == 1.0 and d.precision == 1.0 and d.recall == 1.0
    assert d.thresholds == (0.8, 0.8)
    # a threshold from the other half is applied as it is: here it misses half 0's weaker positive
    x2 = np.array([0.9, 0.7, 0.1, 0.2, 0.9, 0.8, 0.1, 0.2])
    d2 = detection("toy", "all", y, x2, halves, n_resamples=200)
    assert d2.thresholds == (0.8, 0.7) and d2.recall == 0.75 and d2.precision == 1.0
    flipped = detection("toy", "all", y, 1 - x, halves, n_resamples=200)
    assert flipped.auroc == 0.0


@pytest.mark.datasets("ragtruth")
def test_judge_check_on_ragtruth_prints_the_table_and_the_published_figures(capsys):
    from ragworkbook.cli import main

    assert main(["judge-check", "--dataset", "ragtruth", "--limit", "60", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dataset"] == "ragtruth" and doc["n"] == 60 and doc["limit"] == 60
    tasks = {r["task"] for r in doc["rows"]}
    assert tasks == {"all", "QA", "Summary", "Data2txt"}  # round robin: every task in the first 60
    assert any(p["f1"] == 63.4 for p in doc["published"]) and "base rate" in doc["note"]
    assert main(["judge-check", "--dataset", "ragtruth", "--limit", "30"]) == 0
    out = capsys.readouterr().out
    assert "prompt, gpt-4-turbo: P 46.9 / R 97.9, F1 63.4" in out and "caveat:" in out
    assert main(["judge-check", "--dataset", "ragtruth", "--threshold", "0.5"]) == 2
    assert "--threshold" in capsys.readouterr().err


def _synthetic(tmp_path, n_sources=12):
    """QA and Summary sources, each with a faithful response (words of its passage) and a hallucinated one
    (words found nowhere in it, one labelled span)."""
    lines = {"ragtruth_qa.jsonl": [], "ragtruth_summary.jsonl": [], "ragtruth_data2txt.jsonl": []}
    for i in range(n_sources):
        passage = f"The harbour town number {i} exports salted herring and woollen cloth every autumn."
        bad = f"Source {i} says volcanoes erupted beneath frozen glaciers yesterday."
        span = {"start": 0, "end": len(bad), "text": bad, "label_type": "Evident Baseless Info"}
        responses = [{"response": f"Town {i} exports salted herring and woollen cloth.", "model": "m1",
                      "labels": []},
                     {"response": bad, "model": "m2", "labels": [span]}]
        if i % 2:
            question = f"What does town {i} export?"
            rec = {"source_id": f"s{i}", "source": {"question": question, "passages": passage},
                   "responses": responses}
            lines["ragtruth_qa.jsonl"].append(json.dumps(rec))
        else:
            lines["ragtruth_summary.jsonl"].append(json.dumps({"source_id": f"s{i}", "source": passage,
                                                                "responses": responses}))
    for name, recs in lines.items():
        (tmp_path / name).write_text("".join(r + "\n" for r in recs), encoding="utf-8")
    return load_ragtruth(tmp_path)


def test_an_llm_judge_on_ragtruth_is_one_more_signal_on_the_same_sampled_responses(tmp_path):
    from fakes.judges import RuleJudge

    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.ragtruth import ragtruth_check, sample_responses

    data = _synthetic(tmp_path)
    picked = sample_responses(list(data), 10, seed=0)
    assert len(picked) == 10 and Counter(r.task for r in picked) == {"QA": 5, "Summary": 5}
    assert picked != sample_responses(list(data), 10)  # seeded: not the file order
    gen = RuleJudge()
    r = ragtruth_check(signals=("word-support", "always"), limit=10, data=data, judge=Judge(gen),
                       n_resamples=100, spans=False)
    assert r.judge is not None and r.judge.signal == "llm-judge"
    assert (r.judge.judgments, r.judge.failures) == (10, 0) and gen.calls > 0
    assert r.judge.ledger.total.requests == gen.calls
    rows = {(d.signal, d.task): d for d in r.rows}
    assert {s for s, _ in rows} == {"llm-judge", "word-support", "always"}
    # the same ten responses under every signal, per task too
    assert {d.n for (_, t), d in rows.items() if t == "all"} == {10}
    assert rows[("llm-judge", "all")].auroc == 1.0  # the rule judge finds the invented words
    assert rows[("always", "all")].auroc == 0.5
    doc = r.to_dict()
    assert doc["judge"]["failures"] == 0 and doc["judge"]["ledger"]["total"]["requests"] == gen.calls
    assert doc["judge"]["definition"] == "1 - faithfulness"
    assert "each task shuffled with seed 0" in doc["sample"]
    text = r.format()
    assert "sample: 10 of 24 responses, round-robin over the tasks, each task shuffled with seed 0" in text
    assert "judge: fake:rule-judge; signal 'llm-judge' = 1 - faithfulness" in text
    assert "judge cost" in text and "llm-judge      all" in text


def test_failed_judgments_on_ragtruth_are_counted_and_score_half(tmp_path):
    from fakes.judges import GarbageJudge

    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.ragtruth import ragtruth_check

    r = ragtruth_check(signals=("always",), limit=6, data=_synthetic(tmp_path), judge=Judge(GarbageJudge()),
                       n_resamples=50, spans=False)
    assert (r.judge.judgments, r.judge.failures) == (6, 6) and r.judge.failure_reasons
    assert r.judge.ledger.total.failed == 6
    judged = next(d for d in r.rows if d.signal == "llm-judge" and d.task == "all")
    assert judged.n == 6 and judged.auroc == 0.5  # every response 0.5: no evidence either way
    assert "failed 6" in r.format()


def test_judge_check_ragtruth_with_a_backend_judges_a_sample(tmp_path, monkeypatch, capsys):
    from fakes.judges import RuleJudge

    import ragworkbook.judging.ragtruth as rt
    from ragworkbook import cli

    data = _synthetic(tmp_path)
    monkeypatch.setattr(rt, "load_ragtruth", lambda folder=None: data)
    monkeypatch.setattr(cli._common, "generator", lambda args, announce: RuleJudge())
    assert cli.main(["judge-check", "--dataset", "ragtruth", "--backend", "ollama", "--limit", "8", "--json",
                     "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n"] == 8 and doc["judge"]["judge"] == "fake:rule-judge" and doc["judge"]["judgments"] == 8
    assert {r["signal"] for r in doc["rows"]} >= {"llm-judge", "word-support", "word-overlap"}
    # a judge is slow: judging every response must be asked for
    assert cli.main(["judge-check", "--dataset", "ragtruth", "--backend", "ollama"]) == 2
    assert "give --limit N (a seeded sample" in capsys.readouterr().err


def test_judge_check_ragtruth_metric_names_the_judges_signal(tmp_path, monkeypatch, capsys):
    from fakes.judges import RuleJudge

    import ragworkbook.judging.ragtruth as rt
    from ragworkbook import cli

    data = _synthetic(tmp_path)
    monkeypatch.setattr(rt, "load_ragtruth", lambda folder=None: data)
    monkeypatch.setattr(cli._common, "generator", lambda args, announce: RuleJudge())
    assert cli.main(["judge-check", "--dataset", "ragtruth", "--backend", "ollama", "--limit", "6",
                     "--metric", "hallucination", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "signal 'llm-judge' = hallucination (higher = more likely hallucinated); judgments 6" in text
    # --metric without a judge, a metric that asks no judge, a rubric: each refused with the fix
    assert cli.main(["judge-check", "--dataset", "ragtruth", "--metric", "faithfulness"]) == 2
    assert "give --backend (and" in capsys.readouterr().err
    assert cli.main(["judge-check", "--dataset", "ragtruth", "--backend", "ollama", "--limit", "6",
                     "--metric", "word_support"]) == 2
    assert "asks no judge" in capsys.readouterr().err

"""evaluate(): one failed question is a counted failure, never the end of the run; the report is saved
as the run goes; an interrupted run resumes from what it has, and only with the same settings."""

from __future__ import annotations

import json

import pytest
from fakes.judges import RuleJudge
from fakes.pipelines import FakeAnswer, FakeChunk, FakeHit, FakePipeline

from ragworkbook.corpus.eval_set import eval_set_from_records
from ragworkbook.evaluation.evaluate import evaluate
from ragworkbook.evaluation.report import Report
from ragworkbook.llm import LLMError, ModelNotFound, OutputParseError, ReplayMissError

N = 10
EVAL = eval_set_from_records([{"id": f"q{i}", "question": f"What is item {i}?",
                               "reference": f"Item {i} is red."} for i in range(N)], name="ten")
QRELS = {f"q{i}": {f"c{i}": 1} for i in range(N)}
METRICS = ["recall@2", "token_f1", "bleu"]


class Flaky(FakePipeline):
    """Answers 'Item i is red.' from chunks c<i>, x; raises ``errors[question]`` (once, or always)."""

    def __init__(self, errors=None, once=True, interrupt_at=None):
        self.errors = dict(errors or {})
        self.once, self.interrupt_at = once, interrupt_at
        self.asked: list[str] = []

    def answer(self, question):
        self.asked.append(question)
        if question == self.interrupt_at:
            raise KeyboardInterrupt
        if question in self.errors:
            exc = self.errors.pop(question) if self.once else self.errors[question]
            raise exc
        i = question.split()[-1].rstrip("?")
        hits = [FakeHit(FakeChunk(f"c{i}", f"Item {i} is red.")), FakeHit(FakeChunk("x", "nothing"))]
        return FakeAnswer(question, f"Item {i} is red.", hits)

    def describe(self):
        return {"prompt": "fixed", "k": 2}


def run(pipeline, **kw):
    kw.setdefault("metrics", METRICS)
    return evaluate(pipeline, EVAL, qrels=QRELS, k=2, progress=False, **kw)


def test_a_failed_generation_is_a_failed_row_and_the_rest_is_kept(tmp_path):
    p = Flaky({"What is item 3?": LLMError("the Ollama server at http://h:1 returned an error (HTTP 500)"),
               "What is item 6?": OutputParseError("did not match the schema"),
               "What is item 7?": ReplayMissError("strict replay: no recorded answer"),
               "What is item 8?": RuntimeError("a bug in someone's pipeline")})
    rep = run(p, out=tmp_path / "r.json")
    assert len(rep.rows) == N and rep.meta["failed_questions"] == 4 and rep.meta["complete"]
    reasons = {"q3": "generation_error", "q6": "output_parse_error", "q7": "replay_miss",
               "q8": "generation_error"}
    for qid, reason in reasons.items():
        row = next(r for r in rep.rows if r["id"] == qid)
        assert row["error"]["reason"] == reason
        for m in METRICS:  # every metric of that row, with the reason and the message
            u = rep.unscored(m)[qid]
            assert (u.outcome, u.reason) == ("failed", reason) and u.message == row["error"]["message"]
    assert "RuntimeError: a bug in someone's pipeline" in rep.unscored("bleu")["q8"].message
    for m in METRICS:
        a = rep.aggregates[m]
        assert (a.n, a.failed) == (6, 4)
    assert rep.aggregates["recall@2"].mean == 1.0 and rep.aggregates["token_f1"].mean == 1.0
    assert Report.load(tmp_path / "r.json").to_dict() == rep.to_dict()


def test_a_backend_that_is_down_stops_the_asking_not_the_report(tmp_path):
    p = Flaky({"What is item 2?": ModelNotFound("model 'm' is not available: `ollama pull m`")}, once=False)
    rep = run(p, out=tmp_path / "r.json")
    assert len(p.asked) == 3  # q0, q1, then q2 failed: nobody asks the rest
    assert rep.meta["stopped"].startswith("the run stopped asking at question 'q2': model 'm'")
    assert not rep.meta["complete"] and rep.meta["failed_questions"] == 8
    assert {u.reason for u in rep.unscored("bleu").values()} == {"model_not_found"}
    assert rep.unscored("bleu")["q5"].message.startswith("not asked: the run stopped asking at question 'q2'")
    assert rep.aggregates["bleu"].n == 2
    # fixed: resume asks only what has no answer
    p2 = Flaky()
    again = run(p2, out=tmp_path / "r.json", resume=True)
    assert p2.asked == [f"What is item {i}?" for i in range(2, N)]
    assert again.meta["complete"] and again.meta["resumed"] == 2 and again.aggregates["bleu"].n == N


def test_the_report_is_saved_as_the_run_goes(tmp_path):
    out = tmp_path / "r.json"
    seen = []

    class Watching(Flaky):
        def answer(self, question):
            if out.exists():
                part = Report.load(out)
                assert not part.meta["complete"] and len(part.rows) == N
                seen.append(part.aggregates["bleu"].n)
            else:
                seen.append(None)
            return super().answer(question)

    run(Watching(), out=out, save_every=3)
    # nothing before the first 3 questions are done, then a partial report after every 3
    assert seen == [None, None, None, 3, 3, 3, 6, 6, 6, 9]
    assert Report.load(out).meta["complete"] and Report.load(out).aggregates["bleu"].n == N


def test_an_interrupted_run_is_saved_and_resumes_where_it_stopped(tmp_path):
    out = tmp_path / "r.json"
    with pytest.raises(KeyboardInterrupt):
        run(Flaky(interrupt_at="What is item 5?"), out=out, save_every=4)
    part = Report.load(out)  # written on the way out: every question is in it
    assert not part.meta["complete"] and len(part.rows) == N
    by = {r["id"]: r for r in part.rows}
    assert all(by[f"q{i}"]["metrics"]["bleu"] is not None for i in range(4))  # scored in the first batch
    assert by["q4"]["answer"] == "Item 4 is red."  # answered, not scored yet
    assert part.unscored("bleu")["q4"].reason == "not_scored"
    assert {part.unscored("bleu")[f"q{i}"].reason for i in range(5, N)} == {"not_run"}
    p = Flaky()
    done = run(p, out=out, resume=True, save_every=4)
    assert p.asked == [f"What is item {i}?" for i in range(5, N)]  # q4's answer is reused, only scored
    assert done.meta["complete"] and done.meta["resumed"] == 5
    fresh = run(Flaky(), metrics=METRICS)
    assert [r["metrics"] for r in done.rows] == [r["metrics"] for r in fresh.rows]


def test_resume_keeps_values_recomputes_failures_and_adds_new_metrics(tmp_path):
    out = tmp_path / "r.json"
    judge = RuleJudge()
    run(Flaky(), out=out, judge=judge, metrics=METRICS + ["faithfulness"])
    doc = json.loads(out.read_text())
    # q1's faithfulness failed last time (as if the judge had timed out)
    row = next(r for r in doc["rows"] if r["id"] == "q1")
    row["metrics"]["faithfulness"] = None
    row["unscored"]["faithfulness"] = {"outcome": "failed", "reason": "timeout",
                                       "message": "no answer in 5 s"}
    edited = Report(rows=doc["rows"], metrics=doc["metrics"], meta=doc["meta"])
    doc["aggregates"] = edited.to_dict()["aggregates"]
    out.write_text(json.dumps(doc))
    before = judge.calls
    p = Flaky()
    rep = run(p, out=out, resume=True, judge=judge, metrics=METRICS + ["faithfulness", "rouge_l"])
    assert p.asked == []  # every answer reused
    assert judge.calls - before == 2  # q1's faithfulness only: its statements, then its verdicts
    assert rep.aggregates["faithfulness"].n == N and rep.aggregates["rouge_l"].n == N  # the new metric too


@pytest.mark.parametrize("change,what", [
    (lambda p: setattr(p, "describe", lambda: {"prompt": "another", "k": 2}), "pipeline"),
    (lambda p: None, "qrels"),
])
def test_resume_refuses_another_run_s_report(tmp_path, change, what):
    out = tmp_path / "r.json"
    run(Flaky(), out=out)
    p = Flaky()
    change(p)
    qrels = QRELS if what != "qrels" else {**QRELS, "q0": {"c9": 1}}
    with pytest.raises(ValueError, match=rf"cannot resume from .*r.json: it was made with other settings "
                                         rf"\({what}: .* in the report, .* now\)"):
        evaluate(p, EVAL, qrels=qrels, k=2, progress=False, metrics=METRICS, out=out, resume=True)
    assert p.asked == []  # refused before any work


def test_resume_reruns_a_question_whose_text_changed(tmp_path):
    out = tmp_path / "r.json"
    run(Flaky(), out=out)
    records = [{"id": f"q{i}", "question": f"What is item {i}?", "reference": f"Item {i} is red."}
               for i in range(N)]
    records[4]["question"] = "What is item 4, again?"
    p = Flaky()
    p.answer = lambda q, _a=p.answer: _a(q.replace(", again", ""))
    evaluate(p, eval_set_from_records(records), qrels=QRELS, k=2, progress=False, metrics=METRICS, out=out,
             resume=True)
    assert Report.load(out).meta["resumed"] == N - 1


def test_resume_needs_an_out_and_a_missing_file_starts_afresh(tmp_path):
    with pytest.raises(ValueError, match="resume=True continues the report at out=PATH"):
        run(Flaky(), resume=True)
    rep = run(Flaky(), out=tmp_path / "new.json", resume=True)
    assert rep.meta["resumed"] == 0 and rep.meta["complete"]


def test_the_output_path_is_checked_before_any_work(tmp_path):
    (tmp_path / "file").write_text("x")
    for bad, said in ((tmp_path, "is a folder"), (tmp_path / "file" / "r.json", "is a file, not a folder")):
        p = Flaky()
        with pytest.raises(OSError, match=said):
            run(p, out=bad)
        assert p.asked == []

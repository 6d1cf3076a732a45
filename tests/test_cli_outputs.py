"""Bring your own system from the command line: eval --answers, schema, --corpus folder, download-paper."""

import json

import pytest

from ragworkbook.cli import build_parser, main
from ragworkbook.evaluation.report import Report
from ragworkbook.paths import data_path, repo_root

# a five-row RAGAS 0.1 file, as a new user would bring it (question, answer, contexts, ground_truth)
ROWS = [
    ("How many attention heads did they use?", "They used 8 attention heads.",
     ["Multi-head attention with h = 8 parallel heads.", "The appendix shows attention heads."],
     "The base model used 8 attention heads (h = 8)."),
    ("What optimizer was used for training?", "Stochastic gradient descent, probably.",
     ["They trained with Adam, beta1 = 0.9.", "Learning-rate warm-up."], "They used Adam."),
    ("How many layers are in the encoder?", "Six layers.", ["The encoder is a stack of N = 6 layers."],
     "The encoder has 6 layers (N = 6)."),
    ("What GPUs was the model trained on?", "NVIDIA P100 GPUs.", ["Eight P100 GPUs."],
     "The models were trained on NVIDIA P100 GPUs."),
    ("What dropout rate did they use?", "", [], "They used a dropout rate of Pdrop = 0.1."),
]
V01 = [{"question": q, "answer": a, "contexts": c, "ground_truth": g} for q, a, c, g in ROWS]
V02 = [{"user_input": q, "response": a, "retrieved_contexts": c, "reference": g} for q, a, c, g in ROWS]
METRICS = "token_f1,bleu,rouge_l,exact_match"


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_eval_answers_scores_the_file_as_given(tmp_path, capsys):
    f = _jsonl(tmp_path / "F.jsonl", V01)
    status, out, err = _run(["eval", "--answers", str(f), "--no-judge", "--metric", METRICS,
                             "--out", str(tmp_path / "r.json"), "--no-progress"], capsys)
    assert status == 0, err
    assert f"5 answers from {f}, scored as given" in out and "relevance: 5 none (no_relevance)" in out
    assert "5 records without an id got one from their question" in out
    rep = Report.load(tmp_path / "r.json")
    assert [r["answer"] for r in rep.rows] == [a for _, a, _, _ in ROWS]  # verbatim, not regenerated
    assert [r["contexts"] for r in rep.rows] == [c for _, _, c, _ in ROWS]
    assert rep.metrics == METRICS.split(",")
    by_q = {r["question"]: r["metrics"] for r in rep.rows}
    assert by_q[ROWS[1][0]]["token_f1"] == 0.0  # wrong answer, no token shared with its reference
    assert by_q[ROWS[0][0]]["token_f1"] > 0.5
    assert by_q[ROWS[4][0]]["token_f1"] == 0.0  # an empty answer is scored, not dropped
    assert rep.aggregates["token_f1"].n == 5


def test_ragas_02_names_give_the_same_report(tmp_path, capsys):
    for name, recs in (("a", V01), ("b", V02)):
        argv = ["eval", "--answers", str(_jsonl(tmp_path / f"{name}.jsonl", recs)), "--no-judge",
                "--metric", METRICS, "--out", str(tmp_path / f"{name}.json"), "--no-progress"]
        assert main(argv) == 0
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert a["meta"].pop("source") != b["meta"].pop("source")
    assert a == b


def test_a_file_with_three_problems_reports_all_three(tmp_path, capsys):
    bad = [V01[0], {"question": "q?", "contexts": []}, dict(V01[1], contexts="one passage"), V01[2],
           dict(V02[3], reference=3)]
    f = _jsonl(tmp_path / "bad.jsonl", bad)
    status, out, err = _run(["eval", "--answers", str(f), "--no-judge", "--metric", METRICS], capsys)
    assert status == 2 and not out
    assert err.startswith(f"ragworkbook eval: error: {f}: 3 problems:")
    assert "bad.jsonl, line 2: record is missing the field 'answer' (or 'response', 'actual_output')" in err
    assert "bad.jsonl, line 3: field 'contexts' must be an array, got string" in err
    assert "bad.jsonl, line 5: field 'reference' must be a string or null, got integer" in err


def test_eval_answers_with_qrels_and_ids(tmp_path, capsys):
    """The workbook's own saved run (contexts with ids) and a TREC qrels file keyed by question id."""
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.corpus.pages import load_corpus
    from ragworkbook.corpus.trec import write_qrels

    qrels = write_qrels(keyword_qrels(chunk_pages(load_corpus()), load_eval_set()), tmp_path / "q.txt")
    run = data_path("runs", "naive_rag_embedded.json")
    status, out, err = _run(["eval", "--answers", str(run), "--qrels", str(qrels), "--metric",
                             "recall@3,token_f1", "--json", "--no-progress"], capsys)
    assert status == 0, err
    agg = json.loads(out)
    assert agg["recall@3"]["n"] == 8 and agg["recall@3"]["undefined"] == 0
    status, out, err = _run(["eval", "--answers", str(run), "--metric", "recall@3,token_f1",
                             "--no-progress"], capsys)
    assert status == 2 and "needs relevance judgements" in err


@pytest.mark.parametrize("argv,message", [
    (["--corpus", "x.json"], "--corpus is for running the pipeline"),
    (["--retriever", "bm25", "--eval-set", "e.json"], "--eval-set and --retriever are for running"),
    (["--backend", "embedded"], "--backend choose the judge's model: add --judge"),
    (["--metric", "faithfulness"], "is judged by an LLM"),
])
def test_eval_answers_refuses_pipeline_options(tmp_path, capsys, argv, message):
    f = _jsonl(tmp_path / "F.jsonl", V01)
    status, _, err = _run(["eval", "--answers", str(f), *argv], capsys)
    assert status == 2 and message in err


def test_schema_command_and_help_link(capsys):
    status, out, _ = _run(["schema", "answers"], capsys)
    schema = json.loads(out)
    assert status == 0 and "user_input" in schema["properties"] and "ground_truth" in schema["properties"]
    status, out, _ = _run(["schema", "eval-set"], capsys)
    assert json.loads(out)["properties"]["keyword"]["type"] == ["string", "null"]
    status, out, _ = _run(["schema", "answers", "--path"], capsys)
    assert out.strip().endswith("answers.schema.json")
    status, out, _ = _run(["schema"], capsys)
    assert "answers" in out and "eval-set" in out
    sub = build_parser()._subparsers._group_actions[0].choices["eval"]
    text = sub.format_help()
    assert "ragworkbook schema answers" in text and "ragworkbook schema eval-set" in text
    readme = (repo_root() / "README.md").read_text(encoding="utf-8")
    assert "## Bring your own system" in readme and "ragworkbook schema answers" in readme


def test_eval_pipeline_on_a_folder_of_text_files(tmp_path, capsys, monkeypatch):
    """--corpus FOLDER: the notes' pages as text files give the same chunks, so notebook 12's recorded
    BM25 answers replay; an eval-set question without a keyword has undefined retrieval metrics."""
    from ragworkbook.corpus.pages import load_corpus

    monkeypatch.delenv("RAGWORKBOOK_BACKEND", raising=False)
    monkeypatch.delenv("RAGWORKBOOK_RECORD", raising=False)
    folder = tmp_path / "notes"
    folder.mkdir()
    for p in load_corpus().pages:
        (folder / f"page{p.page:02d}.txt").write_text(p.text, encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    es = json.loads(data_path("eval_set.json").read_text(encoding="utf-8"))
    del es["items"][1]["keyword"]
    (tmp_path / "es.json").write_text(json.dumps(es), encoding="utf-8")
    argv = ["eval", "--corpus", str(folder), "--eval-set", str(tmp_path / "es.json"), "--retriever", "bm25",
            "--recording", str(data_path("recordings", "12_end_to_end.json")), "--metric", "recall,token_f1",
            "--no-progress", "--out", str(tmp_path / "r.json")]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    rep = Report.load(tmp_path / "r.json")
    assert rep.meta["corpus"] == "notes" and len(rep.rows) == 8
    assert rep.rows[1]["unscored"]["recall@3"]["reason"] == "no_relevance"
    assert rep.aggregates["recall@3"].n == 7 and "recall@3: 1 undefined (no_relevance)" in out


@pytest.mark.parametrize("make,message", [
    (lambda d: d / "missing.pdf", "no such file or folder"),
    (lambda d: (d / "x.docx").write_bytes(b"PK") and d / "x.docx", "cannot read '.docx' as a corpus"),
    (lambda d: (d / "fake.pdf").write_text("hello") and d / "fake.pdf", "does not start with %PDF-"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "no PDF or text file"),
])
def test_eval_corpus_errors_name_the_path(tmp_path, capsys, make, message):
    path = make(tmp_path)
    status, _, err = _run(["eval", "--corpus", str(path), "--no-progress"], capsys)
    assert status == 2 and str(path) in err and message in err


def test_download_paper_says_when_it_kept_the_file(tmp_path, monkeypatch, capsys):
    import io
    import urllib.request

    from fakes.pdfs import make_pdf

    payload = make_pdf(tmp_path / "src.pdf", [["Attention is all you need."], ["Page two."]]).read_bytes()
    calls = []

    def fake_urlopen(req, timeout=0):
        calls.append(req)
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    dest = tmp_path / "paper.pdf"
    status, out, _ = _run(["download-paper", "--out", str(dest)], capsys)
    assert status == 0 and out.startswith(f"saved {dest}") and len(calls) == 1
    assert f"ragworkbook reproduce --pdf {dest}" in out
    status, out, _ = _run(["download-paper", "--out", str(dest)], capsys)
    assert status == 0 and len(calls) == 1 and "saved" not in out
    assert out.startswith(f"kept the existing {dest}") and "nothing downloaded" in out and "2 pages" in out
    status, out, _ = _run(["download-paper", "--out", str(dest), "--force"], capsys)
    assert len(calls) == 2 and out.startswith(f"saved {dest}")


def test_eval_pipeline_with_a_qrels_file(tmp_path, capsys, monkeypatch):
    """--qrels replaces the keyword ground truth; questions it does not judge are undefined, not 0."""
    from ragworkbook.corpus.trec import write_qrels

    monkeypatch.delenv("RAGWORKBOOK_BACKEND", raising=False)
    monkeypatch.delenv("RAGWORKBOOK_RECORD", raising=False)
    qrels = write_qrels({"q1": {"p05-c02": 1}, "q2": {"p99-c01": 1}}, tmp_path / "q.txt")
    argv = ["eval", "--retriever", "bm25", "--recording", str(data_path("recordings", "12_end_to_end.json")),
            "--qrels", str(qrels), "--metric", "recall@3", "--no-progress", "--out", str(tmp_path / "r.json")]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    rep = Report.load(tmp_path / "r.json")
    assert rep.values("recall@3")[1] == 0.0  # judged, and its relevant chunk not retrieved
    assert rep.aggregates["recall@3"].n == 2 and rep.aggregates["recall@3"].undefined == 6
    assert "recall@3: 6 undefined (no_relevance)" in out


def test_eval_help_lists_every_metric_of_the_registry(capsys, monkeypatch):
    """``eval --help`` ends with the registry's metrics: a spec registered now is listed, none is missing."""
    import re

    from ragworkbook.metrics.registry import MetricSpec, registered, specs

    monkeypatch.setenv("COLUMNS", "80")
    spec = MetricSpec("answer_overlap_test", "generation", "Answer overlap (test)", "a test's metric",
                      impl=lambda answer, reference: 0.0)
    with registered(spec), pytest.raises(SystemExit) as done:
        main(["eval", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    listed = out.split("metrics (from the registry")[1]
    names = set(re.split(r"[\s,*]+", listed.split("card):", 1)[1]))
    assert "answer_overlap_test" in names
    assert {s.usage for s in specs()} <= names
    assert "  judged: faithfulness*," in listed  # a default is starred
    assert max(len(line) for line in listed.splitlines()) <= 78

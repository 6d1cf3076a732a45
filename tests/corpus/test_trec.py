"""TREC qrels/run files and the ``ragworkbook ir-eval`` command."""

from __future__ import annotations

import json

import pytest

from ragworkbook.cli import main
from ragworkbook.corpus.trec import read_qrels, read_run, write_qrels, write_run

QRELS = "q1 0 c1 0\nq1 0 c2 2\nq1 0 c3 3\nq1 0 c4 1\nq1 0 c5 1\nq2 0 x 1\n"
RUN = "".join(f"q1 Q0 c{i} {i} {1.0 - i / 10} demo\n" for i in range(1, 6))
RUN += "q2 Q0 y 1 2.0 demo\nq2 Q0 x 2 1.0 demo\n"


@pytest.fixture()
def files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def test_read_files(files):
    qrels, run = files
    q = read_qrels(qrels)
    r = read_run(run)
    assert q["q1"] == {"c1": 0, "c2": 2, "c3": 3, "c4": 1, "c5": 1}
    assert r["q2"] == {"y": 2.0, "x": 1.0}


def test_round_trip(tmp_path):
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.5, "b": 0.75}, "q2": {"c": 1e-12}}
    write_qrels(qrels, tmp_path / "q")
    write_run(run, tmp_path / "r")
    assert read_qrels(tmp_path / "q") == qrels
    assert read_run(tmp_path / "r") == run
    assert (tmp_path / "r").read_text().splitlines()[0] == "q1 Q0 b 1 0.75 ragworkbook"



def test_write_run_numpy_scores_round_trip(tmp_path):
    import numpy as np

    run = {"q": {"a": np.float64(0.5), "b": np.float32(0.25), "c": np.int64(1)}}
    write_run(run, tmp_path / "r")
    assert (tmp_path / "r").read_text().splitlines()[0] == "q Q0 c 1 1.0 ragworkbook"
    assert read_run(tmp_path / "r") == {"q": {"c": 1.0, "a": 0.5, "b": 0.25}}


@pytest.mark.parametrize(
    "reader,text,message",
    [
        (read_qrels, "q1 0 a 1\nq1 0 b\n", r":2: a qrels line needs 4 fields"),
        (read_qrels, "q1 0 a high\n", r":1: grade 'high' is not a number"),
        (read_qrels, "q1 0 a 1\nq1 0 a 2\n", r":2: document 'a' is judged twice"),
        (read_run, "q1 Q0 a 1 0.5\n", r":1: a run line needs at least 6 fields"),
        (read_run, "# comment\n\nq1 Q0 a 1 nan t\n", r":3: score 'nan' is NaN"),
        (read_run, "q1 Q0 a 1 high t\n", r":1: score 'high' is not a number"),
        (read_run, "q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n", r":2: document 'a' is retrieved twice"),
        (read_run, "\n", r"holds no result"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, reader, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as exc:
        reader(path)
    assert str(exc.value).startswith(str(path))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_run(tmp_path / "nope.txt")


def test_cli_table(files, capsys):
    qrels, run = files
    code = main(["ir-eval", "--qrels", str(qrels), "--run", str(run),
                 "--metric", "P@3,recall@5", "--metric", "mrr"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == ["P@3     \tall\t0.5000", "recall@5\tall\t1.0000", "mrr     \tall\t0.5000",
                   "num_q   \tall\t2"]


def test_cli_json_per_query_exponential(files, capsys):
    qrels, run = files
    code = main(["ir-eval", "--qrels", str(qrels), "--run", str(run), "--metric", "ndcg@5",
                 "--gain", "exponential", "--per-query", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert round(data["per_query"]["q1"]["ndcg@5"], 3) == 0.632
    assert data["n_queries"] == 2 and data["gain"] == "exponential"


def test_cli_per_query_table(files, capsys):
    qrels, run = files
    assert main(["ir-eval", "--qrels", str(qrels), "--run", str(run), "--metric", "mrr", "--per-query"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["mrr  \tq1\t0.5000", "mrr  \tq2\t0.5000"]


def test_cli_errors_exit_2_with_message(files, tmp_path, capsys):
    qrels, run = files
    bad = tmp_path / "bad_run.txt"
    bad.write_text("q1 Q0 c1 1 0.5 t\nq1 Q0 c2 x\n")
    assert main(["ir-eval", "--qrels", str(qrels), "--run", str(bad), "--metric", "mrr"]) == 2
    err = capsys.readouterr().err
    assert "ragworkbook ir-eval: error:" in err and "bad_run.txt:2: a run line needs at least 6 fields" in err
    assert main(["ir-eval", "--qrels", str(qrels), "--run", str(run), "--metric", "bleu"]) == 2
    assert "metric 'bleu' is a generation metric; only retrieval metrics apply" in capsys.readouterr().err
    assert main(["ir-eval", "--qrels", str(tmp_path / "none"), "--run", str(run), "--metric", "mrr"]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["ir-eval", "--qrels", str(qrels), "--run", str(run), "--metric", "mrr", "--gain", "exp"])
    assert exc.value.code == 2
    assert "invalid choice: 'exp'" in capsys.readouterr().err

"""TREC qrels/run files and the ``ragworkbook ir-eval`` command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ragworkbook.cli import main
from ragworkbook.corpus.trec import read_qrels, read_run, read_run_columns, write_qrels, write_run

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
        (read_qrels, "q1 0 a 1 x\nq1 0 b 1 y\n", r":1: a qrels line needs 4 fields .*, got 5: 'q1 0 a 1 x'"),
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
    assert out == [f"{'P@3':<22}\tall\t0.5000", f"{'recall@5':<22}\tall\t1.0000",
                   f"{'mrr':<22}\tall\t0.5000", f"{'num_q':<22}\tall\t2"]  # trec_eval's format


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
    assert out[:2] == [f"{'mrr':<22}\tq1\t0.5000", f"{'mrr':<22}\tq2\t0.5000"]


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


# --------------------------------------------------------------------------- hostile input (issue 12)


def _ir_eval(capsys, qrels, run, *extra):
    code = main(["ir-eval", "--qrels", str(qrels), "--run", str(run), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_byte_order_mark_is_not_part_of_the_first_query_id(files, tmp_path, capsys):
    qrels, run = files
    with_bom = tmp_path / "bom_qrels.txt"
    with_bom.write_bytes(b"\xef\xbb\xbf" + qrels.read_bytes())
    assert sorted(read_qrels(with_bom)) == ["q1", "q2"]
    plain = _ir_eval(capsys, qrels, run, "--metric", "ndcg@5,mrr", "--json")
    bom = _ir_eval(capsys, with_bom, run, "--metric", "ndcg@5,mrr", "--json")
    assert json.loads(bom[1])["mean"] == json.loads(plain[1])["mean"]
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes(QRELS.encode("utf-16"))
    with pytest.raises(ValueError, match=r"utf16.txt:1: the file is UTF-16 .* save it as UTF-8"):
        read_qrels(utf16)


def test_non_utf8_byte_names_file_and_line(tmp_path, capsys, files):
    _, run = files
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"q1 0 a 1\nq1 0 caf\xe9 1\n")
    code, _, err = _ir_eval(capsys, bad, run, "--metric", "mrr")
    assert code == 2
    assert f"{bad}:2: byte 0xe9 is not UTF-8 (the file must be UTF-8 text)" in err


def test_malformed_giant_line_is_not_echoed_whole(tmp_path, capsys, files):
    qrels, _ = files
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 a 1 0.5 t\n" + "x" * 500_000 + "\n")
    code, _, err = _ir_eval(capsys, qrels, bad, "--metric", "mrr")
    assert code == 2 and len(err) < 400
    assert f"{bad}:2: a run line needs at least 6 fields" in err and "... (500,000 bytes)" in err
    bad.write_text("q1 Q0 a 1 0.5" + "x" * 100_000 + " t\n")
    code, _, err = _ir_eval(capsys, qrels, bad, "--metric", "mrr")
    assert code == 2 and len(err) < 400
    assert f"{bad}:1: score '0.5xxx" in err and "... (100,003 bytes) is not a number" in err


def test_a_huge_file_of_nul_bytes_is_refused_without_reading_it(tmp_path, capsys, files):
    import tracemalloc

    qrels, _ = files
    nul = tmp_path / "nul.txt"
    with open(nul, "wb") as fh:  # 2 GB of NUL bytes (a sparse file: no disk used)
        fh.truncate(2 * 1024**3)
    tracemalloc.start()
    code, _, err = _ir_eval(capsys, qrels, nul, "--metric", "mrr")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 2
    assert f"{nul}:1: line longer than 1,048,576 bytes (NUL bytes: not a text file)" in err
    assert len(err) < 400 and peak < 100 * 2**20  # one 16 MiB block at most, never the whole file
    short = tmp_path / "nul_inside.txt"
    short.write_bytes(b"q1 Q0 a 1 0.5 t\nq1 Q0 b\x00 2 0.4 t\n")
    code, _, err = _ir_eval(capsys, qrels, short, "--metric", "mrr")
    assert code == 2 and f"{short}:2: control byte 0x00 in a text file (a binary file?)" in err


def test_a_directory_is_reported_as_a_directory(tmp_path, capsys, files):
    _, run = files
    code, _, err = _ir_eval(capsys, tmp_path, run, "--metric", "mrr")
    assert code == 2 and f"{tmp_path} is a directory, not a qrels file" in err


def test_huge_grades_never_give_nan_or_infinity(tmp_path, capsys, files):
    _, run = files
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 c1 2\nq1 0 c2 1e400\n")
    code, out, err = _ir_eval(capsys, qrels, run, "--metric", "ndcg", "--json")
    assert code == 2 and out == "" and f"{qrels}:2: grade '1e400' is not a finite number" in err
    # grade 2000 with the exponential gain: NDCG is computed exactly; DCG cannot be: a clear error
    qrels.write_text("q1 0 c1 2000\nq1 0 c3 1999\nq1 0 c5 3\n")
    code, out, _ = _ir_eval(capsys, qrels, run, "--metric", "ndcg@5,err@5", "--gain", "exponential",
                            "--max-grade", "2000", "--json", "-q")

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    data = json.loads(out, parse_constant=refuse)
    assert code == 0 and 0 < data["mean"]["ndcg@5"] < 1 and 0 < data["mean"]["err@5"] <= 1
    code, out, err = _ir_eval(capsys, qrels, run, "--metric", "dcg@5", "--gain", "exponential")
    assert code == 2 and out == ""
    assert (f"dcg@5 of query 'q1' (its largest grade, 2000, is at {qrels}:1) is inf: its exponential "
            "gain 2^grade - 1 does not fit in a float") in err


def test_trec_eval_flags(tmp_path, capsys):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 c 2\n")
    run.write_text("q1 Q0 a 1 0.9 t extra text\nq1 Q0 x 2 0.8 t\nq1 Q0 b 3 0.7 t\n")
    code, out, _ = _ir_eval(capsys, qrels, run, "--metric", "P_3,recip_rank", "-c", "-M2", "-l2", "-q")
    assert code == 0
    w = 22
    assert out.splitlines() == [
        # -l2: only b is relevant and -M2 cuts it; -c: q2 is not in the run, scored 0
        f"{'P_3':<{w}}\tq1\t0.0000", f"{'recip_rank':<{w}}\tq1\t0.0000",
        f"{'P_3':<{w}}\tq2\t0.0000", f"{'recip_rank':<{w}}\tq2\t0.0000",
        f"{'P_3':<{w}}\tall\t0.0000", f"{'recip_rank':<{w}}\tall\t0.0000", f"{'num_q':<{w}}\tall\t2"]
    code, out, _ = _ir_eval(capsys, qrels, run, "--metric", "recip_rank", "-l", "2")
    assert out.splitlines()[0] == f"{'recip_rank':<22}\tall\t0.3333"


def test_overlong_line_and_duplicates_through_ir_eval(tmp_path, capsys, files):
    qrels, _ = files
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.5 t\n" + "x" * 2_000_000 + "\n")
    code, _, err = _ir_eval(capsys, qrels, run, "--metric", "mrr")
    assert code == 2 and len(err) < 400
    assert f"{run}:2: line longer than 1,048,576 bytes (a missing newline?); it starts 'xxx" in err
    run.write_text("# a comment\nq1 Q0 c1 1 0.5 t\nq2 Q0 x 1 0.5 t\n\nq1 Q0 c1 2 0.4 t\n")
    code, _, err = _ir_eval(capsys, qrels, run, "--metric", "mrr")
    assert code == 2 and f"{run}:5: document 'c1' is retrieved twice for query 'q1'" in err
    dup = tmp_path / "qrels.txt"
    dup.write_text("q1 0 a 1\nq2 0 a 1\nq1 0 a 0\n")
    code, _, err = _ir_eval(capsys, dup, run, "--metric", "mrr")
    assert code == 2 and f"{dup}:3: document 'a' is judged twice for query 'q1'" in err


def test_scores_parse_to_the_same_double_as_float(tmp_path):
    # the vectorised decimal reader must give float()'s (strtod's) double, bit for bit
    rng = np.random.default_rng(3)
    tokens = ["0", "-0.0", "+5", ".5", "5.", "007.50", "1e5", "-2.5E-3", "inf", "-inf", "Infinity",
              "123456789012345", "1234567890123456", "0.12345678901234567", "9007199254740993",
              "-99999.999999999", "3.0000000000000004"]
    for _ in range(3000):
        digits = int(rng.integers(1, 19))
        mantissa = "".join(rng.choice(list("0123456789"), digits))
        dot = int(rng.integers(0, digits + 1))
        text = mantissa[:dot] + "." + mantissa[dot:] if rng.random() < 0.8 else mantissa
        tokens.append(("-" if rng.random() < 0.3 else "") + text)
    for fixed in ("%.6f", "%.3f", "%d"):  # blocks where every score has the same form
        tokens += [fixed % v for v in rng.random(200) * 10 ** rng.integers(0, 6, 200)]
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i // 50} Q0 d{i} 1 {t} tag\n" for i, t in enumerate(tokens)))
    got = read_run_columns(path).value
    want = np.array([float(t) for t in tokens])
    assert got.tobytes() == want.tobytes()
    assert np.signbit(got[1])


@pytest.mark.parametrize("bad", ["1_000", "0x10", ".", "-", "1.2.3", "--1", "1e", "nan1"])
def test_malformed_scores(tmp_path, bad):
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 {bad} t\n")
    with pytest.raises(ValueError, match=rf":2: score '{re.escape(bad)}' is not a number"):
        read_run(path)


# ------------------------------------------------------------------ the fast path and the exact reader

from ragworkbook.corpus import trec  # noqa: E402


def _both(path):
    """The run read by the fast path (None when it hands the file over) and by the exact reader."""
    try:
        fast = trec._fast_columns(path, "run")
    except trec._NeedsExact:
        fast = None
    return fast, trec._exact_columns(path, "run")


def _rows(cols):
    return list(zip([cols.qids[i] for i in cols.q.tolist()], cols.doc.to_pylist(), cols.value.tolist(),
                    strict=True))


@pytest.mark.parametrize("text,why", [
    ("1 Q0 a 1 0.5 t\r1 Q0 b 2 0.4 t\n", "a lone carriage return (pyarrow would end a row there)"),
    ("1 Q0 a 1 0.5 t\r\n1 Q0 b 2 0.4 t\r\n", "Windows line ends"),
    ("1 Q0 a 1 0.5 t\tx\n1 Q0 b 2 0.4 t\n", "a tab (trec_eval splits there)"),
    ("1 Q0\ta 1 0.5 t x\n", "a tab in a field pyarrow does not keep"),
    ("1 Q0 a 1 0.5 t\n\n1 Q0 b 2 0.4 t\n", "a blank line"),
    ("1 Q0 a 1 0.5 t extra\n", "text after the sixth field"),
    ("# note a b c d\n1 Q0 a 1 0.5 t\n", "a comment line of six fields"),
    (" 1 Q0 a 1 0.5 t\n", "a space before the first field"),
    ("1 Q0 a 1 0.5 t \n", "a space after the last field"),
    ("1 Q0 a  0.5 t x\n", "two spaces in a row (an empty field)"),
    ("1 Q0 a 1 0.5 t\x0b\n", "a vertical tab"),
    ("1 Q0 a 1 0.5 t\x00\n", "a NUL byte"),
    (b"1 Q0 a\xff 1 0.5 t\n", "a byte that is not UTF-8"),
])
def test_what_the_fast_path_hands_to_the_exact_reader(tmp_path, text, why):
    path = tmp_path / "run.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(trec._NeedsExact):  # every one of these is the exact reader's to read or refuse
        trec._fast_columns(path, "run")
    assert _outcome(read_run_columns, path) == _outcome(lambda p: trec._exact_columns(p, "run"), path), why


def test_a_last_line_without_newline_stays_on_the_fast_path(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4 t")
    fast, exact = _both(path)
    assert fast is not None and _rows(fast) == _rows(exact) == [("1", "a", 0.5), ("1", "b", 0.4)]


def _outcome(read, path):
    """The rows read, or the message of the error raised."""
    try:
        return "rows", _rows(read(path))
    except ValueError as exc:
        return "error", str(exc)


def test_a_lone_carriage_return_is_whitespace_as_for_trec_eval(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 a 1 0.5 t\r1 Q0 b 2 0.4 t\n")
    assert read_run(path) == {"1": {"a": 0.5}}  # one line of 11 fields, the last five ignored


def test_a_long_line_of_valid_fields_is_measured_by_the_exact_reader(tmp_path):
    path = tmp_path / "run.txt"
    tag = "t" * (trec.MAX_LINE_BYTES + 10)
    path.write_text(f"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4 {tag}\n")
    assert trec._plain(np.frombuffer(path.read_bytes(), dtype=np.uint8)) is None
    with pytest.raises(ValueError, match=r":2: line longer than 1,048,576 bytes"):
        read_run_columns(path)


def test_a_pipe_is_read(tmp_path):
    import os
    import threading

    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(RUN))
    writer.start()
    try:
        got = read_run(fifo)
    finally:
        writer.join()
    assert got == read_run(_written(tmp_path, RUN))


def _written(tmp_path, text):
    path = tmp_path / "plain.txt"
    path.write_text(text)
    return path


def test_fast_path_reads_what_the_exact_reader_reads(tmp_path):
    """Random valid runs of every shape the fast path takes: the same rows, query codes and tag, and
    the query ids numbered in order of first appearance."""
    rng = np.random.default_rng(5)
    for case in range(20):
        lines = []
        for _ in range(int(rng.integers(1, 400))):
            q = f"q{int(rng.integers(0, 30))}" if case % 2 else str(int(rng.integers(0, 5)))
            d = "é" * int(rng.integers(0, 2)) + f"d{int(rng.integers(0, 10 ** int(rng.integers(1, 12))))}"
            lines.append(f"{q} Q0 {d} {int(rng.integers(1, 9))} {float(rng.normal())!r} tag{case}")
        path = tmp_path / f"run{case}.txt"
        path.write_text("\n".join(lines) + "\n")
        fast, exact = _both(path)
        assert fast is not None
        assert list(fast.qids) == list(exact.qids)
        assert fast.q.tolist() == exact.q.tolist()
        assert _rows(fast) == _rows(exact) and fast.tag == exact.tag == f"tag{case}"
        assert fast.qid_array.to_pylist() == list(fast.qids)


def test_duplicates_in_deep_rankings_are_found_among_colliding_folds(tmp_path, capsys):
    """Rankings 1000 deep: many queries hold two different ids whose folded keys share their top bits
    (candidates only); a document retrieved twice is still found, at its line."""
    from ragworkbook.metrics import ranking

    rng = np.random.default_rng(8)
    lines = [f"q{q} Q0 doc{d} {r + 1} {1000 - r} t" for q in range(60)
             for r, d in enumerate(rng.choice(10 ** 9, size=1000, replace=False).tolist())]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    qrels.write_text("q0 0 doc1 1\n")
    run.write_text("\n".join(lines) + "\n")
    cols = read_run_columns(run)
    ids = ranking._Ids(cols.doc)
    table = ranking._Table.build(ids.fold(), np.arange(60) * 1000, np.full(60, 1000), True)
    assert table.flagged(np.arange(60) * 1000, np.full(60, 1000)).size  # fold collisions, no duplicate
    assert main(["ir-eval", "-m", "num_ret", str(qrels), str(run)]) == 0
    capsys.readouterr()
    lines[30_500] = lines[30_000].replace(" 1 1000 ", " 501 500 ")  # query 30's first document again
    run.write_text("\n".join(lines) + "\n")
    assert main(["ir-eval", "-m", "num_ret", str(qrels), str(run)]) == 2
    assert f"{run}:30501: document '{lines[30_000].split()[2]}' is retrieved twice for query 'q30'" in \
        capsys.readouterr().err

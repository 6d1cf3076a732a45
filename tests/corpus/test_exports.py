"""The files other tools write, read as they write them: each export in tests/data/exports was written by
the tool's own export method (scripts/make_export_fixtures.py, MANIFEST.json names tool and version), and
each reads to, and scores exactly as, the same samples in JSON Lines."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from ragworkbook.corpus.answers import load_answer_records
from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.evaluation.outputs import evaluate_outputs

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"
MANIFEST = json.loads((EXPORTS / "MANIFEST.json").read_text(encoding="utf-8"))
REFERENCE = {"all": EXPORTS / "reference.jsonl", "deepeval": EXPORTS / "reference_deepeval.jsonl"}
#: metrics that need no model: generation against the reference, and retrieval by id (deepeval keeps no ids)
GENERATION = ["rouge_l", "bleu", "exact_match", "token_f1"]
METRICS = {"all": ["precision@3", "recall@3", "mrr@3", "ndcg@3", *GENERATION], "deepeval": GENERATION}
EXPORTED = sorted(n for n, info in MANIFEST.items() if not n.startswith("reference"))


def _fields(answers):
    return [(r.id, r.question, r.answer, r.has_contexts, r.contexts, list(r.context_ids), r.reference,
             r.relevant_ids, r.reference_contexts) for r in answers]


def test_every_tool_and_export_method_is_there():
    tools = " ".join(info["tool"] for info in MANIFEST.values())
    for tool in ("ragas 0.4.3", "datasets", "deepeval", "pandas", "pyarrow"):
        assert tool in tools, f"no fixture written by {tool}: run scripts/make_export_fixtures.py where it is"
    calls = {info.get("call", "") for info in MANIFEST.values()}
    for call in ("EvaluationDataset.to_jsonl", "EvaluationDataset.to_csv", "Dataset.to_csv(index=False)",
                 "Dataset.to_json()", "Dataset.to_parquet()", "EvaluationDataset.save_as(file_type='csv')",
                 "EvaluationDataset.save_as(file_type='json')",
                 "EvaluationDataset.save_as(file_type='jsonl')",
                 "DataFrame.to_csv(index=False)", "DataFrame.to_parquet(index=False)"):
        assert call in calls
    orients = {c for c in calls if c.startswith("DataFrame.to_json")}
    assert len(orients) == 6  # records, split, index, columns, table, and records as JSON Lines
    assert all((EXPORTS / n).stat().st_size < 20_000 for n in MANIFEST)  # small files


def test_the_fixtures_hold_the_forms_that_trip_readers():
    hf = (EXPORTS / "ragas_hf.csv").read_text(encoding="utf-8")
    assert "['p7-c1' 'p7-c2']" in hf  # numpy's text: read as 'p7-c1p7-c2' before
    assert "\n 'Multi-head" in hf  # an array wrapped over lines inside a quoted cell
    assert "['p7-c1', 'p7-c2']" in (EXPORTS / "ragas.csv").read_text(encoding="utf-8")  # a Python literal
    deepeval = (EXPORTS / "deepeval.csv").read_text(encoding="utf-8")
    assert "64.|Multi-head" in deepeval  # '|'-joined
    line = json.loads((EXPORTS / "deepeval.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert isinstance(line["retrieval_context"], str)  # deepeval's JSON Lines join them too
    assert (EXPORTS / "hf.parquet").read_bytes()[:4] == b"PAR1"


@pytest.mark.parametrize("name", EXPORTED)
def test_each_export_reads_as_the_same_samples_in_jsonl(name):
    got = load_answer_records(EXPORTS / name)
    want = load_answer_records(REFERENCE[MANIFEST[name]["fields"]])
    assert _fields(got) == _fields(want)
    assert len(got) == 4 and got.records[1].context_ids[:2] in (["p7-c1", "p7-c2"], [None, None])


@pytest.fixture(scope="module")
def reference_scores():
    return {kind: evaluate_outputs(path, metrics=METRICS[kind], progress=False)
            for kind, path in REFERENCE.items()}


@pytest.mark.parametrize("name", EXPORTED)
def test_each_export_scores_exactly_as_jsonl(name, reference_scores):
    kind = MANIFEST[name]["fields"]
    want = reference_scores[kind]
    got = evaluate_outputs(EXPORTS / name, metrics=METRICS[kind], progress=False)
    for metric in METRICS[kind]:
        assert got.values(metric) == want.values(metric), metric
        assert got.outcomes(metric) == want.outcomes(metric), metric


def test_the_reference_scores_are_the_intended_ones(reference_scores):
    """precision@3 and recall@3 of the question whose ids numpy printed glued ('p7-c1' 'p7-c2')."""
    report = reference_scores["all"]
    assert report.values("precision@3")[1] == pytest.approx(1 / 3)  # p7-c1 of 3 slots (0.000 when glued)
    assert report.values("recall@3")[1] == pytest.approx(1 / 2)  # p7-c1 of p7-c1, p7-c3
    assert report.values("rouge_l")[0] is not None


def test_a_numpy_cell_that_would_glue_or_lose_elements_is_refused_with_line_and_fix(tmp_path):
    path = tmp_path / "a.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["user_input", "response", "retrieved_context_ids", "reference_context_ids"])
        w.writerow(["Q1?", "A", "['p7-c1' 'p7-c2']", "['p7-c1']"])  # fine: two ids
        w.writerow(["Q2?", "A", "['p7-c1', 'p7-c2' 'p7-c3']", "['p7-c1']"])  # a literal Python would glue
        w.writerow(["Q3?", "A", str([f"x{i}" for i in range(3)]).replace(", 'x1'", " ..."), "[]"])
    with pytest.raises(DatasetError) as exc:
        load_answer_records(path)
    text = str(exc.value)
    assert "line 3: field 'retrieved_context_ids'" in text and "without a comma" in text
    assert "line 4: field 'retrieved_context_ids'" in text and "summarised" in text
    assert "line 2" not in text
    assert "JSON array" in text  # the fix


def test_pandas_orients_name_the_record_in_a_problem(tmp_path):
    bad = tmp_path / "split.json"
    data = json.loads((EXPORTS / "pandas_split.json").read_text(encoding="utf-8"))
    data["data"][2][data["columns"].index("user_input")] = ""
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"orient='split'\), record 3 \(label '2'\).*user_input"):
        load_answer_records(bad)


def test_parquet_through_a_pipe_and_a_broken_parquet_file(tmp_path):
    plain = tmp_path / "answers"  # no suffix: read as its first bytes show
    shutil.copy(EXPORTS / "pandas.parquet", plain)
    assert _fields(load_answer_records(plain)) == _fields(load_answer_records(REFERENCE["all"]))
    broken = tmp_path / "b.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match="not a readable Parquet file"):
        load_answer_records(broken)

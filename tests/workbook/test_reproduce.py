import json
import re

import numpy as np
import pytest

from ragworkbook.paths import repo_root
from ragworkbook.workbook.reproduce import (
    ROW_IDS,
    STATUSES,
    _show,
    format_table,
    ndcg_variants,
    reproduce_all,
    to_frame,
)

FAST = ["A1", "A2", "A3", "A4", "A5", "A6", "B8", "B9"]
NUMBERS_MD = (repo_root() / "NUMBERS.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def fast_rows():
    return {r.id: r for r in reproduce_all(only=FAST)}


def test_every_numbers_md_row_is_listed():
    assert ROW_IDS == ("A1", "A2", "A3", "A4", "A5", "A6", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8",
                       "B9", "C1", "C2", "C3", "C4", "D1", "D2", "D3", "D4")
    table_ids = re.findall(r"^\| ([A-D]\d) \|", NUMBERS_MD, flags=re.MULTILINE)
    assert tuple(table_ids) == ROW_IDS


@pytest.mark.parametrize("ids, n_figures", [
    (["A1", "A2", "A3", "A4", "A6", "B1", "B2", "B3", "B4", "B5", "B6", "B8", "B9"], 16),
    (["D1", "D2", "D3"], 15),
    pytest.param(["C3"], 4, marks=pytest.mark.model),  # C3 computes an embedding similarity
])
def test_every_documented_figure_is_the_one_numbers_md_prints(ids, n_figures):
    """The figures the code holds a row to are the ones NUMBERS.md prints, in that row (no drift)."""
    table = re.finditer(r"^\| ([A-D]\d) \|.*$", NUMBERS_MD, flags=re.MULTILINE)
    rows = {m.group(1): m.group(0) for m in table}
    checked = 0
    for r in reproduce_all(only=ids):
        for f in r.figures:
            if f.documented:
                assert f.documented.rstrip("%") in rows[r.id], (r.id, f.name, f.documented)
                checked += 1
    assert checked == n_figures


def test_exact_rows_reproduce(fast_rows):
    for rid in ("A1", "A2", "A4", "B9"):
        r = fast_rows[rid]
        assert r.status == "exact", (rid, r.reproduced)
        assert all(f.matches for f in r.figures)
    assert fast_rows["A1"].reproduced == "Recall@3 = 0.33, Recall@5 = 0.67"
    assert fast_rows["A2"].reproduced == "MRR = 0.611"
    assert fast_rows["A4"].reproduced == "hallucination rate = 8.0%"
    assert fast_rows["A5"].status == "table"  # a table of thresholds: no figure, not counted as exact


def test_check_rows_explain(fast_rows):
    a3 = fast_rows["A3"]
    assert a3.status == "differs"
    assert a3.reproduced == "NDCG@3 = 0.840, NDCG@5 = 0.930"
    assert "1/rank discount" in a3.reason and "0.876 is given by none" in a3.reason
    b8 = fast_rows["B8"]
    assert b8.status == "differs" and "ceiling of 0.9" in b8.reason
    assert [f.shown for f in b8.figures] == ["0.20", "0.18"]
    assert fast_rows["A6"].status == "not-reproducible"


def test_ndcg_variants_standard_first():
    t = ndcg_variants([3, 0, 2, 1, 0])
    assert t.iloc[0]["NDCG@3"] == pytest.approx(0.8400, abs=1e-4)
    assert t.loc["linear gain, 1/rank discount", "NDCG@3"] == pytest.approx(11 / 13)


def test_show_never_rounds_to_a_printed_integer():
    assert _show(0.2, "0") == "0.200"
    assert _show(0.0, "0") == "0"
    assert _show(0.08, "8.0%") == "8.0%"


def test_table_and_frame(fast_rows):
    rows = list(fast_rows.values())
    text = format_table(rows)
    assert text.splitlines()[0].startswith("A1  exact")
    assert text.endswith("4 exact, 2 differs, 1 not-reproducible, 1 table")
    df = to_frame(rows)
    assert df["status"].tolist() == [EXPECTED[i] for i in FAST]
    assert set(df["status"]) < set(STATUSES)
    json.dumps([r.to_dict() for r in rows])  # serialisable


def test_unknown_row():
    with pytest.raises(ValueError, match="unknown row id.*Z9.*rows are A1"):
        reproduce_all(only=["Z9"])


EXPECTED = {"A1": "exact", "A2": "exact", "A3": "differs", "A4": "exact", "A5": "table",
            "A6": "not-reproducible", "B1": "exact", "B2": "exact", "B3": "exact", "B4": "exact",
            "B5": "exact", "B6": "exact", "B7": "environment", "B8": "differs", "B9": "exact",
            "C1": "environment", "C2": "environment", "C3": "differs", "C4": "environment",
            "D1": "exact", "D2": "exact", "D3": "differs", "D4": "environment"}


@pytest.mark.model
@pytest.mark.usefixtures("clean_env")
def test_all_rows_with_the_replayed_generator(carbon, sentence_transformer):
    """Every row, the model rows (B7, C2) replayed from notebook 14's recording."""
    from ragworkbook.llm import get_generator
    from ragworkbook.paths import data_path

    gen = get_generator(recording=data_path("recordings", "14_documented_numbers.json"))
    rows = reproduce_all(gen)
    assert {r.id: r.status for r in rows} == EXPECTED
    by = {r.id: r for r in rows}
    for r in rows:
        if r.documented_status == "exact":
            # C3's similarity is documented as wording-dependent: only its lexical figures are exact
            figs = [f for f in r.figures if f.held]
            loose = [f.name for f in r.figures if not f.held]
            assert loose == (["semantic similarity"] if r.id == "C3" else []), r.id
            compared = [f.matches for f in figs if f.matches is not None]
            assert compared and all(compared), r.id
            assert not r.breaks_its_documented_status, r.id  # reproduce exits 0
        assert r.reason, r.id  # every row says why
    assert by["B4"].reproduced == "NDCG@5 (2^rel-1) = 0.632, NDCG@5 (linear) = 0.689"
    assert by["B6"].reproduced == "relevant / retrieved = 0.8, RAGAS position-weighted = 0.679"
    assert by["C3"].reproduced.startswith("BLEU = 32.9, ROUGE-L = 0.68, METEOR = 0.76")
    # C3 differs by the legend's rule (not every figure reproduced), and says which lead-ins give 0.89
    sims = by["C3"].details["lead_in_similarity"]
    assert f"{sims['The paper reports']:.2f}" != "0.89" and any(f"{v:.2f}" == "0.89" for v in sims.values())
    assert "'The paper states'" in by["C3"].reason and "not reproduced without knowing it" in by["C3"].reason
    assert len(by["C2"].details["answers"]) == 8
    assert "replay:" in by["C2"].reason
    # B7 is the mean MiniLM cosine of the judge's replayed questions to the example's question
    b7 = by["B7"]
    generated = b7.details["generated_questions"]
    assert len(generated) == 3
    q, *g = sentence_transformer.encode([carbon["question"], *generated], normalize_embeddings=True)
    assert b7.figures[0].value == pytest.approx(float((np.stack(g) @ q).mean()), abs=1e-5)

"""ragworkbook.columns: the pyarrow <-> numpy helpers (no pandas import on the ir-eval path) and Columns."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ragworkbook.columns import Columns, found_or, mask_of, numbers_of, row_indices, string_array


def test_numbers_and_masks_of_sliced_and_chunked_arrays():
    values = pa.chunked_array([pa.array([1.5, 2.5, 3.5]), pa.array([4.5])])
    assert numbers_of(values).tolist() == [1.5, 2.5, 3.5, 4.5]
    assert numbers_of(pa.array([1, 2, 3, 4], type=pa.int32())[1:3]).tolist() == [2, 3]
    flags = pc.greater(pa.array(np.arange(20)), 9)[3:17]  # an offset inside a byte of the bitmap
    assert mask_of(flags).tolist() == [i > 9 for i in range(3, 17)]
    with pytest.raises(ValueError, match="nulls"):
        numbers_of(pa.array([1.0, None]))


def test_found_or_fills_the_missing():
    found = pc.index_in(pa.array(["b", "x", "a", "y"]), value_set=pa.array(["a", "b"]))
    assert found_or(found, -1).tolist() == [1, -1, 0, -1]
    assert found_or(found, np.array([10, 11, 12, 13])).tolist() == [1, 11, 0, 13]
    assert found_or(found[2:], -1).tolist() == [0, -1]


def test_string_array_and_row_indices():
    ids = ["q1", "é", "", "q10"]
    arr = string_array(ids)
    assert arr.to_pylist() == ids
    assert arr.take(row_indices(np.array([3, 0]))).to_pylist() == ["q10", "q1"]
    assert string_array([]).to_pylist() == []


def test_columns_carry_the_query_ids_as_arrow_or_make_them():
    cols = Columns.from_dict({"q2": {"a": 1}, "q1": {"b": 0}})
    assert cols.qid_array is None and cols.qids_arrow.to_pylist() == ["q2", "q1"]
    with pytest.raises(ValueError, match="qid_array holds 1 ids, qids 2"):
        Columns(["a", "b"], np.array([0]), pa.array(["d"]), np.array([1.0]), qid_array=pa.array(["a"]))


def test_ir_eval_never_imports_pandas(tmp_path):
    """pyarrow imports pandas (about half a second) as soon as ``pa.array`` or ``to_numpy`` is called;
    ir-eval must not."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4 t\nq2 Q0 c 1 0.1 t\n")
    code = ("import sys; from ragworkbook.cli import main; "
            f"assert main(['ir-eval', '-q', {str(qrels)!r}, {str(run)!r}]) == 0; "
            "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"

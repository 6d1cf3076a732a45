import numpy as np
import pytest

from ragworkbook.workbook.quality_model import (
    ceiling_for,
    end_to_end_quality,
    plot_quality_heatmap,
    quality_grid,
)


def test_product_model_and_ceiling():
    assert end_to_end_quality(0.2, 1.0) == pytest.approx(0.2)
    assert end_to_end_quality(0.2, 1.0, ceiling=0.9) == pytest.approx(0.18)
    assert ceiling_for(0.2, 1.0, 0.18) == pytest.approx(0.9)
    np.testing.assert_allclose(end_to_end_quality([0.5, 1.0], [0.5, 0.5]), [0.25, 0.5])


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"retrieval must be a fraction in \[0, 1\]"):
        end_to_end_quality(1.2, 1.0)
    with pytest.raises(ValueError, match="generation contains NaN"):
        end_to_end_quality(0.2, float("nan"))
    with pytest.raises(ValueError, match=r"ceiling must be in \(0, 1\]"):
        end_to_end_quality(0.2, 1.0, ceiling=0)
    with pytest.raises(ValueError, match="no ceiling in"):
        ceiling_for(0.2, 0.5, 0.5)


def test_grid_and_plot():
    r, g, q = quality_grid(3)
    assert r.tolist() == [0.0, 0.5, 1.0]
    assert q[2, 1] == pytest.approx(0.5)  # generation 1.0 (row), retrieval 0.5 (column)
    import matplotlib

    matplotlib.use("Agg")
    ax = plot_quality_heatmap(steps=3, points=[(0.5, 0.5, "x")])
    assert ax.get_xlabel() == "retrieval quality"
    import matplotlib.pyplot as plt

    plt.close("all")

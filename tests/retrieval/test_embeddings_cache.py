"""A corrupt or wrong-shaped embedding cache file is recomputed, never returned (no model loaded)."""

from __future__ import annotations

import numpy as np
import pytest

from ragworkbook import embeddings


@pytest.fixture()
def fake_model(monkeypatch):
    calls = []

    def encode_now(texts, model_path, batch_size):
        calls.append(list(texts))
        rng = np.random.default_rng(len(texts))
        v = rng.normal(size=(len(texts), 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    monkeypatch.setattr(embeddings, "_encode_now", encode_now)
    monkeypatch.setattr(embeddings, "model_fingerprint", lambda path=None: "fake")
    return calls


@pytest.mark.parametrize("damage", [
    lambda f: f.write_bytes(b"\x93NUMPY garbage"),                      # corrupt header
    lambda f: f.write_bytes(f.read_bytes()[:100]),                      # truncated
    lambda f: np.save(f, np.zeros((2, 100), dtype=np.float32)),          # wrong width
    lambda f: np.save(f, np.zeros((3, 384), dtype=np.float32)),          # wrong number of rows
    lambda f: np.save(f, np.full((2, 384), np.nan, dtype=np.float32)),   # not finite
    lambda f: np.save(f, np.zeros((2, 384), dtype=np.float64)),          # wrong dtype
])
def test_a_damaged_cache_file_is_recomputed_and_rewritten(tmp_path, fake_model, damage):
    texts = ["one", "two"]
    first = embeddings.encode(texts, cache=tmp_path)
    (file,) = tmp_path.glob("*.npy")
    damage(file)
    again = embeddings.encode(texts, cache=tmp_path)
    assert len(fake_model) == 2  # encoded again, not read back
    assert np.array_equal(again, first) and again.shape == (2, 384)
    assert np.array_equal(np.load(file), first)  # the file was repaired
    embeddings.encode(texts, cache=tmp_path)
    assert len(fake_model) == 2  # and is used from then on

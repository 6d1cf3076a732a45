"""The on-disk embedding cache: keyed by model and texts, reused, never stale."""

import numpy as np
import pytest

from ragworkbook import embeddings


@pytest.mark.model
def test_cache_hit_miss_and_key(tmp_path, monkeypatch):
    calls = []
    real = embeddings._encode_now

    def counting(texts, model_path, batch_size):
        calls.append(list(texts))
        return real(texts, model_path, batch_size)

    monkeypatch.setattr(embeddings, "_encode_now", counting)
    a = embeddings.encode(["one text", "another text"], cache=tmp_path)
    b = embeddings.encode(["one text", "another text"], cache=tmp_path)
    assert len(calls) == 1 and np.array_equal(a, b)
    assert a.shape == (2, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    embeddings.encode(["one text", "changed text"], cache=tmp_path)
    assert len(calls) == 2
    embeddings.encode(["another text", "one text"], cache=tmp_path)  # order is part of the key
    assert len(calls) == 3
    assert len(list(tmp_path.glob("*.npy"))) == 3


def test_key_depends_on_model(tmp_path):
    fake = tmp_path / "model"
    fake.mkdir()
    (fake / "config.json").write_text('{"a": 1}')
    k1 = embeddings.cache_key(["x"], str(fake))
    (fake / "config.json").write_text('{"a": 2}')
    embeddings.model_fingerprint.cache_clear()
    k2 = embeddings.cache_key(["x"], str(fake))
    embeddings.model_fingerprint.cache_clear()
    assert k1 != k2
    assert embeddings.cache_key(["x"]) != k1


def test_encode_rejects_single_string():
    with pytest.raises(TypeError, match="not a single string"):
        embeddings.encode("text")
    assert embeddings.encode([]).shape == (0, 384)

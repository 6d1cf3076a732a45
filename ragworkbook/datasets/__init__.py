"""Public data sets, downloaded on demand, checked and cached (nothing third-party is shipped).

- :mod:`ragworkbook.datasets.catalogue`: each data set declared once (licence, citation, the
  upstream URL of each file at a pinned commit, its sha256 and size, the loader that parses it);
- :mod:`ragworkbook.datasets.cache`: download (progress, bounded time-outs, atomic, verified),
  the cache in ``$RAGWORKBOOK_CACHE/datasets``, the mirror ``$RAGWORKBOOK_DATASETS_MIRROR``.

``ragworkbook datasets list | fetch NAME | path NAME | info NAME`` is the command line.
"""

from ragworkbook.datasets.cache import (
    MIRROR_ENV,
    ChecksumMismatch,
    DatasetMissing,
    cache_root,
    dataset_dir,
    dataset_file,
    fetch,
    is_cached,
)
from ragworkbook.datasets.catalogue import CATALOGUE, DataFile, Dataset, get

__all__ = ["CATALOGUE", "DataFile", "Dataset", "get", "MIRROR_ENV", "ChecksumMismatch", "DatasetMissing",
           "cache_root", "dataset_dir", "dataset_file", "fetch", "is_cached"]

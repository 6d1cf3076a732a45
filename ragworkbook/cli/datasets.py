"""``ragworkbook datasets``: the public data sets, downloaded on demand."""

from __future__ import annotations

import argparse

from ragworkbook.cli._common import Subparsers, add_command


def cmd_datasets(args: argparse.Namespace) -> int:
    """``ragworkbook datasets list | fetch NAME | path NAME | info NAME``: the public data sets the
    workbook downloads on demand (``ragworkbook.datasets``)."""
    from ragworkbook.datasets import CATALOGUE, cache_root, dataset_dir, fetch, get, is_cached
    from ragworkbook.datasets.cache import DatasetMissing, source_of

    action = args.datasets_action
    if action in (None, "list"):
        print(f"{'name':<12} {'cached':<7} {'size':>9}  title")
        for ds in CATALOGUE.values():
            cached = "yes" if is_cached(ds.name) else "no"
            print(f"{ds.name:<12} {cached:<7} {ds.size / 1e6:>7.2f}MB  {ds.title}")
        print(f"cache: {cache_root()}")
        return 0
    ds = get(args.name)
    if action == "fetch":
        paths = fetch(ds.name, progress=not args.no_progress)
        print(f"{ds.name}: {len(paths)} files checked (sha256) in {dataset_dir(ds.name)}")
        return 0
    if action == "path":
        if not is_cached(ds.name):
            raise DatasetMissing(f"data set {ds.name!r} is not in the cache {cache_root()}; get it with "
                                 f"`ragworkbook datasets fetch {ds.name}`")
        print(dataset_dir(ds.name))
        return 0
    print(f"{ds.name}: {ds.title}")
    print(f"  licence:  {ds.licence}")
    print(f"  citation: {ds.citation}")
    print(f"  homepage: {ds.homepage}")
    print(f"  commit:   {ds.commit}")
    print(f"  parser:   {ds.parser}")
    print(f"  cached:   {'yes, in ' + str(dataset_dir(ds.name)) if is_cached(ds.name) else 'no'}")
    for f in ds.files:
        print(f"  {f.name}  {f.size:,} bytes  sha256 {f.sha256}\n    from {source_of(f)}")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add the command, its options and their help to ``sub``."""
    p = add_command(
        sub, "datasets", cmd_datasets,
        help="the public data sets, downloaded on demand (list, fetch, path, info)",
        description="The public labelled data sets the workbook reads (WikiEval, RAGChecker's "
        "meta-evaluation, RAGTruth, trec_eval's test suite) are not shipped: each is downloaded on first "
        "use from its public home at a pinned commit (or from $RAGWORKBOOK_DATASETS_MIRROR, a folder or "
        "http(s) URL laid out like ../shared/data), checked against its sha256 and kept in "
        "$RAGWORKBOOK_CACHE/datasets.")
    dsub = p.add_subparsers(dest="datasets_action", metavar="ACTION")
    dsub.add_parser("list", help="every data set, whether it is cached, its size")
    for action, text in (("fetch", "download NAME into the cache (checked), with progress"),
                         ("path", "print the cache folder of NAME (exit 2 if it is not cached)"),
                         ("info", "licence, citation, source and checksum of every file of NAME")):
        q = dsub.add_parser(action, help=text)
        q.add_argument("name", metavar="NAME", help="a data set of `ragworkbook datasets list`")
        if action == "fetch":
            q.add_argument("--no-progress", action="store_true", help="no progress bar")

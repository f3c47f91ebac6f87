"""``cover data list`` / ``cover data fetch NAME|all``: the public files COVER's demo and
studies use, downloaded and verified (sha256) into the data folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import InputPath, OutputFolder, Subparsers, add_command

#: ``--dir`` of both actions: read by ``list``, written into by ``fetch``.
DIR_HELP = "data folder (default $COVER_DATA_DIR, else the platform cache)"


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "data",
                    help="list or fetch the public data files the demo and studies use",
                    description="The registry of public data files COVER's demo and studies "
                    "use: list them, or download and verify them (sha256) into a cache folder.",
                    example="cover data fetch all")
    actions = p.add_subparsers(dest="action", required=True)
    ls = add_command(actions, "list", help="every registered file: name, size, license, source",
                     description="List every registered file: name, size, license, source.",
                     example="cover data list --dir ~/cover-data")
    ls.add_argument("--dir", type=InputPath, help=DIR_HELP)
    ls.set_defaults(func=run)
    fe = add_command(actions, "fetch", help="download and verify files (names, or all)",
                     description="Download the named files (or all) and verify their sha256.",
                     example="cover data fetch all --dir ~/cover-data")
    fe.add_argument("names", nargs="+", metavar="NAME", help="a name from `cover data list`, "
                    "or all")
    fe.add_argument("--dir", type=OutputFolder, help=DIR_HELP)
    fe.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.io import fetch as data

    folder = Path(args.dir) if args.dir else None
    if args.action == "fetch":
        entries = data.resolve(args.names)
        where = data.fetch(entries, folder)
        print(f"{len(entries)} file(s) verified (sha256) in {where}")
        return 0
    try:
        where_txt = str(folder or data.cache_dir())
        cached = [data.is_cached(e, Path(where_txt)) for e in data.REGISTRY.values()]
    except data.FetchError as exc:  # no pooch: the list still helps
        where_txt, cached = f"(none: {exc})", [False] * len(data.REGISTRY)
    rows = [["name", "size", "here", "what; license"]]
    rows += [[e.name, f"{e.size / 1e6:.1f} MB", "yes" if c else "no", f"{e.what}; {e.license}"]
             for e, c in zip(data.REGISTRY.values(), cached, strict=True)]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=False)) + "  " + r[3])
    print(f"\ndata folder: {where_txt}\nsources, at pinned commits (mirror: $COVER_DATA_URL):")
    for e in data.REGISTRY.values():
        print(f"{e.name}: {e.source_url}")
    return 0

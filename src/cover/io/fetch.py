"""How to download the public files COVER's demo, studies and golden tests read (``cover
data``; the files are listed in :mod:`cover.io.data_registry`).

Each :class:`DataFile` names the file's source repository at a pinned commit, its
raw-file URL there, its sha256 and size, and its license. :func:`fetch` downloads
with pooch (``pip install 'cover-grounding[fetch]'``) into the data folder, laid out
like the project's shared data (``qvhighlights/annotations/...``), and checks the
sha256 of every file before it is used:

* the folder is ``$COVER_DATA_DIR``, else the platform cache (``pooch.os_cache("cover")``);
* ``$COVER_DATA_URL`` replaces GitHub by a mirror laid out like the data folder
  (``$COVER_DATA_URL/qvhighlights/annotations/highlight_val_release.jsonl``).

COVER never ships the files: the licenses of several (CC BY-NC-SA annotations,
predictions without a stated license) allow research use only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cover.errors import CoverError
from cover.io.data_registry import REGISTRY, DataFile

__all__ = ["REGISTRY", "DataFile", "FetchError", "by_path", "cache_dir", "fetch", "is_cached",
           "resolve", "sha256_of"]

FETCH_EXTRA = "pip install 'cover-grounding[fetch]'"


class FetchError(CoverError):
    """A file could not be downloaded or did not match its checksum."""


def _pooch() -> Any:
    try:
        import pooch
    except ImportError:
        raise FetchError(f"downloading data needs pooch: {FETCH_EXTRA}") from None
    return pooch


def cache_dir() -> Path:
    """``$COVER_DATA_DIR``, else the platform cache folder of COVER."""
    env = os.environ.get("COVER_DATA_DIR")
    if env:
        return Path(env)
    return Path(_pooch().os_cache("cover"))


def by_path(paths: Iterable[str]) -> list[DataFile]:
    """The registry entries of data-folder paths; an unknown path is an error."""
    index = {f.path: f for f in REGISTRY.values()}
    unknown = [p for p in paths if p not in index]
    if unknown:
        raise FetchError(f"no public source is registered for {', '.join(unknown)}")
    return [index[p] for p in paths]


def resolve(names: Sequence[str]) -> list[DataFile]:
    """Entries for ``names`` (``all`` = every file); an unknown name lists the known ones."""
    if "all" in names:
        return list(REGISTRY.values())
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise FetchError(f"unknown data file {', '.join(unknown)}; known: "
                         f"{', '.join(REGISTRY)} (or all)")
    return [REGISTRY[n] for n in dict.fromkeys(names)]


def sha256_of(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_cached(entry: DataFile, folder: Path | None = None) -> bool:
    """The file is in the folder with the right size (the sha256 is checked on fetch)."""
    p = (folder or cache_dir()) / entry.path
    return p.is_file() and p.stat().st_size == entry.size


def fetch(entries: Sequence[DataFile], folder: Path | None = None, *,
          progress: bool = True) -> Path:
    """Download ``entries`` into ``folder`` (default :func:`cache_dir`), verify each
    sha256, and return the folder. A file already there with the right hash is kept."""
    pooch = _pooch()
    folder = folder or cache_dir()
    try:
        import tqdm  # noqa: F401  (pooch draws its progress bar with it)
    except ImportError:
        progress = False
    for e in entries:
        url = e.url()
        target = folder / e.path
        try:
            pooch.retrieve(url, known_hash=f"sha256:{e.sha256}", fname=target.name,
                           path=target.parent, progressbar=progress)
        except ValueError as exc:
            if "hash" not in str(exc).lower():
                raise
            raise FetchError(
                f"{e.name}: the file downloaded from {url} does not match its sha256 "
                f"{e.sha256} (it was removed). The source or mirror serves a different "
                "file: check $COVER_DATA_URL, or fetch from the pinned source "
                f"{e.source_url}.") from None
        except OSError as exc:  # requests' errors derive from OSError
            raise FetchError(
                f"{e.name}: could not download {url} ({_why(exc)}). Check the network (or "
                f"that the mirror in $COVER_DATA_URL is up), then run `cover data fetch {e.name}` "
                f"again; or place the file at {target} yourself.") from None
    return folder


def _why(exc: OSError) -> str:
    """A short reason for a failed download, without the HTTP library's reprs."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    name = type(exc).__name__
    if "Timeout" in name:
        return "timed out"
    if "Connection" in name:
        return "no server answered"
    return name

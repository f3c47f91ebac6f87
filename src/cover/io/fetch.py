"""The public files COVER's demo and studies use, and how to download them (``cover data``).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cover.errors import CoverError

FETCH_EXTRA = "pip install 'cover-grounding[fetch]'"


class FetchError(CoverError):
    """A file could not be downloaded or did not match its checksum."""


@dataclass(frozen=True)
class DataFile:
    """One public file: where it comes from, what it must hash to, and its license."""

    name: str
    path: str  # inside the data folder, e.g. "qvhighlights/annotations/x.jsonl"
    repo: str  # "owner/name" on GitHub
    commit: str
    repo_path: str
    sha256: str
    size: int
    license: str
    what: str

    @property
    def source_url(self) -> str:
        """The file in its repository at the pinned commit."""
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.repo_path}"

    @property
    def raw_url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.repo_path}"

    def url(self, base: str | None = None) -> str:
        """The raw URL, or the mirror's (``$COVER_DATA_URL`` or ``base``) when set."""
        base = base if base is not None else os.environ.get("COVER_DATA_URL")
        return f"{base.rstrip('/')}/{self.path}" if base else self.raw_url


_MDETR = ("jayleicn/moment_detr", "b7e553ac3b0c898ee6b85e03ee507c064eab89ca")
_QD = ("wjun0830/QD-DETR", "56c63b2c75c5673dfe693f3ae9438f5fc1f1679a")
_LA = ("dgymjol/qd_la_detr", "61d3f592bcb6db9bbd258c933a0b2f8918c5f31e")
_QVH_LICENSE = "CC BY-NC-SA 4.0 (QVHighlights annotations)"
_PRED_LICENSE = "MIT (code repository); predictions on QVHighlights, CC BY-NC-SA 4.0"

#: Every file COVER's demo, studies and golden tests read, by name.
REGISTRY: dict[str, DataFile] = {f.name: f for f in [
    DataFile("qvh-val-gt", "qvhighlights/annotations/highlight_val_release.jsonl", *_MDETR,
             "data/highlight_val_release.jsonl",
             "f668a1eaea156ec5315e14718999cea043a8cf948d3cafbd8e8d655318c3cd02", 821101,
             _QVH_LICENSE, "QVHighlights val ground truth (1550 queries)"),
    DataFile("qvh-test-gt", "qvhighlights/annotations/highlight_test_with_gt.jsonl", *_MDETR,
             "data/highlight_test_with_gt.jsonl",
             "bd50ec6bb5dd3f72571126ba5fdc7418efdd9219a9487984e483a02e2ce5d493", 824658,
             _QVH_LICENSE, "QVHighlights test ground truth (1542 queries; public since the "
             "benchmark server closed): the one labelled test split"),
    DataFile("moment-detr-sample", "qvhighlights/moment_detr/sample_val_preds.jsonl", *_MDETR,
             "standalone_eval/sample_val_preds.jsonl",
             "df3227ef84985db846f102e75cda43b5f9f962d12b95b990028eed88f1901b40", 2399408,
             _PRED_LICENSE, "Moment-DETR sample val predictions"),
    DataFile("moment-detr-clip",
             "qvhighlights/moment_detr/inference_hl_val_test_code_preds.jsonl", *_MDETR,
             "run_on_video/moment_detr_ckpt/inference_hl_val_test_code_preds.jsonl",
             "4b38328e316be63a2e7ca667566a76223ffe7b349a0b2edce66f028673f393ab", 2443100,
             _PRED_LICENSE, "Moment-DETR (CLIP-only checkpoint) val predictions"),
    DataFile("qd-detr-video", "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
             *_QD, "results/video_checkpoint/best_hl_val_preds.jsonl",
             "0331562d7d1f00aa32c8b7afbde1e84bc64c0a347983187996c80b1627d902f0", 1968913,
             _PRED_LICENSE, "QD-DETR (video) val predictions: the demo's grounder"),
    DataFile("qd-detr-audio", "qvhighlights/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
             *_QD, "results/audio_checkpoint/best_hl_val_preds.jsonl",
             "177cbedb24f4662673b5aaf210206735a29a348760bc0f022de31a80d9c3df94", 1967849,
             _PRED_LICENSE, "QD-DETR (video+audio) val predictions"),
    DataFile("qd-detr-clip", "qvhighlights/qd_detr/onlyclip_best_hl_val_preds.jsonl", *_QD,
             "results/QDDETR_onlyclip/best_hl_val_preds.jsonl",
             "05f2503a642266740575a9bc058da3c5919c737024fe1607d7007f783c73acdd", 1960420,
             _PRED_LICENSE, "QD-DETR (CLIP-only) val predictions"),
    DataFile("eatr", "qvhighlights/eatr/best_hl_val_preds.jsonl",
             "jinhyunj/EaTR", "384f09396a32741a73106d2e147bde54cbcce48f",
             "eatr_ckpt/best_hl_val_preds.jsonl",
             "12b47c9bd916ee30ca1fc10fc45e322d8fa5430a8c526ed1ffa8060f2e17bc6f", 2424193,
             _PRED_LICENSE, "EaTR val predictions"),
    DataFile("univtg", "qvhighlights/univtg/univtg_val_preds.jsonl",
             "showlab/UniVTG", "32659ac7aeba21742a63274f30eba785fc57e247",
             "plot/qvhl/univtg.jsonl",
             "66575c9dbc57d92ca7e4148dc2178194aaefa4732d356eb3abdb642f295025f2", 3025612,
             _PRED_LICENSE, "UniVTG val predictions"),
    DataFile("vtg-gpt", "qvhighlights/vtg_gpt/infer_val.jsonl",
             "YoucanBaby/VTG-GPT", "9d6606140edb36c89ea5ce96a0dc5e50361d108a",
             "outputs/qvhighlights/infer_val.jsonl",
             "2bca60915dc6e900a6d81ae00b5f1c316d98dc2d6b60a1012c1a0bb81a0a8f72", 1683890,
             _PRED_LICENSE, "VTG-GPT (zero-shot) val predictions"),
    DataFile("la-detr-qvh-val", "qvhighlights/la_detr/best_hl_val_preds.jsonl", *_LA,
             "results/ours/best_hl_val_preds.jsonl",
             "0e7c061b5632502b1855e8f93892790e242244ee48d21c720d5d80621f0cdb15", 3014703,
             "none stated (research use only)", "LA-DETR val predictions"),
    DataFile("la-detr-charades", "charades_sta/la_detr/hl_test_submission.jsonl", *_LA,
             "results_charades_sta/ours/hl_test_submission.jsonl",
             "5af10caeb533aeb9675c77000ebb3fd9f672d72c07ffb934e898c1cbe7bdf1fb", 3525120,
             "none stated (research use only)", "LA-DETR Charades-STA test predictions"),
    DataFile("charades-test-gt", "lighthouse/charades_test_release.jsonl",
             "line/lighthouse", "d095eaa552cecef240897a8b750306b3b2a08740",
             "data/charades/charades_test_release.jsonl",
             "13d6e9152794d87bb501a827edcbe69e5c0428f0af60e926e6b87e4f452ad5b2", 488238,
             "Apache-2.0 (repository); Charades: non-commercial",
             "Charades-STA test ground truth, Lighthouse jsonl (3720 queries)"),
]}


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

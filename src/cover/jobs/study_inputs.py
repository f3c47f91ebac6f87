"""The inputs of ``cover study``: (prediction, ground truth) pairs with their grounder and
dataset names, and the command line that reproduces a run."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cover.errors import InputError
from cover.io.folders import slug
from cover.studies.protocol import Protocol

_DATASETS = (("highlight_", "QVHighlights"), ("qvhighlights", "QVHighlights"),
             ("charades", "Charades-STA"), ("activitynet", "ActivityNet-Captions"),
             ("tacos", "TACoS"))


#: Benchmarks built on another's videos, told by their folder or file name before the
#: dataset they reuse (Charades-CD's ``charades_test_ood.json`` is not Charades-STA's
#: test split); the distribution-shift splits keep their test split in the name.
_DERIVED = (("charades_cd", "Charades-CD"), ("charades-cd", "Charades-CD"),
            ("activitynet_cd", "ActivityNet-CD"), ("anet_test_", "ActivityNet-CD"),
            ("charades_rf", "Charades-RF"), ("test_len_", "Charades-STA-Len"),
            ("test_mom_", "Charades-STA-Mom"))


def guess_dataset(gt: Path) -> str:
    """Dataset name from the ground-truth file's path: a benchmark derived from another
    (:data:`_DERIVED`) first, then the dataset it names (else the file's stem)."""
    low = str(gt).lower()
    file = Path(low).name
    for key, name in _DERIVED:
        if key in low:
            split = ("test-ood" if "_ood" in file else "test-iid" if "_iid" in file
                     else "") if name.endswith("-CD") else ""
            return f"{name} {split}".rstrip()
    for key, name in _DATASETS:
        if key in Path(low).name or f"/{key}" in low:
            return name
    return gt.stem


def default_names(preds: Sequence[Path], groups: Sequence[str] | None = None) -> list[str]:
    """A grounder's name from its prediction file: the file's folder (the grounder), with
    the file's stem added when one folder holds several of the files (of one group, e.g.
    one dataset: a grounder on two datasets keeps one name)."""
    folders = [p.parent.name or p.stem for p in preds]
    keys = list(zip(folders, groups or [""] * len(preds), strict=True))
    return [f if keys.count(k) == 1 else f"{f}/{p.stem}"
            for p, f, k in zip(preds, folders, keys, strict=True)]


@dataclass(frozen=True)
class InputPair:
    preds: Path
    gt: Path
    name: str
    dataset: str

    @property
    def id(self) -> str:
        return slug(f"{self.name}-{self.dataset}")


def input_pairs(preds: Sequence[Path], gts: Sequence[Path], names: Sequence[str] | None,
                datasets: Sequence[str] | None) -> list[InputPair]:
    """Pair each ``--preds`` with its ``--gt`` (one ``--gt`` serves all). Default names:
    the prediction file's folder (the grounder), with the file stem added when one
    folder holds several files for the same dataset."""
    if len(gts) not in (1, len(preds)):
        raise InputError(f"give one --gt for all --preds or one per --preds "
                         f"({len(preds)} --preds, {len(gts)} --gt)")
    g = list(gts) * len(preds) if len(gts) == 1 else list(gts)
    if names and len(names) != len(preds):
        raise InputError("give one --name per --preds")
    if datasets and len(datasets) != len(preds):
        raise InputError("give one --dataset per --preds")
    ds = list(datasets) if datasets else [guess_dataset(x) for x in g]
    nm = list(names) if names else default_names(preds, ds)
    pairs = [InputPair(p, gg, n, d) for p, gg, n, d in zip(preds, g, nm, ds, strict=True)]
    ids = [x.id for x in pairs]
    if len(set(ids)) != len(ids):
        dupe = next(i for i in ids if ids.count(i) > 1)
        twice = [str(x.preds) for x in pairs if x.id == dupe]
        raise InputError(f"--preds {twice[0]} and {twice[1]} would share the results folder "
                         f"{dupe}; give each --preds its own --name")
    return pairs


def command_line(study: str, inputs: Sequence[InputPair], out: Path, protocol: Protocol, *,
                 min_scale: float = 1.0, target: str = "envelope",
                 humans: Path | None = None, read: dict[str, Any] | None = None,
                 split_seeds: int = 0) -> str:
    """The ``cover study`` command that reproduces a run, every choice spelled out."""
    parts = ["cover", "study", study]
    for x in inputs:
        parts += ["--preds", str(x.preds), "--gt", str(x.gt), "--name", x.name,
                  "--dataset", x.dataset]
    parts += ["--out", str(out), "--alphas", *map(number_text, protocol.alphas),
              "--resamples", str(protocol.n_resamples),
              "--resample-frac", number_text(protocol.resample_frac),
              "--seed", str(protocol.seed),
              "--cal-frac", number_text(protocol.cal_frac), "--min-scale", number_text(min_scale),
              "--target", target]
    if humans is not None:
        parts += ["--humans", str(humans)]
    if split_seeds:
        parts += ["--split-seeds", str(split_seeds)]
    for key, value in (read or {}).items():  # each key is its flag's dest (--format's too)
        flag = "--format" if key == "pred_format" else "--" + key.replace("_", "-")
        text = number_text(value) if isinstance(value, float) else str(value)
        parts += [flag] if value is True else [flag, text]
    return " ".join(shlex.quote(p) for p in parts)


def number_text(x: float) -> str:
    """``x`` as short as it reads back exactly (``150``, ``0.1``, ``0.123456789``): a
    reproduce command must give the same number (``:g`` keeps six digits)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))

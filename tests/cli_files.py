"""Small synthetic prediction / ground-truth files for command-line tests, and the checks
that a run lost nothing (inputs byte-identical, no temporary file left behind)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np


def write_jsonl(path: Path, rows: list[object]) -> Path:
    """One row per line; a str row is written as it is (for malformed lines)."""
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def synthetic_rows(n: int = 60, seed: int = 0, *, saliency: bool = True
                   ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """``n`` predictions (top-1 near the truth) and their ground truth on 150 s videos,
    three queries per video."""
    rng = np.random.default_rng(seed)
    preds, gts = [], []
    for i in range(n):
        s = float(rng.uniform(0, 100))
        e = s + float(rng.uniform(2, 40))
        ts = max(0.0, s + float(rng.normal(0, 5)))
        te = min(150.0, max(ts + 1, e + float(rng.normal(0, 5))))
        row: dict[str, object] = {"qid": i, "vid": f"v{i // 3}_0.0_150.0", "query": f"q{i}",
                                  "pred_relevant_windows": [[s, e, 0.9], [0.0, 10.0, 0.1]]}
        if saliency:
            row["pred_saliency_scores"] = rng.normal(size=75).round(3).tolist()
        preds.append(row)
        gts.append({"qid": i, "vid": f"v{i // 3}_0.0_150.0", "query": f"q{i}",
                    "duration": 150, "relevant_windows": [[ts, te]]})
    return preds, gts


def synthetic(folder: Path, n: int = 60, seed: int = 0, *, saliency: bool = True,
              name: str = "preds.jsonl") -> tuple[Path, Path]:
    preds, gts = synthetic_rows(n, seed, saliency=saliency)
    return write_jsonl(folder / name, list(preds)), write_jsonl(folder / "gt.jsonl", list(gts))


def snapshot(*paths: Path) -> dict[Path, bytes]:
    """The bytes of every file, to compare before and after a run."""
    return {p: p.read_bytes() for p in paths}


def leftovers(folder: Path) -> list[str]:
    """Temporary files of the atomic writer left in ``folder`` (there must be none)."""
    return sorted(p.name for p in folder.rglob("*.tmp"))


def command_parsers() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """Every command of ``cover.cli.COMMANDS`` and every sub-command under it."""
    from cover.cli import COMMANDS, build_parser

    def subs(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next((dict(a.choices) for a in p._actions
                     if isinstance(a, argparse._SubParsersAction)), {})

    top = subs(build_parser())
    out = []
    for name in COMMANDS:
        out.append(([name], top[name]))
        out += [([name, inner], q) for inner, q in subs(top[name]).items()]
    return out


def sec_calibrator() -> Any:
    """SEC at alpha 0.1 fitted on 99 rows of one 150 s video: predictions [40, 60], truth
    from [45, 60] to [45, 84.5] (what the streamed-certify tests certify with)."""
    import cover

    n = 99
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=150.0, pred_start=np.full(n, 40.0),
        pred_end=np.full(n, 60.0), truth=(np.full(n, 45.0), 60.0 + np.arange(n) / 4))
    return cover.Calibrator(score="sec", alpha=0.1).fit(t)

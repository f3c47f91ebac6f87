"""Generates docs/ensembles.md's numbers (and the ensemble sentences of README.md and
docs/calibration-rules.md): ensemble grounders' own Gaussian regions at nominal levels vs
COVER (split conformal, NORM/SEC/SIGMA) on the same predictions.

Usage: python docs/ensembles.py [DATA_DIR]  (prints the blocks; a few seconds);
python docs/docgen.py --write puts them into the pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cover.data.join import attach_truth
from cover.data.splits import split_by_unit
from cover.grounders.ensemble import ensemble, gaussian_region
from cover.intervals import Intervals
from cover.io import read_ground_truth, read_predictions
from cover.metrics import point_iou
from cover.studies.coverage_validity import ValidityResult, coverage_validity
from cover.studies.protocol import Protocol

QVH = "qvhighlights/"
ENSEMBLES: dict[str, list[str]] = {
    "QD-DETR x3": [QVH + "qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
                   QVH + "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
                   QVH + "qd_detr/onlyclip_best_hl_val_preds.jsonl"],
    "Moment-DETR x2": [QVH + "moment_detr/sample_val_preds.jsonl",
                       QVH + "moment_detr/inference_hl_val_test_code_preds.jsonl"],
}
ENSEMBLES["all 5"] = ENSEMBLES["QD-DETR x3"] + ENSEMBLES["Moment-DETR x2"]
LEVELS = (0.8, 0.9, 0.95)
FAMILIES = ("norm", "sec", "sigma")


@dataclass
class Measured:
    """One ensemble on the seed-42 test split."""

    name: str
    n_rows: int
    n_test: int
    miou: float
    member_miou: list[float]
    sd: float
    zero: float
    gauss: dict[float, tuple[float, float]]      # level -> (coverage, mean length)
    cover: ValidityResult


def _cell(res: ValidityResult, fam: str, lv: float):
    return res.cell(fam, round(1 - lv, 10))


def measure(data: Path) -> tuple[list[Measured], Protocol]:
    """Build every ensemble in memory exactly as ``cover ensemble`` does and measure it."""
    gt = read_ground_truth(data / QVH / "annotations/highlight_val_release.jsonl").table
    protocol = Protocol(alphas=tuple(round(1 - lv, 10) for lv in LEVELS))
    out = []
    for name, files in ENSEMBLES.items():
        members = [read_predictions(data / f).table for f in files]
        table, _ = attach_truth(ensemble(members).table, gt)
        split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=protocol.seed)
        test = table.take(split.test)
        ts, te = test.truth_envelope()
        assert test.start_std is not None and test.end_std is not None
        gauss = {}
        for lv in LEVELS:
            reg = gaussian_region(test, 1 - lv)
            covered, _ = reg.relate(Intervals.single(ts, te))
            gauss[lv] = (float(covered.mean()), float(reg.length().mean()))
        test_qids = set(test.qid.tolist())
        member_miou = []
        for m in members:
            mt, _ = attach_truth(m, gt)
            keep = np.flatnonzero([q in test_qids for q in mt.qid.tolist()])
            member_miou.append(100 * float(point_iou(mt.take(keep)).mean()))
        out.append(Measured(
            name, len(table), len(test), 100 * float(point_iou(test).mean()), member_miou,
            float(np.mean((test.start_std + test.end_std) / 2)),
            float(np.mean((test.start_std == 0) & (test.end_std == 0))), gauss,
            coverage_validity(table, name=name, families=FAMILIES, protocol=protocol)))
    return out, protocol


def table_md(ms: list[Measured]) -> str:
    lines = ["| ensemble | method | " + " | ".join(f"cov. @{lv:g} | len. @{lv:g}"
                                                 for lv in LEVELS) + " |",
             "|" + "---|" * (2 + 2 * len(LEVELS))]
    for m in ms:
        cells = [f"{c:.3f}{' (!)' if c < lv - 0.02 else ''} | {ln:.1f} s"
                 for lv, (c, ln) in m.gauss.items()]
        lines.append(f"| {m.name} (mIoU {m.miou:.1f}, mean sd {m.sd:.1f} s, sd = 0 on "
                     f"{100 * m.zero:.0f}%) | Gaussian, nominal | " + " | ".join(cells) + " |")
        for fam in FAMILIES:
            cells = []
            for lv in LEVELS:
                c = _cell(m.cover, fam, lv)
                cells.append(f"{c.coverage_mean:.3f} ± {c.coverage_sd:.3f}"
                             f"{'' if c.within_band else ' *'} | {c.length_mean:.1f} s")
            lines.append(f"| | COVER {fam.upper()} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def span(values: list[float], fmt: str = ".0f") -> str:
    """``lo–hi`` of ``values`` (one number when they round alike)."""
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}–{hi}"


def shortfall(ms: list[Measured]) -> list[float]:
    """Points by which each Gaussian cell misses its nominal level."""
    return [100 * (lv - m.gauss[lv][0]) for m in ms for lv in LEVELS]


def sigma_saving(ms: list[Measured]) -> list[float]:
    """Per ensemble and level: % by which SIGMA's mean length is below NORM's and SEC's."""
    return [100 * (1 - _cell(m.cover, "sigma", lv).length_mean
                   / _cell(m.cover, f, lv).length_mean)
            for m in ms for lv in LEVELS for f in ("norm", "sec")]


def outside(ms: list[Measured], fams: tuple[str, ...]) -> list[str]:
    return [f"{m.name} {f.upper()} at {lv:g}" for m in ms for f in fams for lv in LEVELS
            if not _cell(m.cover, f, lv).within_band]


def saving_words(ms: list[Measured]) -> str:
    s = sigma_saving(ms)
    return (f"{span(s)}% shorter" if min(s) > 0 else
            f"between {-max(s):.0f}% shorter and {-min(s):.0f}% longer")


def findings(ms: list[Measured]) -> str:
    qd, md, all5 = ms
    miss_cover = outside(ms, ("norm", "sec"))
    miss_sigma = outside(ms, ("sigma",))
    g = qd.gauss
    cover_line = ("lands within its reference band at every target" if not miss_cover else
                  "lands within its reference band except " + ", ".join(miss_cover))
    sigma_line = ("stays within its band too" if not miss_sigma else
                  "leaves its band at " + ", ".join(miss_sigma))
    c = {f: _cell(qd.cover, f, 0.9).length_mean for f in FAMILIES}
    return "\n".join([
        f"* The Gaussian region misses its nominal level by {span(shortfall(ms))} points on "
        "every ensemble and\n  every level, and it barely grows with the level "
        f"({g[0.8][1]:.0f} → {g[0.95][1]:.0f} s for QD-DETR from 0.8 to\n  0.95): where the "
        "checkpoints agree (sd small or 0, "
        f"{span([100 * qd.zero, 100 * md.zero])}% of rows have sd 0 on both\n  boundaries) "
        "they are often wrong together, and no multiple of a near-zero sd reaches\n  the truth. "
        "Agreement between checkpoints trained on the same data measures model\n  variance, "
        "not the error of the prediction. The wider five-member ensemble (two\n  "
        "architectures) disagrees more and comes closer, but still misses by "
        f"{span(shortfall([all5]))} points.",
        f"* COVER on the very same predictions {cover_line},\n  at the price of longer "
        "regions: the length the nominal region would have needed.",
        "* The reported sd is informative once calibrated: SIGMA (the Gaussian shape with a\n"
        f"  calibrated multiplier) {sigma_line}, with regions {saving_words(ms)} than\n"
        f"  NORM's and SEC's (QD-DETR at 0.9: {c['sigma']:.0f} s against "
        f"{span([c['norm'], c['sec']])} s).",
        "* Averaging boundaries of members that pick different moments lowers point accuracy:\n"
        f"  the QD-DETR mean window has test mIoU {qd.miou:.1f} against "
        f"{span(qd.member_miou, '.1f')} for each checkpoint alone\n  on the same test queries "
        f"(Moment-DETR: {md.miou:.1f} against "
        + " and ".join(f"{v:.1f}" for v in sorted(md.member_miou))
        + "). The ensemble is an uncertainty source, not a better localizer.",
    ])


def blocks(data: Path) -> dict[str, str]:
    """Every generated block of docs/ensembles.md, README.md and calibration-rules.md."""
    ms, p = measure(data)
    qd = ms[0]
    band_words = ("lands within its reference band" if not outside(ms, ("sigma",))
                  else "mostly lands within its reference band")
    cell = _cell(qd.cover, "norm", 0.9)
    return {
        "members": f"On the real QVHighlights val files every member has every query "
                   f"({qd.n_rows} of {qd.n_rows},\nnone refused).",
        "protocol": (
            f"All are measured on the same test queries: QVHighlights val split by source video "
            f"{100 * p.cal_frac:.0f}/{100 * (1 - p.cal_frac):.0f}, seed {p.seed}\n"
            f"({qd.n_test} test queries); COVER's cells are the mean ± sd over "
            f"{p.n_resamples} calibrations on resamples of\nhalf the calibration pool "
            f"(n ≈ {cell.n_calibration:.0f}), as in "
            "[qvhighlights-coverage.md](qvhighlights-coverage.md)."),
        "table": table_md(ms),
        "findings": findings(ms),
        "readme": (
            "* `cover ensemble P1 P2 ... -o E.jsonl`: several checkpoints' predictions of the "
            "same\n  queries become one grounder reporting its own boundary uncertainty (mean "
            "window,\n  `start_std`, `end_std`). Its naive Gaussian regions miss their nominal "
            f"level by {span(shortfall(ms))}\n  points on QVHighlights; COVER on the same "
            "predictions does not\n  ([docs/ensembles.md](docs/ensembles.md))."),
        "rules": (f"On the ensemble grounders, whose naive Gaussian regions miss their nominal "
                  f"level by\n{span(shortfall(ms))} points, COVER SIGMA on the same "
                  f"predictions {band_words}, with\n"
                  f"regions {saving_words(ms)} than NORM's and SEC's "
                  "([docs/ensembles.md](ensembles.md))."),
    }


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)

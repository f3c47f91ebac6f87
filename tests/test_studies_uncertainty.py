"""Study 9 on an ensemble of the three QD-DETR checkpoints (a grounder reporting its own
boundary sd): the nominal Gaussian region misses its level, COVER meets it."""

from __future__ import annotations

from pathlib import Path

from cover.grounders.ensemble import ensemble
from cover.io.labelled import load_labelled
from cover.studies.context import Pair
from cover.studies.protocol import Protocol
from cover.studies.uncertainty import uncertainty


def test_nominal_region_undercovers_and_cover_does_not(data_dir: Path, qvh_gt: Path) -> None:
    q = data_dir / "qvhighlights" / "qd_detr"
    tables = [load_labelled(q / f, qvh_gt)[0] for f in (
        "video_checkpoint_best_hl_val_preds.jsonl", "audio_checkpoint_best_hl_val_preds.jsonl",
        "onlyclip_best_hl_val_preds.jsonl")]
    ens = ensemble(tables).table
    from cover.data.join import attach_truth

    table, _ = attach_truth(ens, tables[0])
    res = uncertainty(Pair("ensemble", "QVHighlights", table, Protocol(n_resamples=20)))
    assert not res.missing
    cells = {(c["method"], c["target"]): c for c in res.data["cells"]}
    for t in (0.8, 0.9):
        assert cells[("nominal", t)]["coverage"] < t - 0.05
        assert abs(cells[("COVER (NORM)", t)]["coverage"] - t) < 0.04
    # the summary says it in words, with the study's numbers at the 0.90 target
    from cover.report.summary import pair_sentences

    said = [x for x in pair_sentences({"uncertainty": {"data": res.data}})
            if "reported uncertainty" in x]
    nominal, norm = cells[("nominal", 0.9)], cells[("COVER (NORM)", 0.9)]
    assert said == [
        f"The grounder's own reported uncertainty, read as a 90% region without calibration, "
        f"covers <b>{nominal['coverage']:.3f}</b> of the test queries at "
        f"{nominal['length']:.1f} s (overconfident: short of the level it claims); COVER's "
        f"calibrated regions on the same queries (mean over calibration resamples): NORM "
        f"{norm['coverage']:.3f} at {norm['length']:.1f} s, "
        + ", ".join(f"{f} {cells[(f'COVER ({f})', 0.9)]['coverage']:.3f} at "
                    f"{cells[(f'COVER ({f})', 0.9)]['length']:.1f} s" for f in ("SEC", "SIGMA"))
        + "."]

"""The inputs of the file benchmarks (``stream.py``, ``scaling_files.py``,
``evaluate_tables.py``, ``stream_scaling.py``): a QVHighlights-shaped Parquet file, QD-DETR-
shaped Moment-DETR JSON lines and their ground truth, written a chunk at a time from seeded
draws, and calibrators fitted on rows drawn alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: The column mapping of the Parquet file (``--columns``).
COLUMNS = "qid=qid,vid=vid,duration=duration,start=start,end=end"


def make_file(path: Path, rows: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    chunk = 1_000_000
    schema = pa.schema([("qid", pa.int64()), ("vid", pa.string()), ("duration", pa.float64()),
                        ("start", pa.float64()), ("end", pa.float64())])
    with pq.ParquetWriter(path, schema) as w:
        for a in range(0, rows, chunk):
            m = min(chunk, rows - a)
            T = np.full(m, 150.0)
            s = rng.uniform(0, 110, m)
            e = s + rng.uniform(2, 40, m)
            vid = np.char.add("v", (np.arange(a, a + m) // 3).astype(str))
            w.write_table(pa.table({"qid": np.arange(a, a + m), "vid": vid, "duration": T,
                                    "start": s, "end": e}, schema=schema))


def make_jsonl(path: Path, rows: int, seed: int = 0, past_end: bool = False) -> None:
    """QD-DETR-shaped lines: saliency in steps of 1/128 as the model writes them
    (``past_end``: every window ends past the 150 s video, so every row is clipped)."""
    import orjson

    from cover.io.output import atomic_open

    rng = np.random.default_rng(seed)
    chunk = 50_000
    with atomic_open(path, "wb") as fh:
        for a in range(0, rows, chunk):
            m = min(chunk, rows - a)
            s = rng.uniform(0, 110, (m, 10)).round() // 2 * 2
            e = np.minimum(s + rng.uniform(2, 40, (m, 10)).round() // 2 * 2 + 2, 150.0)
            if past_end:
                s, e = s // 4 + 110, 152 + rng.uniform(0, 30, (m, 10)).round() // 2 * 2
            sc = np.sort(rng.uniform(0, 1, (m, 10)).round(4), axis=1)[:, ::-1]
            win = np.stack([s, e, sc], axis=2).tolist()
            sal = (np.round(rng.normal(-10, 2, (m, 75)) * 128) / 128).tolist()
            fh.write(b"".join(orjson.dumps(
                {"qid": a + i, "query": "a person does something in the video",
                 "vid": f"v{(a + i) // 3}_0.0_150.0", "duration": 150.0,
                 "pred_relevant_windows": win[i], "pred_saliency_scores": sal[i]})
                + b"\n" for i in range(m)))


def make_gt(path: Path, rows: int, seed: int = 2, past_end: bool = False) -> None:
    """The ground truth of :func:`make_jsonl`'s queries: one window per query
    (``past_end``: every one ends past the 150 s video)."""
    import orjson

    from cover.io.output import atomic_open

    rng = np.random.default_rng(seed)
    chunk = 50_000
    with atomic_open(path, "wb") as fh:
        for a in range(0, rows, chunk):
            m = min(chunk, rows - a)
            ts = (rng.uniform(0, 110, m).round() // 2 * 2).tolist()
            te = np.minimum(np.asarray(ts) + rng.uniform(2, 40, m).round() // 2 * 2 + 2,
                            150.0).tolist()
            if past_end:
                te = (152 + rng.uniform(0, 30, m).round() // 2 * 2).tolist()
            fh.write(b"".join(orjson.dumps(
                {"qid": a + i, "query": "a person does something in the video",
                 "vid": f"v{(a + i) // 3}_0.0_150.0", "duration": 150,
                 "relevant_windows": [[ts[i], te[i]]]}) + b"\n" for i in range(m)))


def jsonl_calibrator(score: str, where: Path) -> object:
    """Fitted on 10,000 rows drawn as the certified file's rows are (other seeds), with
    their truth: the regions of the file are then valid at the level, and evaluate's
    coverage lands in its band."""
    import cover

    preds, gt = where / "calibration_10000.jsonl", where / "calibration_10000_gt.jsonl"
    if not preds.exists():
        make_jsonl(preds, 10_000, seed=11)
        make_gt(gt, 10_000, seed=12)
    table, _ = cover.load_labelled(preds, gt)
    return cover.Calibrator(score=score, alpha=0.1).fit(table)


def parquet_calibrator() -> Any:
    """NORM at alpha 0.1, fitted on 10,000 rows near the Parquet file's windows (seed 1).
    The predicted windows are kept inside ``[0, 150]`` with start <= end: COVER rejects a
    window with start > end, and the calibration set must be valid as it stands."""
    import cover

    rng = np.random.default_rng(1)
    k = 10_000
    ts = rng.uniform(0, 110, k)
    ps = np.clip(ts + rng.normal(0, 4, k), 0.0, 150.0)
    pe = np.clip(ts + 20 + rng.normal(0, 4, k), ps, 150.0)
    return cover.Calibrator(score="norm", alpha=0.1).fit(cover.GroundingTable.from_arrays(
        qid=np.arange(k), duration=150.0, pred_start=ps, pred_end=pe,
        truth=(ts, ts + 20)))

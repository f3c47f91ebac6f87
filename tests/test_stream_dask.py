"""The Dask recipe of docs/scale.md: ``map_partitions`` through ``certify_batch`` certifies
a 3-partition dataframe identically, row by row, to the in-process path."""

from __future__ import annotations

import pytest

import cover
from cover.row_status import row_status
from cover.stream import certify_batch

# Dask and pandas are imported by the tests, not at collection: every xdist worker
# collects every module, and only the one that runs these needs them (about a second).
pytestmark = pytest.mark.xdist_group("dask")

COLS = {"qid": "qid", "vid": "vid", "duration": "duration",
        "windows": "pred_relevant_windows", "saliency": "pred_saliency_scores"}


def certify_partition(df, calibrator: dict, columns: dict):
    """The recipe: one pandas partition in, the same rows with region and status out."""
    import pyarrow as pa

    cal = cover.Calibrator.from_dict(calibrator)
    out, _ = certify_batch(cal, pa.Table.from_pandas(df, preserve_index=False),
                           columns=columns)
    block = out.column("cover").combine_chunks()
    return df.assign(region=block.field("region").to_pylist(),
                     status=block.field("status").to_pylist())


@pytest.mark.parametrize("score", ["norm", "sls"])
def test_dask_equals_in_process(qdetr_table, qdetr_preds, qvh_gt, qdetr_columns, score):
    pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame(qdetr_columns)
    table = qdetr_table
    cal = cover.Calibrator(score=score, alpha=0.1).fit(table)

    import dask

    with dask.config.set({"dataframe.convert-string": False}):  # lists stay lists
        ddf = dd.from_pandas(df, npartitions=3)
    assert ddf.npartitions == 3
    meta = df.head(0).assign(region=pd.Series(dtype=object), status=pd.Series(dtype=str))
    got = ddf.map_partitions(certify_partition, cal.to_dict(), COLS, meta=meta).compute(
        scheduler="synchronous")

    want = dict(zip(table.qid.tolist(), cal.certify(table).intervals.to_lists(), strict=True))
    assert len(got) == len(want) == len(qdetr_columns["qid"])
    assert dict(zip(got["qid"].astype(str), got["region"], strict=True)) == want
    # An empty region (SLS below the calibrated level) is rejected, never certified.
    status = dict(zip(table.qid.tolist(), row_status(cal.certify(table)).tolist(), strict=True))
    assert dict(zip(got["qid"].astype(str), got["status"], strict=True)) == status
    assert set(status.values()) <= {"certified", "refused", "rejected"}

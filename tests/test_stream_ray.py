"""Ray Data certifies a dataset of several blocks identically, row by row."""

from __future__ import annotations

import pytest

import cover
from cover.row_status import row_status

# Ray's own deprecation chatter is not ours. One local Ray for both scores (two would
# fight for the 2 cores). Ray is imported by the test, not at collection: every xdist
# worker collects every module, and only the one that runs it needs Ray.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.xdist_group("ray")]

COLS = {"qid": "qid", "vid": "vid", "duration": "duration",
        "windows": "pred_relevant_windows", "saliency": "pred_saliency_scores"}


@pytest.mark.heavy  # a local Ray started and stopped: start it first
def test_ray_equals_in_process(qdetr_table, qdetr_preds, qvh_gt, qdetr_columns, tmp_path):
    """NORM and SLS (the saliency column through Ray too), in one local Ray: starting
    it is most of the cost, so both calibrators share it; one actor certifies the
    blocks of three Parquet files in batches of 256 rows."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ray = pytest.importorskip("ray")
    t = pa.table(qdetr_columns)
    for i, (a, b) in enumerate([(0, 400), (400, 1100), (1100, len(qdetr_columns["qid"]))]):
        pq.write_table(t.slice(a, b - a), tmp_path / f"part-{i}.parquet")
    table = qdetr_table
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        for score in ("norm", "sls"):
            _same_as_in_process(cover.Calibrator(score=score, alpha=0.1).fit(table), table,
                                len(qdetr_columns["qid"]), tmp_path)
    finally:
        ray.shutdown()


def _same_as_in_process(cal, table, n, folder):
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray

    from cover.stream.ray import certify_dataset

    # Three Arrow blocks (Ray's own Parquet reader would add read tasks, each a worker
    # process to start, and read these small files as one block anyway).
    ds = ray.data.from_arrow([pq.read_table(p) for p in sorted(folder.glob("*.parquet"))])
    out = pa.concat_tables(ray.get(certify_dataset(
        ds, cal, columns=COLS, workers=1, cpus_per_worker=0.5, batch_size=256
    ).to_arrow_refs()))

    block = out.column("cover").combine_chunks()
    got = dict(zip(map(str, out.column("qid").to_pylist()), block.field("region").to_pylist(),
                   strict=True))
    want = dict(zip(table.qid.tolist(), cal.certify(table).intervals.to_lists(), strict=True))
    assert len(got) == len(want) == n, cal.score
    assert got == want, cal.score
    # An empty region (SLS below the calibrated level) is rejected, never certified.
    status = dict(zip(table.qid.tolist(), row_status(cal.certify(table)).tolist(), strict=True))
    assert dict(zip(map(str, out.column("qid").to_pylist()), block.field("status").to_pylist(),
                    strict=True)) == status, cal.score

"""The Parquet read + write floor of ``bench/stream.py`` writes what certify writes.

``cover certify`` of a Parquet file is measured against a bare pyarrow read + write of
the same table (``bench/stream_floors.py``); the floor is only fair if its output has
COVER's schema and compression. The bench module is loaded from its file.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import cover

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


floors = _load("stream_floors")


def test_read_write_floor_writes_certifys_schema_and_compression(tmp_path: Path) -> None:
    from cover.stream import certify_parquet

    n = 50
    start = np.linspace(0.0, 100.0, n)
    src = tmp_path / "preds.parquet"
    pq.write_table(pa.table({"qid": np.arange(n), "vid": [f"v{i // 3}" for i in range(n)],
                             "duration": np.full(n, 150.0), "start": start,
                             "end": start + 10.0}), src)
    ts = np.linspace(0.0, 100.0, 200)
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(cover.GroundingTable.from_arrays(
        qid=np.arange(200), duration=150.0, pred_start=ts, pred_end=ts + 12.0,
        truth=(ts + 1.0, ts + 11.0)))
    certified, floor = tmp_path / "certified.parquet", tmp_path / "floor.parquet"
    certify_parquet(cal, src, certified,
                    columns="qid=qid,vid=vid,duration=duration,start=start,end=end")

    assert floors.read_write(str(src), str(floor), batch_rows=16) == n
    ours, theirs = pq.read_table(floor), pq.read_table(certified)
    assert ours.schema.remove_metadata() == theirs.schema.remove_metadata()
    assert floors.compression(floor) == floors.compression(certified) == "SNAPPY"
    assert ours.column("cover").to_pylist()[3]["region"] == [[start[3], start[3] + 10.0]]
    assert floors.read(str(src), batch_rows=16) == n


def test_echo_floor_writes_every_line_back_with_its_block(tmp_path: Path) -> None:
    """The echo floor does what a certify echoing each line must: every line, in order,
    its bytes kept, a ``cover`` block spliced before its closing brace; batches of a few
    lines go through the writer thread in order."""
    import json

    rows = [{"qid": i, "vid": f"v{i // 3}", "duration": 150.0,
             "pred_relevant_windows": [[1.0, 9.5, 0.9]], "pred_saliency_scores": [0.5, -1]}
            for i in range(23)]
    src, dst = tmp_path / "p.jsonl", tmp_path / "o.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import gc

    assert floors.echo(str(src), str(dst), batch_lines=4) == len(rows)
    assert gc.isenabled()  # run in process, the floor leaves the collector as it found it
    out = [json.loads(x) for x in dst.read_text().splitlines()]
    assert [{k: v for k, v in o.items() if k != "cover"} for o in out] == rows
    assert {json.dumps(o["cover"]) for o in out} == {json.dumps(out[0]["cover"])}
    assert dst.read_bytes().count(b"\n") == len(rows)

"""The bare floors ``bench/stream.py`` measures COVER's file commands against.

* ``parse``: every line of a JSON-lines file parsed with one fast parser (orjson per
  line, msgspec ``decode_lines`` per 16 MB, a typed msgspec decode of only the fields
  certify reads, pyarrow.json blocks), keeping nothing.
* ``echo``: the typed parse of certify's fields, and every line written back with one
  constant ``"cover"`` block spliced before its closing brace, on a writer thread and
  synced to the disk: the least a certify that echoes each input line must do.
* ``parse_evaluate``: what ``cover evaluate`` must parse, typed as above: the fields it
  reads of each certified line (the ``cover`` block, ids, query, windows) and of each
  ground-truth line.
* ``read``: a Parquet file batch by batch into numpy columns.
* ``read_write``: the same read, and every column written out again plus a ``cover``
  struct column of COVER's type, with the Parquet writer options of COVER's.
* ``bandwidth_gbs``: this machine's memory bandwidth (a large ``np.copyto``), for scale.

Each does only what any program touching those bytes must do: no checks, no scores.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

PARSERS = ("orjson", "msgspec", "typed", "typed-sls", "pyarrow")


def installed(parser: str) -> bool:
    import importlib.util

    module = {"pyarrow": "pyarrow.json", "typed": "msgspec", "typed-sls": "msgspec"}
    return importlib.util.find_spec(module.get(parser, parser)) is not None


def _typed_row(signal: bool) -> type:
    """A msgspec struct of the fields ``cover certify`` reads from a line (qid, vid,
    duration, the windows; the 75 saliency scores only with ``signal``, for SLS);
    every other field is skipped without building a Python object."""
    import msgspec

    class Row(msgspec.Struct):
        qid: int | str
        vid: int | str
        duration: float | None = None
        pred_relevant_windows: list[list[float]] | None = None

    class RowSls(Row):
        pred_saliency_scores: list[float] | None = None

    return RowSls if signal else Row


def parse(parser: str, src: str) -> int:
    """Parse every line of ``src`` with ``parser`` and keep nothing: the floor. The
    garbage collector is off, as COVER's bulk reader pauses it (a batch of parsed rows
    holds no cycles; without this, msgspec's batch decode pays for collections).

    * ``orjson``: ``orjson.loads`` of each line (every field, as Python objects);
    * ``msgspec``: untyped ``Decoder().decode_lines`` of 16 MB of lines at a time;
    * ``typed`` / ``typed-sls``: a typed msgspec ``Decoder(type=Row).decode`` of each
      line, ``Row`` holding only the fields certify reads (:func:`_typed_row`: the
      saliency scores skipped, or read for SLS): the fastest correct parse found;
    * ``pyarrow``: ``pyarrow.json.open_json`` record batches of 16 MB blocks."""
    import gc

    gc.disable()
    n = 0
    if parser == "orjson":
        import orjson

        with open(src, "rb") as fh:
            for line in fh:
                orjson.loads(line)
                n += 1
    elif parser.startswith("typed"):
        import msgspec

        decode = msgspec.json.Decoder(_typed_row(parser == "typed-sls")).decode
        with open(src, "rb") as fh:
            for line in fh:
                decode(line)
                n += 1
    elif parser == "msgspec":
        import msgspec

        dec = msgspec.json.Decoder()
        with open(src, "rb") as fh:
            while chunk := fh.readlines(1 << 24):
                n += len(dec.decode_lines(b"".join(chunk)))
    else:
        import pyarrow.json as pj

        reader = pj.open_json(src, read_options=pj.ReadOptions(block_size=1 << 24))
        for batch in reader:
            n += batch.num_rows
    return n


#: The block every line of the echo floor gets (about the length of a NORM block).
ECHO_BLOCK = (b',"cover":{"status": "certified", "region": [[12.5, 140.25]], "refused": false, '
              b'"duration": 150.0, "score": "norm", "alpha": 0.1, "threshold": 41.5}}\n')


def echo(src: str, dst: str, batch_lines: int = 16_384) -> int:
    """The echo floor: each line of ``src`` parsed typed (:func:`_typed_row`), then
    written to ``dst`` without its closing brace and with :data:`ECHO_BLOCK`, a batch of
    lines joined and written at a time on a second thread (the write releases the
    interpreter lock, as the parse goes on), the file synced at the end."""
    import gc
    import os
    from concurrent.futures import ThreadPoolExecutor

    import msgspec

    was = gc.isenabled()
    gc.disable()
    decode = msgspec.json.Decoder(_typed_row(False)).decode
    n = 0
    with open(src, "rb") as fh, open(dst, "wb") as out, ThreadPoolExecutor(1) as pool:
        pending: list[Any] = []
        parts: list[bytes] = []
        for line in fh:
            decode(line)
            n += 1
            parts += (line.rstrip()[:-1], ECHO_BLOCK)
            if len(parts) >= 2 * batch_lines:
                if len(pending) == 2:  # at most two batches wait, as COVER's writer
                    pending.pop(0).result()
                pending.append(pool.submit(out.write, b"".join(parts)))
                parts = []
        pending.append(pool.submit(out.write, b"".join(parts)))
        for f in pending:
            f.result()
        out.flush()
        os.fsync(out.fileno())
    if was:  # a floor runs in a process of its own; called in process, leave it as found
        gc.enable()
    return n


def parse_evaluate(regions: str | None, gt: str) -> int:
    """The floor of ``cover evaluate``: a typed msgspec decode of each line of both of its
    inputs, keeping nothing. A certified line: qid, vid, query, the windows and the
    ``cover`` block evaluate reads (the echoed saliency skipped); a ground-truth line:
    qid, vid, query, duration, the windows and the saliency labels when present. Rows
    are counted in ``regions``; ``regions=None``: the ground truth alone (its rows)."""
    import gc

    import msgspec

    # defstruct with type objects: a nested struct named in a string annotation (this
    # module's annotations are strings) would not resolve inside a function
    num, ident, windows = float | None, int | str | None, list[list[float]] | None
    cover = msgspec.defstruct("Cover", [
        ("status", str), ("region", windows, None), ("duration", num, None),
        ("threshold", float | str | None, None), ("alpha", num, None),
        ("score", str | None, None), ("refused", bool | None, None),
        ("in_calibration", bool | None, None)])
    certified = msgspec.defstruct("Certified", [
        ("cover", cover), ("qid", ident, None), ("vid", ident, None),
        ("query", str | None, None), ("pred_relevant_windows", windows, None)])
    truth = msgspec.defstruct("Truth", [
        ("qid", int | str), ("vid", ident, None), ("query", str | None, None),
        ("duration", num, None), ("relevant_windows", windows, None),
        ("relevant_clip_ids", list[int] | None, None),
        ("saliency_scores", list[list[int]] | None, None)])

    was = gc.isenabled()
    gc.disable()
    n = 0
    for path, kind in ((gt, truth), *(((regions, certified),) if regions else ())):
        decode = msgspec.json.Decoder(kind).decode
        with open(path, "rb") as fh:
            for line in fh:
                decode(line)
                n += kind is certified or regions is None
    if was:  # as found, when run in process
        gc.enable()
    return n


#: ``pyarrow.parquet.ParquetWriter`` options of ``cover.stream.parquet.certify_parquet``
#: (compression: pyarrow's default, snappy); the floor must write as COVER does.
WRITER_OPTIONS = {"use_dictionary": ["cover.status"]}


def read_write(src: str, dst: str, batch_rows: int) -> int:
    """The read + write floor: every batch of ``src`` out again to ``dst`` with a
    ``cover`` column of COVER's type (:func:`cover.stream.arrow.cover_type`) built from
    the batch's own columns in Arrow, no per-row Python: status "certified", region
    ``[[start, end]]``, the duration, a constant threshold, the rest constant or null.
    The same bytes in and about the same bytes out as certify, with none of its checks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cover.stream.arrow import cover_type

    reader = pq.ParquetFile(src)
    ctype = cover_type()
    schema = reader.schema_arrow.append(pa.field("cover", ctype))
    n = 0
    with pq.ParquetWriter(dst, schema, **WRITER_OPTIONS) as writer:
        for b in reader.iter_batches(batch_size=batch_rows):
            m = b.num_rows
            pairs = np.empty(2 * m)
            pairs[0::2] = b.column("start").to_numpy()
            pairs[1::2] = b.column("end").to_numpy()
            inner = pa.ListArray.from_arrays(np.arange(0, 2 * m + 1, 2, dtype=np.int32), pairs)
            region = pa.ListArray.from_arrays(np.arange(m + 1, dtype=np.int32), inner)
            q, no = pa.repeat(0.5, m), pa.repeat(False, m)
            cover = pa.StructArray.from_arrays(
                [pa.repeat("certified", m), region, no, b.column("duration"), q, q, no,
                 pa.nulls(m, pa.string())], fields=list(ctype))
            writer.write_batch(pa.RecordBatch.from_arrays([*b.columns, cover], schema=schema))
            n += m
    return n


def compression(path: Path) -> str:
    """The codecs of a Parquet file's column chunks (first row group), e.g. ``SNAPPY``."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    if meta.num_row_groups == 0:
        return "no row group"
    rg = meta.row_group(0)
    return "/".join(sorted({rg.column(i).compression for i in range(rg.num_columns)}))


def read(src: str, batch_rows: int) -> int:
    """The read floor: every batch of the Parquet file ``src`` into numpy columns."""
    import pyarrow.parquet as pq

    n = 0
    for b in pq.ParquetFile(src).iter_batches(batch_size=batch_rows):
        cols = [np.asarray(c.to_numpy(zero_copy_only=False)) for c in b.columns]
        n += len(cols[0])
    return n


def bandwidth_gbs() -> float:
    a = np.ones(2**26)  # 512 MB
    b = np.empty_like(a)
    best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    return 2 * a.nbytes / best / 1e9  # read + write


def _timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0

"""Certification at scale: Arrow batches in bounded memory, files of any size, and
distributed engines (Ray Data; recipes for Spark and Dask in ``docs/scale.md``).

:func:`certify_batch` is the one kernel; :func:`certify_parquet` streams a file
through it batch by batch; :func:`cover.stream.ray.certify_dataset` maps it over a
Ray dataset with the calibrator loaded once per worker; :func:`certify_jsonl` streams
a Moment-DETR JSON-lines file, echoing every input line byte for byte;
:class:`RowCertifier` certifies one prediction at a time (a service);
:func:`evaluate_stream` scores a certified file against the truth a batch at a time.
"""

from cover.stream.arrow import DEFAULT_COLUMNS, certify_batch, cover_type
from cover.stream.evaluate import evaluate_stream
from cover.stream.jsonl import certify_jsonl
from cover.stream.parquet import StreamCounts, certify_parquet
from cover.stream.row import RowCertifier, certify_row

__all__ = ["DEFAULT_COLUMNS", "RowCertifier", "StreamCounts", "certify_batch",
           "certify_jsonl", "certify_parquet", "certify_row", "cover_type",
           "evaluate_stream"]

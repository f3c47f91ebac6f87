"""Certify a Ray dataset: :func:`cover.stream.arrow.certify_batch` in ``map_batches``.

The calibrator travels as its JSON document (a few hundred bytes, validated field by
field on load) and is rebuilt once per worker by :class:`BatchCertifier`, a callable
class that Ray runs in a pool of actors; each batch is an Arrow table in and out, so
no row becomes a Python object. Rows come out with the ``cover`` struct column, as
in :func:`cover.stream.certify_parquet`.

>>> import ray, cover                                          # doctest: +SKIP
>>> cal = cover.Calibrator.load("calibrator.json")             # doctest: +SKIP
>>> ds = ray.data.read_parquet("s3://bucket/predictions/")     # doctest: +SKIP
>>> certify_dataset(ds, cal).write_parquet("s3://bucket/certified/")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate.calibrator import Calibrator
from cover.errors import InputError


class BatchCertifier:
    """Loads the calibrator once (per Ray actor) and certifies every batch it is given."""

    def __init__(self, calibrator: dict[str, Any], columns: dict[str, str] | None = None,
                 videos: tuple[list[str], list[float]] | None = None) -> None:
        from cover.stream.stage import CertifyStage

        cal = Calibrator.from_dict(calibrator, source="<calibrator sent to the worker>")
        self.columns = columns
        # One stage per worker: the --videos index is built once, not for every batch.
        self.stage = CertifyStage.of(cal, videos=None if videos is None else (
            np.asarray(videos[0]).astype(str), np.asarray(videos[1], dtype=np.float64)))

    def __call__(self, batch: Any) -> Any:
        from cover.stream.arrow import certify_batch

        return certify_batch(self.stage.cal, batch, columns=self.columns, stage=self.stage,
                             source="<ray batch>")[0]


def certify_dataset(ds: Any, cal: Calibrator, *, columns: dict[str, str] | None = None,
                    videos: tuple[list[str], list[float]] | None = None,
                    workers: int = 2, cpus_per_worker: float = 1.0,
                    batch_size: int | None = 65_536) -> Any:
    """``ds.map_batches(BatchCertifier, ...)`` over a pool of ``workers`` actors of
    ``cpus_per_worker`` CPUs each; lazy, like every Ray Data transform (write or
    materialise the result to run it). Leave CPUs for the read tasks: on a cluster of
    ``c`` CPUs, ``workers * cpus_per_worker < c``, else the pool starves the reads."""
    try:
        import ray.data
    except ImportError:
        raise InputError("Ray Data is not installed: pip install 'cover-grounding[ray]'") \
            from None
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    return ds.map_batches(
        BatchCertifier,
        fn_constructor_kwargs={"calibrator": cal.to_dict(), "columns": columns,
                               "videos": videos},
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=cpus_per_worker,
    )

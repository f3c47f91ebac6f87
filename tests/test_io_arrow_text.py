"""Arrow string columns as numpy text (:func:`cover.io.arrow_columns.arrow_text`)."""

from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from cover.io.arrow_columns import arrow_text  # noqa: E402


def test_arrow_text_equals_numpy_text_of_every_string_array() -> None:
    """ASCII widened from Arrow buffers equals ``to_numpy().astype(str)``, dtype included:
    slices, chunks, large strings, empty strings, NULs inside and at the end, and text
    that is not ASCII."""
    cases = [["a", "bb", ""], [], [""], ["é", "x"], ["a\x00b", "c\x00", " x "],
             ["abc"] * 5, ["v1", "v22", "v333"]]
    for values in cases:
        for t in (pa.string(), pa.large_string()):
            a = pa.array(values, t)
            for arr in (a, a.slice(1), a.slice(0, 1), pa.chunked_array([a, a]),
                        pa.chunked_array([], t)):
                want = np.asarray(arr.to_numpy(zero_copy_only=False)).astype(str)
                got = arrow_text(arr)
                assert got.dtype == want.dtype and got.tolist() == want.tolist()


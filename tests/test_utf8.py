"""Text and UTF-8 bytes columns: the ASCII cast of the code units gives numpy's own
encode and decode, dtype and shape included, and non-ASCII text goes through UTF-8."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cover.utf8 import as_bytes, as_text

ascii_text = st.text(alphabet=st.characters(max_codepoint=127), max_size=6)
any_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=6)


@given(st.lists(ascii_text, max_size=12), st.booleans())
def test_ascii_columns_cast_as_numpy_casts_them(values, square):
    text = np.array(values, dtype=str)
    if square and text.size % 2 == 0:
        text = text.reshape(2, -1)
    raw = as_bytes(text)
    want = text.astype(np.bytes_)
    width = max(int(np.char.str_len(want).max()) if want.size else 1, 1)
    assert raw.shape == text.shape and raw.dtype == np.dtype(f"S{width}")
    assert raw.tolist() == want.tolist()
    back = as_text(raw)
    assert back.dtype == raw.astype(np.str_).dtype and back.tolist() == text.tolist()


@given(st.lists(any_text, min_size=1, max_size=12))
def test_any_text_round_trips_through_utf8(values):
    text = np.array(values, dtype=str)
    raw = as_bytes(text)
    assert raw.tolist() == [v.encode("utf-8").rstrip(b"\x00") for v in text.tolist()]
    assert as_text(raw).tolist() == text.tolist()

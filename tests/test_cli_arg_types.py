"""argparse value types (``cover.cli.arg_types``): exactly the numbers each one names."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cover.cli.arg_types import fraction_in


@given(st.one_of(st.floats(allow_nan=True), st.text(max_size=6)), st.booleans())
def test_fraction_in_takes_exactly_the_open_or_half_open_unit_interval(x, one) -> None:
    text = repr(x) if isinstance(x, float) else x
    try:
        want = float(text)
    except ValueError:
        want = None
    ok = want is not None and (0 < want < 1 or (one and want == 1))
    if ok:
        assert fraction_in(one=one)(text) == want
    else:
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            fraction_in(one=one)(text)
        span = "(0, 1]" if one else "(0, 1)"
        assert str(exc.value) in (f"expected a number, got {text}",
                                  f"must be a number in {span}, got {text}")

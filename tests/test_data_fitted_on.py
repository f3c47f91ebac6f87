"""The fitted_on fingerprint: a digest of the sorted qids."""

from __future__ import annotations


def test_digest_hashed_in_slices_equals_the_whole_join(monkeypatch):
    """The sorted qids hashed a slice at a time give the digest of the whole
    newline-joined list (text arrays and lists alike), for any slice size."""
    import hashlib

    import numpy as np

    from cover.data import fitted_on as mod

    qids = np.array([f"q{i}é" if i % 7 else str(i) for i in range(2_000)])
    whole = hashlib.sha256("\n".join(sorted(qids.tolist())).encode("utf-8")).hexdigest()
    for size in (1, 3, 1_000, 5_000):
        monkeypatch.setattr(mod, "_HASH_SLICE", size)
        got = mod.fitted_on(qids)
        assert got["sha256"] == whole and got["count"] == 2_000
        assert got["qids"] == sorted(qids.tolist())
    assert mod.fitted_on(qids.tolist())["sha256"] == whole
    assert mod.fitted_on(np.array([], dtype=str))["sha256"] == hashlib.sha256(b"").hexdigest()


def test_integer_qids_digest_as_their_text():
    """Integer ids (a streamed calibration keeps plainly written qids as integers) are
    sorted as ASCII bytes: the digest and the qids kept are those of their text, for
    negatives, mixed widths and unsigned types alike."""
    import numpy as np

    from cover.data.fitted_on import fitted_on

    for ids in (np.array([5, -3, 12, 100, -100, 0, 7, 10]), np.arange(-50, 6_000),
                np.array([2**63 - 1, -(2**63), 9]), np.array([3, 1, 200], dtype=np.uint8),
                np.array([], dtype=np.int64)):
        text = [str(int(i)) for i in ids]
        assert fitted_on(ids) == fitted_on(text) == fitted_on(np.array(text, dtype=str))

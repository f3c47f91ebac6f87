"""``cover formats --explain FILE``: what was detected, the mapping used, the first
rows read."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Rows shown.
FIRST = 3


def explain(path: str) -> tuple[str, bool]:
    """A few lines about ``path``: its format (or why none fits), the mapping of a named
    layout, and its first rows as COVER reads them; and whether it reads."""
    from cover.errors import CoverError
    from cover.io import formats

    out = [f"{path}:"]
    roles: tuple[formats.Role, ...] = ("predictions", "ground_truth")
    why = ""
    for role in roles:
        try:
            f, _ = formats.detect(path, role)
        except CoverError as exc:
            why = why or str(exc)
            continue
        out.append(f"  detected: {f.name} ({role.replace('_', ' ')}): {f.title}")
        if f.mapping is not None:
            out.append(f"  mapping:  --columns '{f.mapping.describe()}'")
            out.append(f"  join:     {_join(f.mapping.join)}")
            if "vid" not in f.mapping.fields:
                out.append("  vid:      not in the file; taken from the ground truth by qid")
        try:
            got = formats.read(path, role, format=f.name,
                               options=formats.Options(on_error="reject"))
        except CoverError as exc:
            out.append(f"  read:     error: {exc}")
            return "\n".join(out), False
        t = got.loaded.table
        out.append(f"  read:     {len(t)} rows, {got.loaded.n_rejected} rejected"
                   + (f", relevance over {int(t.has_relevance.sum())} rows"
                      if role == "predictions" and t.has_relevance.any() else ""))
        scored = f.mapping is None or "scores" in f.mapping.fields
        placeholder = f.mapping is not None and "vid" not in f.mapping.fields
        out += [f"  row {i + 1}:    {_row(t, i, scored, placeholder)}"
                for i in range(min(FIRST, len(t)))]
        return "\n".join(out), True
    out.append(f"  no format fits: {why}")
    return "\n".join(out), False


def _join(how: str) -> str:
    return {"qid": "by qid",
            "order": "by order within each video (qid <vid>-<k> = the k-th query of the "
                     "video in the ground truth)",
            "content": "on (vid, query text)"}[how]


def _row(t: Any, i: int, scored: bool, placeholder: bool) -> str:
    parts = [f"qid={t.qid[i]}", "vid=(from the ground truth)" if placeholder
             else f"vid={t.vid[i]}"]
    if t.query is not None and t.query[i] is not None:
        q = str(t.query[i])
        parts.append(f"query={q[:40] + ('...' if len(q) > 40 else '')!r}")
    if np.isfinite(t.duration[i]):
        parts.append(f"duration={t.duration[i]:g}")
    if t.truth is not None:
        w = t.truth.take(np.array([i]))
        parts.append("truth=" + _windows(np.column_stack([w.starts, w.ends])))
    else:
        pw = t.pred_windows
        if pw is not None:
            rows = pw.values[pw.offsets[i]:pw.offsets[i + 1]]
            parts.append(f"windows={_windows(rows if scored else rows[:, :2])}")
    return ", ".join(parts)


def _windows(w: Any, show: int = 3) -> str:
    cells = ["[" + ", ".join(f"{x:g}" for x in r) + "]" for r in np.asarray(w)[:show]]
    more = f", ... ({len(w)} in all)" if len(w) > show else ""
    return "[" + ", ".join(cells) + more + "]"

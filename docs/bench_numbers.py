"""Generates the benchmark numbers quoted outside bench/: the README's Speed section,
docs/scale.md's file tables and their reading, and the Mondrian-vs-crepes paragraph of
docs/calibration-rules.md, all read from the committed bench results
(bench/results.md, bench/results-stream.md, bench/mondrian-results.md).

Benchmarks cannot rerun in a test (they need a quiet machine and minutes); this script
only copies what the last committed bench run measured, so a page cannot quote a number
its results file does not hold. Rerun the benchmark (bench/README.md), commit its results
file, then ``python docs/docgen.py --write``. Needs no data.

Usage: python docs/bench_numbers.py  (prints the blocks)
"""

from __future__ import annotations

import re
from pathlib import Path

from docgen import bullets, wrap

BENCH = Path(__file__).resolve().parents[1] / "bench"
RATIO = re.compile(r"\(\*\*([\d.]+)×\*\*")


def tables(path: Path) -> list[tuple[str, list[dict[str, str]]]]:
    """Every Markdown table of ``path``: (the text line before it, rows keyed by header)."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("|--"):
            head = [c.strip() for c in lines[i].strip("|").split("|")]
            before = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(head, (c.strip() for c in lines[i].strip("|").split("|")),
                                     strict=False)))
                i += 1
            out.append((before, rows))
        else:
            i += 1
    return out


def raw_tables(path: Path) -> list[str]:
    """Every table of ``path`` as its Markdown text, with the caption line above it."""
    text = path.read_text(encoding="utf-8")
    return [m.group(0).rstrip("\n") for m in
            re.finditer(r"^[^\n|][^\n]*\n\n(?:\|[^\n]*\n)+", text, flags=re.M)]


def row(rows: list[dict[str, str]], prefix: str) -> dict[str, str]:
    return next(r for r in rows if r["implementation"].startswith(prefix))


def ratio(cell: str) -> float:
    m = RATIO.search(cell)
    assert m, cell
    return float(m.group(1))


def ms(cell: str) -> float:
    v, unit = re.search(r"([\d.]+) (µs|ms|s)", cell).groups()  # type: ignore[union-attr]
    return float(v) * {"µs": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def stream() -> dict[str, dict[str, str]]:
    """bench/results-stream.md's runs by name (read, certify, parse-orjson, jsonl-norm...)."""
    return {r["run"]: r for _, rows in tables(BENCH / "results-stream.md") for r in rows}


def times(run: dict[str, str]) -> float:
    """A stream run's ``/ parse-orjson`` factor (``4.9x`` -> 4.9)."""
    return float(run["/ parse-orjson"].rstrip("x"))


def _times_cover(rows: list[dict[str, str]], prefix: str, col: str) -> str:
    """``0.77× / 1.3×`` of a row of table d) in column ``col`` (time / COVER's), or why it
    has no ratio there (a peer not installed in that run)."""
    cell = row(rows, prefix).get(col, "—")
    if not RATIO.search(cell):
        return "not measured"
    v = ratio(cell)
    return f"{v:.2f}×" if v < 2 else f"{v:.1f}×"


def readme() -> str:
    res = dict(tables(BENCH / "results.md"))
    d = next(rows for cap, rows in res.items() if "1e6 → 1e6" in rows[0])
    e = next(rows for cap, rows in res.items() if "G=100, 1e6 → 1e6" in rows[0])
    cols = [c for c in ("1e6 → 1e6", "1e7 → 1e7") if c in d[0]]
    ref = [ms(row(d, "COVER GroundingTable.from_arrays + Calibrator")[c]) for c in cols]
    where = " and ".join(f"n_cal = m = {c.split()[0]}" for c in cols)
    took = " and ".join(f"{v:.0f} ms" for v in ref)
    numpy = [("the tuned in-place numpy script takes", "numpy, tuned in place"),
             ("the shortest correct numpy script", "numpy, shortest correct script"),
             ("copying the 7 input arrays (the floor)", "numpy, the floor")]
    peers = [("TorchCP", "TorchCP"), ("MAPIE", "MAPIE"), ("puncc", "puncc"),
             ("crepes", "crepes")]

    def both(prefix: str) -> str:
        return " / ".join(_times_cover(d, prefix, c) for c in cols)

    measured = [(n, k) for n, k in peers if both(k).replace("not measured", "").strip(" /")]
    absent = [n for n, _ in peers if (n, dict(peers)[n]) not in measured]
    peer_text = ", ".join(f"{n} {both(k)}" for n, k in measured)
    if absent:
        peer_text += ("; " if peer_text else "") + (
            f"{', '.join(absent[:-1])} and {absent[-1]}" if len(absent) > 1 else absent[0]
        ) + " were not installed in that run"
    g100 = "G=100, 1e6 → 1e6"
    mond = [f"{name} takes {_times_cover(e, key, g100)} COVER's time"
            for name, key in (("crepes `bins=`", "crepes"),
                              ("a numpy (group, score) sort", "numpy"))
            if _times_cover(e, key, g100) != "not measured"]
    s = stream()
    pq, jn, js, ev = s["certify"], s["jsonl-norm"], s["jsonl-sls"], s["evaluate"]
    rows_s = float(pq["rows/s"].replace(",", "")) / 1e6
    fastest = next(k for k in jn if k.startswith("/ parse-") and k != "/ parse-orjson")
    return bullets([
        f"**In memory** (NORM, one group), {where}: tables from arrays (every row checked) "
        f"+ `Calibrator.fit` + `certify` take {took}; "
        + ", ".join(f"{name} {both(key)}" for name, key in numpy)
        + f" of that; {peer_text} (time / COVER's, same data, same run, interleaved rounds: "
        "below 1× is faster than COVER, which checks every row where the scripts do not). "
        f"Mondrian with 100 groups: {', '.join(mond)}.",
        f"**Files**: `cover certify` on a 1e7-row Parquet file runs at {rows_s:.2f} million "
        f"rows/s in {pq['peak RSS (MB)']} MB ({pq['/ read-write'].rstrip('x')}× a bare "
        "pyarrow read + write of the same table); on a 1e6-line Moment-DETR jsonl with "
        f"75-clip saliency in {float(jn['wall (s)']):.0f} s and {jn['peak RSS (MB)']} MB "
        f"({jn[fastest].rstrip('x')}× the fastest bare parse, {fastest[2:]}, and "
        f"{times(jn):.1f}× orjson's parse of every field; SLS {js[fastest].rstrip('x')}× and "
        f"{times(js):.1f}×), echoing every line byte for byte; `cover evaluate` of those "
        f"certified lines takes {ev['/ parse-evaluate'].rstrip('x')}× a typed parse of "
        "what it reads of its two inputs (goals: 2× for NORM and evaluate, 3× for SLS). "
        "`cover calibrate` and `cover evaluate` stream JSON lines, Parquet and CSV too; "
        "Ray Data, Dask and Spark run the same batch kernel "
        "([docs/scale.md](docs/scale.md)).",
    ])


def scale_reading() -> str:
    s = stream()
    pq, rd, jn = s["certify"], s["read"], s["jsonl-norm"]
    ev = s["evaluate"]
    fastest = next(k for k in jn if k.startswith("/ parse-") and k != "/ parse-orjson")
    peaks = [int(r["peak RSS (MB)"]) for r in s.values()]
    return wrap(
        f"Every run stays {'under 1 GB' if max(peaks) < 1024 else 'as measured'}: "
        f"{pq['peak RSS (MB)']} MB for 1e7 Parquet rows, {jn['peak RSS (MB)']} MB for 1e6 "
        f"JSON lines with saliency, {ev['peak RSS (MB)']} MB for evaluate. Parquet certifies "
        f"{float(pq['rows/s'].replace(',', '')) / 1e6:.2f} million rows/s "
        f"({pq['/ read-write'].rstrip('x')}× a bare read + write of the same table, "
        f"{float(pq['wall (s)']) / float(rd['wall (s)']):.1f}× a read alone); JSON lines "
        f"run at {jn[fastest].rstrip('x')}× the time the fastest correct parse takes "
        f"({fastest[2:]}: a typed msgspec decode of the fields certify reads) and "
        f"{jn['/ parse-orjson'].rstrip('x')}× orjson's parse of every field; evaluate "
        f"at {ev['/ parse-evaluate'].rstrip('x')}× a typed decode of the fields it reads "
        "of the certified lines and the ground truth.")


def mondrian() -> str:
    (_, agree), (_, times) = tables(BENCH / "mondrian-results.md")
    off = {r["alpha"]: int(r["groups"]) - int(r["crepes = exact"]) for r in agree}
    firsts = next(r for r in agree if r["alpha"] == "0.1")["crepes off (first n)"]
    big = [r for r in times if r["groups"] == "1000"]
    small = [r for r in times if r["groups"] == "10"]

    def span(xs: list[float], fmt: str = ".0f") -> str:
        lo, hi = format(min(xs), fmt), format(max(xs), fmt)
        return lo if lo == hi else f"{lo}–{hi}"

    cov = lambda r: float(r["COVER, ms"])  # noqa: E731
    return wrap(
        "Against crepes' `bins=` (`.venv/bin/python bench/mondrian.py`, results in "
        "[bench/mondrian-results.md](../bench/mondrian-results.md)): over group sizes "
        f"1–{agree[0]['groups']}, COVER's per-group threshold is the exact order statistic "
        + ("for every group" if all(r["COVER = exact"] == r["groups"] for r in agree)
           else "not always")
        + f", while crepes is one order statistic off for {off['0.1']} of "
        f"{agree[0]['groups']} sizes at `alpha = 0.1` (n = {', '.join(firsts.split(', ')[:3])}"
        f", ...) and {off['0.2']} at `alpha = 0.2`; with 1000 groups COVER is "
        f"{span([float(r['numpy loop (float ranks), ms']) / cov(r) for r in big])}× faster "
        "than a per-group numpy loop and "
        f"{span([float(r['crepes bins, ms']) / cov(r) for r in big])}× faster than crepes "
        "(one (group, score) order instead of a mask per group), and within "
        f"{max(cov(r) / float(r['numpy loop (float ranks), ms']) for r in small):.1f}× of the "
        "loop with 10 groups.")


def blocks(data: Path | None = None) -> dict[str, str]:
    """Blocks of README.md, docs/scale.md and docs/calibration-rules.md (no data read)."""
    pq_table, jsonl_table, evaluate_table = raw_tables(BENCH / "results-stream.md")[:3]
    return {"readme-speed": readme(), "scale-parquet": pq_table,
            "scale-jsonl": jsonl_table + "\n\n" + evaluate_table,
            "scale-reading": scale_reading(), "mondrian": mondrian()}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)

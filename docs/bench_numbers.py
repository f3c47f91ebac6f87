"""Generates the benchmark numbers quoted outside bench/: the README's Speed section,
docs/scale.md's file tables and their reading and its one-row latency, and the
Mondrian-vs-crepes paragraph of docs/calibration-rules.md, all read from the committed
bench results (bench/results.md, bench/results-stream.md, bench/results-latency.md,
bench/mondrian-results.md).

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


#: A results file may keep the run before its latest below this heading (for comparison):
#: the pages quote the latest run only.
EARLIER_RUN = "## The run before"


def latest_run(path: Path, earlier: bool = False) -> str:
    """The text of ``path`` down to its earlier run (:data:`EARLIER_RUN`), if it keeps one;
    ``earlier``: the earlier run's text instead ("" when it keeps none)."""
    head, _, tail = path.read_text(encoding="utf-8").partition("\n" + EARLIER_RUN)
    return tail if earlier else head


def tables(path: Path, earlier: bool = False) -> list[tuple[str, list[dict[str, str]]]]:
    """Every Markdown table of the latest run in ``path`` (``earlier``: of the run kept
    before it): (the text line before it, rows keyed by header)."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    lines = latest_run(path, earlier).splitlines()
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
    """Every table of the latest run in ``path`` as its Markdown text, with the caption
    line above it."""
    text = latest_run(path)
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


def stream(earlier: bool = False) -> dict[str, dict[str, str]]:
    """bench/results-stream.md's runs by name (read, certify, parse-orjson, jsonl-norm...);
    ``earlier``: those of the run it keeps before the latest (empty when none)."""
    return {r["run"]: r for _, rows in tables(BENCH / "results-stream.md", earlier)
            for r in rows}


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
             ("the same script with a sampled select", "numpy, sampled select"),
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
    return bullets([
        f"**In memory** (NORM, one group), {where}: tables from arrays (every row checked) "
        f"+ `Calibrator.fit` + `certify` take {took}; "
        + ", ".join(f"{name} {both(key)}" for name, key in numpy)
        + f" of that; {peer_text} (time / COVER's, same data, same run, interleaved rounds: "
        "below 1× is faster than COVER, which checks every row where the scripts do not). "
        f"Mondrian with 100 groups: {', '.join(mond)}.",
        "**Files**: " + files_text() + " `cover calibrate` and `cover evaluate` stream JSON "
        "lines, Parquet and CSV too; Ray Data, Dask and Spark run the same batch kernel "
        "([docs/scale.md](docs/scale.md)).",
    ])


def files_text() -> str:
    """The file commands against their floors, from bench/results-stream.md."""
    s = stream()
    pq, jn, js, ev = s["certify"], s["jsonl-norm"], s["jsonl-sls"], s["evaluate"]
    rows_s = float(pq["rows/s"].replace(",", "")) / 1e6
    fastest = next(k for k in jn if k.startswith("/ parse-") and k != "/ parse-orjson")
    return (
        f"`cover certify` on a 1e7-row Parquet file runs at {rows_s:.2f} million "
        f"rows/s in {pq['peak RSS (MB)']} MB ({pq['/ read-write'].rstrip('x')}× a bare "
        "pyarrow read + write of the same table); on a 1e6-line Moment-DETR jsonl with "
        f"75-clip saliency in {float(jn['wall (s)']):.0f} s and {jn['peak RSS (MB)']} MB "
        f"({jn[fastest].rstrip('x')}× the fastest bare parse, {fastest[2:]}, and "
        f"{times(jn):.1f}× orjson's parse of every field; SLS {js[fastest].rstrip('x')}× and "
        f"{times(js):.1f}×), echoing every line byte for byte"
        + (f" (merely parsing and writing every line back with a constant block, echo-typed, "
           f"takes {s['echo-typed'][fastest].rstrip('x')}× the parse; NORM certify "
           f"{jn['/ echo-typed'].rstrip('x')}× that)" if "echo-typed" in s else "")
        + f"; `cover evaluate` of those certified lines takes "
        f"{ev['/ parse-evaluate'].rstrip('x')}× a typed parse of what it reads of its two "
        "inputs (goals: 2× for NORM and evaluate, 3× for SLS)." + _earlier_text(fastest))


def _earlier_text(fastest: str) -> str:
    """The same ratios in the run bench/results-stream.md keeps before its latest: the
    spread of one measurement on this machine ("" when it keeps none)."""
    e = stream(earlier=True)
    if not {"certify", "jsonl-norm", "jsonl-sls", "evaluate"} <= set(e):
        return ""
    cells = (e["certify"]["/ read-write"], e["jsonl-norm"][fastest], e["jsonl-sls"][fastest],
             e["evaluate"]["/ parse-evaluate"])
    parquet, norm, sls, ev = (c.rstrip("x") + "×" for c in cells)
    return (f" The run before it, same command: Parquet {parquet}, NORM {norm}, SLS {sls}, "
            f"evaluate {ev} (the same ratios).")


def _short(name: str) -> str:
    """A table row's implementation without what follows a colon, and without the
    parentheses that are not its family (``(norm)`` stays)."""
    name = name.split(": ")[0]
    return re.sub(r" \((?!(?:norm|sec|sls|NORM|SEC|SLS)\))[^()]*(?:\([^()]*\)[^()]*)*\)", "",
                  name)


def _x(v: float) -> str:
    return f"{v:.2f}×" if v < 2 else f"{v:.1f}×"


def _faster(rows: list[dict[str, str]], col: str) -> list[str]:
    """The rows of a table faster than COVER's reference in column ``col``."""
    return [f"{_short(r['implementation'])} ({_x(ratio(r[col]))})" for r in rows
            if RATIO.search(r.get(col, "")) and ratio(r[col]) < 1]


def _listed(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _agreement(r: dict[str, str]) -> str:
    """A row's "agrees with COVER" cell in words: ``no (13 of 100 ... differ)`` -> the
    parenthesis."""
    cell = r.get("agrees with COVER", "")
    why = re.search(r"no \((.*)\)\s*$", cell)
    return "its thresholds agree" if cell == "yes" else (why.group(1) if why else cell)


def bench_reading() -> str:
    """bench/README.md's reading of the last committed bench/results.md, table by table,
    the cells COVER does not win first."""
    text = (BENCH / "results.md").read_text(encoding="utf-8")
    when = re.search(r"generated (\d{4}-\d\d-\d\d)", text)
    load = re.search(r"load average ([\d.]+) at the start, ([\d.]+) at the end", text)
    res = tables(BENCH / "results.md")
    a, b, c, d, e = (rows for _, rows in res[:5])
    sizes = [k for k in a[0] if k.startswith("1e")]
    # a): which contenders beat the threshold at each size
    a_rows = [r for r in a if not r["implementation"].startswith("COVER")]
    a_text = "; ".join(f"at n = {n}: {_listed(f)}" if (f := _faster(a_rows, n))
                       else f"at n = {n}: none" for n in sizes)
    b_sizes = [k for k in b[0] if k.startswith("1e")]
    b_text = "; ".join(f"at m = {n}: {_listed(f)}" if (f := _faster(b, n))
                       else f"at m = {n}: none" for n in b_sizes)
    big = b_sizes[-1]
    c_num = row(c, "numpy + length/T")
    cols = [k for k in d[0] if "→" in k]
    same = [k for k in cols if k.split(" → ")[0] == k.split(" → ")[1]]
    ref = row(d, "COVER GroundingTable.from_arrays + Calibrator")

    def at(prefix: str, col: str) -> float:
        return ratio(row(d, prefix)[col])

    per_size = []
    for k in same:
        n = k.split(" → ")[0]
        tuned, sampled = at("numpy, tuned in place", k), at("numpy, sampled select", k)
        floor = at("numpy, the floor", k)
        per_size.append(
            f"at n_cal = m = {n} ({ms(ref[k]):.0f} ms) the tuned in-place script takes "
            f"{_x(tuned)} COVER's time, the tuned script with a sampled select {_x(sampled)}, "
            f"the shortest correct script {_x(at('numpy, shortest correct script', k))}, "
            f"the two tables alone {_x(at('COVER GroundingTable.from_arrays (cal', k))} and "
            f"the copy floor {_x(floor)}: COVER takes {_x(1 / tuned)} the tuned script "
            f"({'within' if 1 / tuned <= 1.1 else 'not within'} the 1.1× goal), "
            f"{_x(1 / sampled)} the sampled one and {_x(1 / floor)} the copy floor "
            f"({'within' if 1 / floor <= 2.5 else 'not within'} the 2.5× goal)")
    peers = [r for r in d if r["implementation"].split()[0] in ("crepes", "MAPIE", "puncc",
                                                                  "TorchCP")]
    small = [k for k in cols if k not in same]
    beat = [f"{_short(r['implementation']).split()[0]} at {k} ({_x(ratio(r[k]))})"
            for k in small for r in peers if RATIO.search(r.get(k, "")) and ratio(r[k]) < 1]
    peer_same = [ratio(r[k]) for r in peers for k in same if RATIO.search(r.get(k, ""))]
    g100 = "G=100, 1e6 → 1e6"
    crepes_e = row(e, "crepes")
    both_sizes = " and ".join(k.split(" → ")[0] for k in same)
    return wrap(
        f"**Speed.** `bench/results.md`: one run of `bench/run.py` (default options) on "
        f"{when.group(1) if when else 'the date it states'} on the 2-core machine "
        + (f"(1-minute load average {load.group(1)} at the start, {load.group(2)} at the "
           "end)" if load else "")
        + ". Ratios are medians of the interleaved rounds (time / COVER's), with their "
        "min–max in the file; below 1× the contender is faster than COVER. What the run "
        "shows, cells COVER does not win included:") + "\n\n" + bullets([
        "**Calibrate + certify in memory (table d).** A" + "; ".join(per_size)[1:]
        + ". The scripts check no row; COVER's path checks every "
        "one. Peers faster than COVER with small calibration sets: "
        + (_listed(beat) if beat else "none") + f"; at n_cal = m ({both_sizes}) "
        + (f"every peer takes {_x(min(peer_same))} to {_x(max(peer_same))} COVER's time"
           if peer_same else "no peer was measured") + ".",
        "**Threshold alone (table a).** Faster than COVER's `split_conformal` (or "
        "`Calibrator.fit` for the rows that also score): " + a_text + ".",
        "**Certification (table b).** Faster than COVER's `build_regions`: " + b_text + ".",
        "**Evaluation (table c).** COVER's `evaluate` computes more than the numpy versions "
        "(components, the refusal split, the clustered band's per-video sums): the numpy "
        f"metric set it is compared with takes {_x(ratio(c_num[big]))} COVER's time at "
        f"{big} rows.",
        f"**Mondrian (table e), {g100.split(', ')[1]} rows, 100 groups.** crepes `bins=` takes "
        f"{_x(ratio(crepes_e[g100]))} COVER's time ({_agreement(crepes_e)}), a numpy "
        f"(group, score) sort {_x(ratio(row(e, 'numpy')[g100]))}.",
        "**Files (`bench/results-stream.md`, a separate run).** " + files_text(),
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


def scale_latency() -> str:
    """docs/scale.md's one-row section: both tables of bench/results-latency.md (the
    first under its machine line), then what they say."""
    path = BENCH / "results-latency.md"
    (_, calls), (_, plain) = tables(path)
    by_name = {r["contender"]: r for r in calls}
    us = {name: float(r["median (µs)"]) for name, r in by_name.items()}
    by = {r["score"]: r for r in plain}
    table_x = us["Calibrator.certify, one-row table (NORM)"] / us["RowCertifier (NORM)"]

    def against(score: str) -> str:
        r = by[score]
        return (f"{r['ratio, median of rounds']} ({r['RowCertifier (µs)']} µs against "
                f"{r['plain function (µs)']} µs; worst round {r['worst round']})")

    reading = wrap(
        "Call by call, `RowCertifier` on NORM takes "
        f"{by_name['RowCertifier (NORM)']['median / numpy']} the time "
        "of the numpy expression (no array is built for one row), and building a one-row "
        f"table costs {table_x:.0f}x that. Under `timeit`, against a plain Python function "
        f"with the same checks, it takes {against('NORM')} on NORM, and {against('SLS')} "
        "on SLS with 75 clips, where the plain function checks the same values and merges "
        "the same clips.")
    return "\n\n".join([*raw_tables(path)[:2], reading])


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
    """Blocks of README.md, bench/README.md, docs/scale.md and docs/calibration-rules.md
    (no data read)."""
    pq_table, jsonl_table, evaluate_table = raw_tables(BENCH / "results-stream.md")[:3]
    return {"readme-speed": readme(), "scale-parquet": pq_table,
            "scale-jsonl": jsonl_table + "\n\n" + evaluate_table,
            "scale-reading": scale_reading(), "scale-latency": scale_latency(),
            "mondrian": mondrian(),
            "bench-reading": bench_reading()}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)

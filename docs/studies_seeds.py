"""docs/results.md's split-seed block: how much the choice of calibration/test split alone
moves the headline numbers (``cover study all --split-seeds N``), read from each pair's
``split_seeds.json``; and the verdict on the paper's QD-DETR undercoverage it allows."""

from __future__ import annotations

from typing import Any

from docgen import wrap

HEADLINE = 0.9


def _cell(p: dict[str, Any], study: str, family: str, target: float,
          stratum: str | None = None) -> dict[str, Any] | None:
    for c in p.get("split-seeds", {}).get("cells", []):
        if (c["study"] == study and c["family"] == family and abs(c["target"] - target) < 1e-9
                and c.get("stratum") == stratum and c["quantity"] == "coverage"):
            return c
    return None


def seeds_table(res: dict[str, Any]) -> str:
    """One row per pair: NORM coverage at the headline target over the split seeds, plus
    every cell the paper reports a number for (coverage, strata, lengths)."""
    rows = ["| pair | cell | seed 42 | mean ± sd over seeds | min-max | in its test band | "
            "paper (share of seeds at or below) |", "|---|---|---|---|---|---|---|"]
    n = None
    for (name, dataset), p in res["pairs"].items():
        cells = [c for c in p.get("split-seeds", {}).get("cells", [])
                 if c["paper"] is not None or (
                     c["study"] == "coverage" and c["family"] == "norm"
                     and abs(c["target"] - HEADLINE) < 1e-9)]
        for c in cells:
            n = c["n_seeds"]
            f = ".1f" if "length" in c["quantity"] else ".3f"
            what = f"{c['family'].upper()} {c['study']} {c['quantity']} at {c['target']:.2f}"
            band = ("--" if c["share_inside_band"] is None
                    else f"{100 * c['share_inside_band']:.0f}%")
            flag = " *" if c["protocol_inside_band"] is False else ""
            paper = ("--" if c["paper"] is None else
                     f"{c['paper']['value']:{f}} ({c['paper_percentile']:.0f}% of seeds)")
            rows.append(f"| {name}, {dataset} | {what} | {c['protocol_value']:{f}}{flag} | "
                        f"{c['mean']:{f}} ± {c['sd']:{f}} | {c['min']:{f}}-{c['max']:{f}} | "
                        f"{band} | {paper} |")
    head = wrap(f"Over {n} unit-level splits (seeds 0..{(n or 1) - 1}); `*` marks a seed-42 "
                "value outside its own 95% test band (a stratum's band uses its own rows "
                "and videos).")
    return head + "\n\n" + "\n".join(rows)


def undercoverage_verdict(res: dict[str, Any]) -> str | None:
    """Where the paper's QD-DETR 0.90 coverage falls among the split seeds, or None."""
    qd = res["pairs"].get(("QD-DETR", "QVHighlights"), {})
    c = _cell(qd, "coverage", "norm", HEADLINE)
    if c is None or c["paper"] is None:
        return None
    return (f"the paper's {c['paper']['value']:.3f} is at or above "
            f"{c['paper_percentile']:.0f}% "
            f"of {c['n_seeds']} split seeds here (mean {c['mean']:.3f}, min {c['min']:.3f}): "
            "inside split noise")

"""The job behind ``cover online``: replay a labelled prediction file as a stream, in a
chosen order, through online ACI and through the fixed split-conformal threshold.

Calibration rows come from a unit-level split (or a qid list); the other rows form the
stream, ordered by ``order``. ``switch_preds`` swaps in another grounder's predictions
for the same queries from ``switch_at`` (a fraction of the stream) on: an injected shift.
Writes ``online_steps.jsonl`` (one record per step), ``online_summary.json`` and
``online_miss_rate.png`` (rolling miss rate of both rules, and ``alpha_t``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import to_json_number
from cover.calibrate.online import DEFAULT_GAMMA, AciRecord, aci_replay, rolling_mean
from cover.calibrate.quantile import AlphaLike
from cover.calibrate.split import split_conformal
from cover.data.splits import split_by_unit
from cover.data.table import GroundingTable
from cover.errors import InputError, report_problems, say
from cover.io.folders import check_results_folder
from cover.io.jsonl import write_jsonl
from cover.io.labelled import read_labelled
from cover.io.output import results_folder, write_bytes, write_json
from cover.io.qids import read_qid_lines
from cover.regions import build_regions
from cover.report.misses import stratum_floor
from cover.scores import compute_scores

ORDERS = ("file", "random", "duration", "pred_length", "reverse")
DEFAULT_WINDOW = 100


def stream_order(table: GroundingTable, order: str, *, seed: int = 42) -> NDArray[np.int64]:
    """Row order of the stream: ``file``, ``reverse``, ``random`` (seeded), or ascending
    ``duration`` / ``pred_length`` (stable; refusals last)."""
    n = len(table)
    if order == "file":
        return np.arange(n, dtype=np.int64)
    if order == "reverse":
        return np.arange(n - 1, -1, -1, dtype=np.int64)
    if order == "random":
        return np.random.default_rng(seed).permutation(n).astype(np.int64)
    if order == "duration":
        return np.argsort(table.duration, kind="stable").astype(np.int64)
    if order == "pred_length":
        length = np.where(table.has_interval, table.pred_end - table.pred_start, np.inf)
        return np.argsort(length, kind="stable").astype(np.int64)
    raise ValueError(f"unknown stream order {order!r}; choose one of {', '.join(ORDERS)}")


@dataclass(frozen=True)
class OnlineRun:
    """A replayed stream: ACI's record, the split-conformal comparison, who is who."""

    record: AciRecord
    split_threshold: float
    split_miss: NDArray[np.bool_]
    length: NDArray[np.float64]
    split_length: NDArray[np.float64]
    qid: NDArray[np.str_]
    source: NDArray[np.str_]
    switch_step: int | None
    n_calibration: int
    window: int

    def summary(self) -> dict[str, Any]:
        rec, T = self.record, self.record.miss.size
        out: dict[str, Any] = {
            "alpha": float(rec.alpha), "gamma": float(rec.gamma), "steps": T,
            "n_calibration": self.n_calibration, "window": self.window,
            "aci_miss_rate": rec.miss_rate, "split_miss_rate": float(self.split_miss.mean()),
            "aci_bound": rec.bound(), "split_threshold": to_json_number(self.split_threshold),
            "switch_step": self.switch_step,
        }
        cut = self.switch_step if self.switch_step is not None else T // 2
        for name, sl in (("before", slice(0, cut)), ("after", slice(cut, T))):
            out[f"aci_miss_rate_{name}"] = float(rec.miss[sl].mean()) if T else None
            out[f"split_miss_rate_{name}"] = float(self.split_miss[sl].mean()) if T else None
            out[f"aci_mean_length_s_{name}"] = float(self.length[sl].mean()) if T else None
            out[f"split_mean_length_s_{name}"] = float(self.split_length[sl].mean()) if T else None
        tail = slice(max(T - self.window, 0), T)
        out["aci_miss_rate_last_window"] = float(rec.miss[tail].mean()) if T else None
        out["split_miss_rate_last_window"] = float(self.split_miss[tail].mean()) if T else None
        return out

    def misses(self, order: str) -> list[str]:
        """The misses first, in plain words: each rule's miss rate on each part of the
        stream (before / after the switch, else the first / second half) above alpha by
        more than 1.96 binomial sd of that part's size; or one sentence saying none is."""
        rec, T = self.record, self.record.miss.size
        alpha = float(rec.alpha)
        cut = self.switch_step if self.switch_step is not None else T // 2
        parts = (("before the switch", "after the switch") if self.switch_step is not None
                 else ("in the first half", "in the second half"))
        out = []
        for rule, miss in (("split conformal (one fixed threshold)", self.split_miss),
                           ("ACI", rec.miss)):
            for words, sl in zip(parts, (slice(0, cut), slice(cut, T)), strict=True):
                n = int(miss[sl].size)
                floor = 1 - stratum_floor(1 - alpha, n)  # the stratum rule, for misses
                rate = float(miss[sl].mean()) if n else 0.0
                if n and rate > floor:
                    out.append(f"Miss: {rule} missed {rate:.1%} of the {n} rows {words} "
                               f"(order={order}), above alpha = {alpha:g} by more than "
                               f"sampling noise allows ({floor:.1%}).")
        return out or [f"No miss: each rule's miss rate on each part of the stream "
                       f"(order={order}) lies within sampling noise of alpha = {alpha:g}."]

    def lines(self, order: str) -> list[str]:
        """What ``cover online`` prints: what was replayed, the misses in words, then each
        rule's miss rate and mean length on each part of the stream, and ACI's bound."""
        s = self.summary()
        out = [f"replayed {s['steps']} rows (order={order}) against {s['n_calibration']} "
               f"calibration rows at alpha={s['alpha']:g}, gamma={s['gamma']:g}",
               *self.misses(order),
               f"rule   miss: overall  before   after  last {s['window']:<4}  mean length, s: "
               "before  after"]
        out += [f"{rule:<6} {s[f'{rule}_miss_rate']:13.3f} {s[f'{rule}_miss_rate_before']:7.3f} "
                f"{s[f'{rule}_miss_rate_after']:7.3f} {s[f'{rule}_miss_rate_last_window']:9.3f}"
                f"  {s[f'{rule}_mean_length_s_before']:20.1f} "
                f"{s[f'{rule}_mean_length_s_after']:6.1f}" for rule in ("aci", "split")]
        return [*out, f"ACI guarantee: |miss rate - alpha| <= {s['aci_bound']:.3f} after "
                      f"{s['steps']} steps"]

    def steps(self) -> list[dict[str, Any]]:
        rec = self.record
        roll = rolling_mean(rec.miss, self.window)
        roll_s = rolling_mean(self.split_miss, self.window)
        cols = zip(self.qid.tolist(), self.source.tolist(), rec.score.tolist(),
                   rec.alpha_t.tolist(), rec.k.tolist(), rec.threshold.tolist(),
                   rec.miss.tolist(), self.split_miss.tolist(), roll.tolist(), roll_s.tolist(),
                   self.length.tolist(), self.split_length.tolist(), strict=True)
        return [{"t": t + 1, "qid": q, "grounder": src, "score": to_json_number(s),
                 "alpha_t": a, "k": k, "threshold": to_json_number(th), "miss": m,
                 "split_miss": sm, "rolling_miss": r, "rolling_split_miss": rs,
                 "length_s": ln, "split_length_s": sln}
                for t, (q, src, s, a, k, th, m, sm, r, rs, ln, sln) in enumerate(cols)]


def _calibration_mask(table: GroundingTable, cal_qids: Path | None, cal_frac: float,
                      seed: int) -> NDArray[np.bool_]:
    if cal_qids is None:
        return split_by_unit(table.units, cal_frac=cal_frac, seed=seed).calibration
    wanted, _ = read_qid_lines(cal_qids)
    mask = np.isin(table.qid, wanted)
    if not mask.any():
        raise InputError(f"{cal_qids}: none of its query ids are in the prediction file")
    return mask


def replay(
    table: GroundingTable,
    *,
    calibration: NDArray[np.bool_],
    alpha: AlphaLike,
    gamma: AlphaLike = DEFAULT_GAMMA,
    score: str = "norm",
    order: str = "file",
    seed: int = 42,
    switch_table: GroundingTable | None = None,
    switch_at: float = 0.5,
    names: tuple[str, str] = ("preds", "switch"),
    window: int = DEFAULT_WINDOW,
    min_scale: float = 1.0,
    target: str = "envelope",
) -> OnlineRun:
    """Calibrate on the ``calibration`` rows; stream the others in ``order`` through ACI
    and the fixed split-conformal threshold (both from the same calibration scores)."""
    def scores_of(t: GroundingTable) -> NDArray[np.float64]:
        return compute_scores(t, score, min_scale=min_scale, target=target).values

    cal = scores_of(table.take(calibration))
    stream = table.take(~calibration)
    stream = stream.take(stream_order(stream, order, seed=seed))
    s = scores_of(stream)
    source = np.full(len(stream), names[0], dtype=object)
    cut: int | None = None
    parts = [stream]
    if switch_table is not None:
        if not 0 <= switch_at <= 1:
            raise ValueError(f"switch_at must be a fraction of the stream in [0, 1], "
                             f"got {switch_at}")
        cut = round(switch_at * len(stream))
        later = stream.qid[cut:]
        order_q = np.argsort(switch_table.qid)
        known = switch_table.qid[order_q]
        at = np.minimum(np.searchsorted(known, later), max(known.size - 1, 0))
        found = (known[at] == later) if known.size else np.zeros(later.size, dtype=bool)
        if not found.all():
            raise InputError(f"{switch_table.source}: {int((~found).sum())} streamed query "
                             f"id(s) have no prediction there, e.g. qid={later[~found][0]}")
        other = switch_table.take(order_q[at])
        s = np.concatenate([s[:cut], scores_of(other)])
        source[cut:] = names[1]
        parts = [stream.take(np.arange(cut)), other]
    rec = aci_replay(cal, s, alpha=alpha, gamma=gamma)
    th = split_conformal(cal, alpha=alpha)

    def lengths(lam: NDArray[np.float64]) -> NDArray[np.float64]:
        out, at = [], 0
        for part in parts:
            out.append(build_regions(part, score, lam[at:at + len(part)],
                                     min_scale=min_scale).length)
            at += len(part)
        return np.concatenate(out)

    return OnlineRun(rec, th.value, s > th.value, lengths(rec.threshold),
                     lengths(np.full(s.size, th.value)), stream.qid, source.astype(str), cut,
                     int(cal.size), window)


def run_online(
    *,
    preds: Path,
    gt: Path,
    out: Path,
    alpha: AlphaLike = "0.1",
    gamma: AlphaLike = DEFAULT_GAMMA,
    score: str = "norm",
    order: str = "file",
    seed: int = 42,
    cal_frac: float = 0.4,
    cal_qids: Path | None = None,
    switch_preds: Path | None = None,
    switch_at: float = 0.5,
    window: int = DEFAULT_WINDOW,
    min_scale: float = 1.0,
    target: str = "envelope",
    figure: bool = True,
    names: tuple[str | None, str | None] = (None, None),
    read_options: dict[str, Any] | None = None,
) -> OnlineRun:
    """Files in, ``out/online_steps.jsonl``, ``online_summary.json`` and (with
    matplotlib) ``online_miss_rate.png`` out. ``read_options`` go to
    :func:`cover.io.labelled.read_labelled` (formats, mappings, durations)."""
    read = read_options or {}
    inputs = [preds, gt, switch_preds, cal_qids]
    check_results_folder(out, inputs)  # before any reading: a folder it may not replace
    main = read_labelled(preds, gt, **read)
    table = main.table
    report_problems(main.problems, what=f"{preds} joined with {gt}")
    switch_table = None
    if switch_preds is not None:
        switch = read_labelled(switch_preds, gt, **read | {"on_error": "reject"})
        report_problems(switch.problems, what=f"{switch_preds} joined with {gt}")
        switch_table = switch.named_as(main)  # the same queries under the stream's names
    calibration = _calibration_mask(table, cal_qids, cal_frac, seed)
    name = names[0] or preds.stem
    switch_name = names[1] or (switch_preds.stem if switch_preds else "")
    run = replay(table, calibration=calibration, alpha=alpha, gamma=gamma, score=score,
                 order=order, seed=seed, switch_table=switch_table, switch_at=switch_at,
                 names=(name, switch_name),
                 window=window, min_scale=min_scale, target=target)
    with results_folder(out, inputs=inputs) as work:  # the three files, or none of them
        _write_run(work, run, inputs, figure, {
            "preds": str(preds), "gt": str(gt),
            "switch_preds": str(switch_preds) if switch_preds else None,
            "switch_at": switch_at if switch_preds else None, "score": score,
            "order": order, "seed": seed},
            title=(f"{name} ({score.upper()}, order={order}"
                   + (f", switched to {switch_name} at {switch_at:g}" if switch_preds else "")
                   + ")"))
    return run


def _write_run(out: Path, run: OnlineRun, inputs: list[Path | None], figure: bool,
               head: dict[str, Any], title: str) -> None:
    """``online_steps.jsonl``, ``online_summary.json`` (``head``, then the run's summary
    and misses) and, with matplotlib, ``online_miss_rate.png`` into ``out``."""
    order = head["order"]
    write_jsonl(out / "online_steps.jsonl", run.steps(), inputs=inputs)
    summary = {**head, **run.summary(), "misses": run.misses(order)}
    write_json(out / "online_summary.json", summary, inputs=inputs)
    if figure:
        try:
            from cover.report.online import miss_rate_figure
        except ImportError:  # pragma: no cover - depends on the environment
            say("cover: matplotlib is not installed; skipping the figure "
                "(pip install 'cover-grounding[plot]')")
        else:
            png = miss_rate_figure(run.record, run.split_miss, window=run.window,
                                   switch_step=run.switch_step, title=title)
            write_bytes(out / "online_miss_rate.png", png, inputs=inputs)

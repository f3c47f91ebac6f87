"""Numbers the paper reports for cells COVER's studies also compute.

They let a split-seed run say where the paper's number falls among the seeds
(:mod:`cover.studies.seed_spread`). The paper's checkpoints are not COVER's files (see
``docs/results.md``), so a number is matched by grounder *name* (``--name``), dataset,
study, family, target and quantity, and is a reference point, not a value to reproduce.
The paper states the coverage finding without a family; NORM is its headline family.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperNumber:
    """One number of the paper: the cell it belongs to and where the paper gives it."""

    grounder: str
    dataset: str
    study: str
    family: str
    target: float
    quantity: str
    value: float
    where: str


def _eff(dataset: str, family: str, target: float, value: float) -> PaperNumber:
    return PaperNumber("QD-DETR", dataset, "efficiency", family, target, "length (s)", value,
                       "Table 2")


PAPER_NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber("QD-DETR", "QVHighlights", "coverage", "norm", 0.9, "coverage", 0.879,
                "§Coverage validity"),
    PaperNumber("QD-DETR", "Charades-STA", "coverage", "norm", 0.9, "coverage", 0.900,
                "§Coverage validity"),
    PaperNumber("QD-DETR", "QVHighlights", "conditional", "norm", 0.9, "coverage: Long",
                0.752, "Table 7"),
    PaperNumber("QD-DETR", "QVHighlights", "conditional", "norm", 0.9,
                "coverage: Multi-window", 0.773, "Table 8"),
    _eff("QVHighlights", "sls", 0.8, 91.5), _eff("QVHighlights", "sls", 0.9, 111.6),
    _eff("QVHighlights", "norm", 0.8, 103.5), _eff("QVHighlights", "norm", 0.9, 129.1),
    _eff("QVHighlights", "sec", 0.8, 101.0), _eff("QVHighlights", "sec", 0.9, 128.6),
    _eff("Charades-STA", "norm", 0.8, 21.1), _eff("Charades-STA", "norm", 0.9, 24.4),
    _eff("Charades-STA", "sec", 0.8, 20.1), _eff("Charades-STA", "sec", 0.9, 24.9),
)


def paper_number(grounder: str, dataset: str, study: str, family: str, target: float,
                 quantity: str) -> PaperNumber | None:
    """The paper's number for this cell, if it reports one (names compared without case)."""
    for p in PAPER_NUMBERS:
        if (p.grounder.lower() == grounder.lower() and p.dataset.lower() == dataset.lower()
                and p.study == study and p.family == family and abs(p.target - target) < 1e-9
                and p.quantity == quantity):
            return p
    return None

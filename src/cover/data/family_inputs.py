"""Which input each score family needs, and a clear error when a file has none of it.

A row without its family's input is a refusal (certified as the whole video). A file
in which *every* row lacks it (``--score sls`` on predictions without
``pred_saliency_scores``) would refuse everything and report coverage 1.000, which
says nothing about the grounder: that is an error, not a result.
"""

from __future__ import annotations

from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.scores import check_family, refused_for, require_inputs

#: The input field each family reads, in the words of the prediction file.
FAMILY_INPUT: dict[str, str] = {
    "norm": "a predicted window (pred_relevant_windows)",
    "sec": "a predicted window (pred_relevant_windows)",
    "sls": "a relevance signal (pred_saliency_scores)",
    "sigma": "a predicted window with its uncertainty (start_std, end_std)",
}


def missing_family_input(table: GroundingTable, family: str) -> str | None:
    """A message when no row of a non-empty ``table`` carries ``family``'s input, else None."""
    fam = check_family(family)
    if len(table) == 0:
        return None
    try:
        if not refused_for(table, fam).all():
            return None
    except InputError as exc:  # the family's columns are absent altogether
        return str(exc)
    return (f"score family {fam} needs {FAMILY_INPUT[fam]}, and none of the {len(table)} "
            "rows has one")


def require_family_input(table: GroundingTable, family: str, source: str) -> None:
    """Raise :class:`InputError` naming ``source`` when :func:`missing_family_input` says so."""
    require_inputs(table, check_family(family))  # absent columns: the scores' own message
    why = missing_family_input(table, family)
    if why is not None:
        others = ", ".join(f for f in FAMILY_INPUT
                            if f != family and missing_family_input(table, f) is None)
        hint = f"; choose another family ({others})" if others else ""
        raise InputError(f"{source}: {why}{hint}")

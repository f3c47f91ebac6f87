"""cover.families: the family and target names and the input checks, also reachable under
their old home cover.scores (the same objects, so either import path behaves alike)."""

from __future__ import annotations

import pytest

import cover.families as families
import cover.scores as scores

MOVED = ["ALL_FAMILIES", "DEFAULT_MIN_SCALE", "FAMILIES", "FAMILY_INPUT", "INTERVAL_FAMILIES",
         "TARGETS", "Family", "Target", "check_family", "check_target",
         "missing_family_input", "refused_for", "require_family_input", "require_inputs"]


@pytest.mark.parametrize("name", MOVED)
def test_scores_reexports_the_family_names(name: str) -> None:
    assert getattr(scores, name) is getattr(families, name)


def test_unknown_family_and_target_name_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown score family 'iou'; choose one of norm, sec"):
        families.check_family("iou")
    with pytest.raises(ValueError, match="unknown truth target 'x'; choose one of envelope"):
        families.check_target("x")

"""The paper's measurements as functions of tables and a :class:`Protocol`."""

from cover.studies.coverage_validity import ValidityCell, ValidityResult, coverage_validity
from cover.studies.protocol import PAPER_ALPHAS, Protocol

__all__ = ["PAPER_ALPHAS", "Protocol", "ValidityCell", "ValidityResult", "coverage_validity"]

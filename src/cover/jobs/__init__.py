"""Jobs: whole runs from files to a results folder (tables, figures, report).

The command modules in :mod:`cover.cli` parse flags and call one job each; the
jobs call the library (readers, calibrators, studies, report writers).
"""

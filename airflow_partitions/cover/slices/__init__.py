"""Covers per slice of the declared dimensions: every required slice covered, rollups shared.

``compute.py`` (the slice cover, from the checked input to the answer), ``problem.py`` (the
checked input and the slice classes), ``solver.py`` (the dynamic programme over nested
periods), ``ordinal_sets.py`` (a source's availability as ranges), ``result.py`` (the answer:
``SliceCover``, immutable), ``missing.py``, ``summary.py`` and ``gauges.py`` (what it lacks, in
words and as gauges). Other packages import these names from :mod:`airflow_partitions.cover`.
"""

"""Covers checked against the partition rows before anyone acts on them.

``verified.py`` (a cover whose every partition's row is read and found whole; a repeated cover
reuses what it checked while the rows are the same bytes), ``fresh.py`` (covers without stale
partitions), ``per_slice.py`` (the same per required slice of the declared dimensions).
Other packages import these names from :mod:`airflow_partitions.catalog`.
"""

"""Partition rows on the store: their layout, reading, decoding and checking.

``layout.py`` (the rows' keys and cells), ``scan.py`` (scans that read past an undecodable
row), ``decode.py`` (partitions from projected scans), ``check.py`` (is a row whole),
``states.py`` (the rows a bulk write reads back), ``runs.py`` (one cover run's rows, checked).
Other packages import these names from :mod:`airflow_partitions.catalog`.
"""

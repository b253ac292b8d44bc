"""What a derived partition was built from, and which derived partitions are stale.

``inputs.py`` (the recorded inputs of a partition, ``p:in``), ``flag.py`` (whether a storage
may hold derived partitions at all), ``staleness.py`` (derived partitions whose inputs changed,
transitively). Other packages import these names from :mod:`airflow_partitions.catalog`.
"""

"""The Airflow layer's sensors: :mod:`.coverage` waits until partitions cover a range.
Airflow classes only; the logic lives in the catalog and the cover.
"""

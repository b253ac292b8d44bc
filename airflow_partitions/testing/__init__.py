"""Test support shipped with airflow-partitions: an HBase Thrift1 test double and pytest fixtures.

Import-light on purpose: the pytest plugin is loaded in every pytest run of a project that
installs this package, so nothing heavy (thriftpy2, happybase, airflow) is imported here.
See ``docs/testing.md``.
"""

"""The Airflow layer's hook: :class:`~airflow_partitions.hooks.catalog.PartitionCatalogHook`
opens the catalog from a ``partition_catalog`` connection. Airflow classes only.
"""

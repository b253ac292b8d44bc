"""What the catalog holds definitions of: facts, storage tables, their producers, partition specs.

``tables.py`` (``FactDef``, ``StorageDef``, ``Partition``, specs, templates, range expansion),
``locations.py`` (explicit locations checked), ``producers.py`` (a storage's producing DAGs),
``update.py`` (changing a stored definition safely), ``json_types.py`` (their JSON shapes).
Other packages import these names from :mod:`airflow_partitions.catalog`.
"""

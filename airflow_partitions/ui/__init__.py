"""The Partitions view: an Airflow UI plugin over the catalog (docs/observability.md).

The provider info's ``plugins`` key names :class:`airflow_partitions.ui.plugin.PartitionsPlugin`;
its FastAPI app (:mod:`.app`) is mounted by the api-server at ``/partitions`` and draws what
:mod:`airflow_partitions.lanes.fact_lanes` computes from the timelines' ranges. Nothing is
imported here: the plugin manager imports the plugin module itself.
"""

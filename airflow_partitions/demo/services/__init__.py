"""The real Airflow services (api-server, scheduler, dag-processor, triggerer) on loopback.

``make airflow`` / ``make airflow-stop`` (:mod:`.cli`) and the scheduler-level tests share this
harness: :class:`~.runner.AirflowServices` starts each service in its own process group, waits
until the api-server reports every heartbeat, and stops exactly those groups by pid.
"""

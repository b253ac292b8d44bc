"""Publish coverage metrics through Airflow's metrics interface (``Stats``).

Why through Airflow: the gauges then go wherever Airflow's own metrics go (StatsD, DogStatsD,
OpenTelemetry), with its prefix, allow/block lists and tag format, configured once in
``[metrics]``; and they are off when Airflow's metrics are off. The values come from
:mod:`airflow_partitions.cover.gauges`; this module only sends them, and a failure to send is
logged, never raised: a metric must not fail a sensor.

In Airflow 3.3 ``Stats`` is a no-op in a process until ``stats.initialize(factory=...)`` has
run there. The task runner and the triggerer do it; the ``airflow-partitions`` command does
not, so :func:`send` initializes it once per process from the same ``[metrics]`` settings.

The ``[metrics]`` settings are read once per process (:func:`settings`), as Airflow's own
``Stats`` does, so a sensor with metrics off does not read four settings at every poke to
find them off. Changing ``[metrics]`` therefore needs a restart of the worker or triggerer.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pendulum

from airflow_partitions.catalog import Catalog, FactState
from airflow_partitions.cover import Cover, CoverageMetrics, CoverRequest
from airflow_partitions.watch import measure, metrics_of

log = logging.getLogger(__name__)

#: ``[metrics]`` switches of which any one turns Airflow's metrics on.
_BACKEND_SWITCHES = ("statsd_on", "statsd_datadog_enabled", "otel_on")
_initialized = False


@dataclass(frozen=True)
class MetricsSettings:
    """The ``[metrics]`` settings a publish needs."""

    #: Any of StatsD, DogStatsD or OpenTelemetry is on.
    enabled: bool
    #: ``legacy_names_on``: also send each gauge under a name that carries its tags.
    legacy_names: bool


_settings: MetricsSettings | None = None


class AirflowConf(Protocol):
    """What the metrics read of Airflow's configuration (``AirflowConfigParser``)."""

    def get(self, section: str, key: str) -> str | None: ...

    def getboolean(self, section: str, key: str, *, fallback: bool) -> bool: ...


def airflow_conf() -> AirflowConf:
    """Airflow's configuration, the task SDK's when it carries one; the one place the
    ``[metrics]`` settings are read from (a test counts the reads)."""
    try:
        from airflow.sdk.configuration import conf
    except ImportError:  # pragma: no cover - Airflow before the task SDK carried its config
        from airflow.configuration import conf
    typed: AirflowConf = conf
    return typed


def settings() -> MetricsSettings:
    """``[metrics]`` as this process first read it (once: a restart picks up a change)."""
    global _settings
    if _settings is None:
        conf = airflow_conf()
        _settings = MetricsSettings(
            enabled=any(conf.getboolean("metrics", key, fallback=False)
                        for key in _BACKEND_SWITCHES),
            legacy_names=conf.getboolean("metrics", "legacy_names_on", fallback=True),
        )
    return _settings


def forget_settings() -> None:
    """Read ``[metrics]`` again at the next publish (tests that change it in-process)."""
    global _settings
    _settings = None


def metrics_enabled() -> bool:
    """Whether Airflow's ``[metrics]`` sends anything (StatsD, DogStatsD or OpenTelemetry)."""
    return settings().enabled


def metrics_target() -> str:
    """Where the metrics go, for a person: ``statsd 127.0.0.1:8125, prefix airflow``."""
    conf = airflow_conf()
    if not metrics_enabled():
        return "nowhere: Airflow metrics are off ([metrics] statsd_on is False)"
    kind = next((k for k in _BACKEND_SWITCHES if conf.getboolean("metrics", k, fallback=False)),
                None)
    if kind is None:  # on when this process first read [metrics], off in it now
        return "nowhere now: [metrics] was turned off since this process read it (restart it)"
    if kind == "otel_on":
        return "OpenTelemetry ([metrics] otel_on)"
    tags = ("datadog" if kind == "statsd_datadog_enabled"
            else "influxdb" if conf.getboolean("metrics", "statsd_influxdb_enabled",
                                                fallback=False)
            else "none: set [metrics] statsd_influxdb_enabled to send them")
    return (f"{'dogstatsd' if kind == 'statsd_datadog_enabled' else 'statsd'} "
            f"{conf.get('metrics', 'statsd_host')}:{conf.get('metrics', 'statsd_port')}, "
            f"prefix {conf.get('metrics', 'statsd_prefix')}, tags {tags}")


def _stats() -> Any:
    """Airflow's ``Stats``, initialized in this process (3.3), or the older self-configuring one."""
    global _initialized
    try:
        from airflow.sdk.observability.metrics.stats_utils import get_stats_factory
        from airflow.sdk.observability.stats import Stats
    except ImportError:  # pragma: no cover - Airflow before 3.2: airflow.stats reads [metrics]
        from airflow.stats import Stats

        return Stats
    if not _initialized:
        Stats.initialize(factory=get_stats_factory(),
                         export_legacy_names=settings().legacy_names)
        _initialized = True
    return Stats


def send(metrics: CoverageMetrics) -> bool:
    """Send the gauges; False (and nothing sent) when Airflow's metrics are off or sending
    failed. Each gauge goes with its tags, and, when ``[metrics] legacy_names_on`` (Airflow's
    default), also under its :attr:`~airflow_partitions.cover.gauges.Gauge.flat_name`."""
    if not metrics_enabled():
        return False
    try:
        stats = _stats()
        flat = settings().legacy_names
        for gauge in metrics.gauges():
            stats.gauge(gauge.name, gauge.value, tags=dict(gauge.tags))
            if flat:  # plain StatsD drops tags: the values in the name keep facts apart
                stats.gauge(gauge.flat_name, gauge.value)
    except Exception as exc:  # a metric must never fail the task that measures it
        log.warning("coverage metrics of %s not sent: %s: %s", metrics.fact,
                    type(exc).__name__, exc)
        return False
    return True


def publish_coverage(catalog: Catalog, request: CoverRequest, cover: Cover,
                     now: dt.datetime | None = None,
                     state: FactState | Callable[[], FactState | None] | None = None
                     ) -> CoverageMetrics | None:
    """Measure and send the metrics of a cover just computed; None when metrics are off (no
    catalog read then) or measuring failed (logged). ``state``: the fact's cached state the
    caller holds, or how to get it (``CoverageWatch.state_now``, called only when metrics are
    on), which saves the round trip of reading it again. Metrics off (the default), it returns
    at once: every idle poke calls it."""
    known = _settings
    if not (known.enabled if known is not None else metrics_enabled()):
        return None
    try:
        at = now or pendulum.now("UTC")
        held = state() if callable(state) else state
        metrics = (measure(catalog, request, cover, at) if held is None
                   else metrics_of(held, request, cover, at))
    except Exception as exc:  # e.g. the store went away between the cover and this read
        log.warning("coverage metrics of %s not measured: %s: %s", request.fact,
                    type(exc).__name__, exc)
        return None
    send(metrics)
    return metrics

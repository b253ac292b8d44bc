"""The Airflow services shared by test_scheduler.py and test_coverage_assets.py.

Started once for both (one start-up less in ``make test``: about 20 to 40 s), package-scoped,
so they stop when the worker leaves ``tests/e2e``; both modules carry the ``xdist_group``
``e2e:scheduler``, so pytest-xdist runs them on one worker.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.test_coverage_assets import setup_coverage
from tests.e2e.test_scheduler import Scheduler, StatsdSink, start_scheduler


@pytest.fixture(scope="package")
def statsd() -> Iterator[StatsdSink]:
    sink = StatsdSink()
    yield sink
    sink.close()


@pytest.fixture(scope="package")
def scheduler(tmp_path_factory: pytest.TempPathFactory, statsd: StatsdSink
              ) -> Iterator[Scheduler]:
    yield from start_scheduler(tmp_path_factory, statsd, [setup_coverage])

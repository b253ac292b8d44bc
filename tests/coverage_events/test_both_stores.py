"""The announcement protocol on both stores: emitters racing on one catalog announce each
window once, and a restatement once more."""

from __future__ import annotations

import threading
from pathlib import Path

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.coverage_events import CoverageAssetSpec, CoverageEmitter, Emission

SPEC = CoverageAssetSpec.of("ev", "DAILY")


def test_racing_emitters_announce_each_window_once(store_url: str, tmp_path: Path) -> None:
    setup = Catalog(store_url, data_root=str(tmp_path), cache=TimelineCache())
    setup.create_fact("ev")
    setup.create_storage("ev", "raw", ["HOURLY"], columns=["dt", "region"],
                         dimensions=["region=eu,us"])
    CoverageEmitter(setup).follow(SPEC)
    setup.register("raw", "HOURLY", [{"dt": f"2024-01-0{d}-{h:02d}", "region": r}
                                     for d in (1, 2) for h in range(24) for r in ("eu", "us")])
    seen: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def post(emission: Emission) -> None:
        with lock:
            seen.append((emission.key, emission.restated))

    def run() -> None:
        catalog = Catalog(store_url, data_root=str(tmp_path), cache=TimelineCache())
        CoverageEmitter(catalog).emit(SPEC, post)
        catalog.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [("2024-01-01T00:00:00", False), ("2024-01-02T00:00:00", False)]
    setup.register("raw", "HOURLY", [{"dt": "2024-01-02-05", "region": "us"}], restate=True)
    run()
    run()
    assert sorted(seen)[-1] == ("2024-01-02T00:00:00", True) and len(seen) == 3
    setup.close()

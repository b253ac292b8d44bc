"""Where ``make demo`` and ``make airflow`` keep things under their root (``.demo/``).

One definition, so the services started by ``make airflow`` use the very catalog, data root and
Airflow home that ``make demo`` filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airflow_partitions.demo.services.environment import airflow_environment

REPO = Path(__file__).resolve().parents[2]  # airflow_partitions/demo/layout.py -> the checkout


@dataclass(frozen=True)
class DemoLayout:
    """The demo's Airflow home, data root and catalog under ``root``."""

    root: Path
    dags: Path = REPO / "dags_examples"

    @classmethod
    def at(cls, root: Path, dags: Path | None = None) -> DemoLayout:
        return cls(root.resolve(), (dags or REPO / "dags_examples").resolve())

    @property
    def home(self) -> Path:
        return self.root / "airflow"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def store_url(self) -> str:
        return f"sqlite:///{self.root}/partitions.db"

    @property
    def services(self) -> Path:
        """Service logs and pid files (``make airflow``)."""
        return self.home / "services"

    def environment(self) -> dict[str, str]:
        """What every ``airflow`` process of the demo shares (local Spark on every core)."""
        return airflow_environment(self.home, self.dags, self.store_url, self.data,
                                   spark_master="local[*]")

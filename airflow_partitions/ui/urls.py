"""Where the Partitions view lives: its mount point and the URL of one fact over a range.

Kept free of FastAPI and Airflow so the sensor's link (:mod:`.link`) can build URLs in a task.
"""

from __future__ import annotations

import urllib.parse
from typing import Final

#: The api-server mounts the view's app here (``PartitionsPlugin.fastapi_apps``).
URL_PREFIX: Final = "/partitions"


def fact_url(fact: str, start: str | None = None, end: str | None = None,
             base_url: str = "") -> str:
    """``<base>/partitions/facts/<fact>?start=..&end=..`` (relative without a base URL)."""
    query = urllib.parse.urlencode({k: v for k, v in (("start", start), ("end", end)) if v})
    path = f"{base_url.rstrip('/')}{URL_PREFIX}/facts/{urllib.parse.quote(fact, safe='')}"
    return f"{path}?{query}" if query else path

"""``store_url`` here is the catalog tests' one: SQLite, and HBase (the real one under
``make test``), so the markers' check-and-put and prefix scans meet both stores."""

from tests.catalog.conftest import store_url

__all__ = ["store_url"]

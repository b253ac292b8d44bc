"""An HBase Thrift1-compatible test server (a test double), serving happybase's own
``Hbase.thrift`` over thriftpy2 on loopback. See ``docs/testing.md``."""

from airflow_partitions.testing.hbase.server import HBaseTestServer, load_hbase_thrift

__all__ = ["HBaseTestServer", "load_hbase_thrift"]

"""``python -m airflow_partitions.testing.hbase``: run the HBase Thrift1 test double."""

import sys

from airflow_partitions.testing.hbase.server import main

sys.exit(main())

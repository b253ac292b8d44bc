"""``python -m airflow_partitions.demo.hbase``: make hbase, make hbase-stop."""

import sys

from airflow_partitions.demo.hbase.cli import main

sys.exit(main())

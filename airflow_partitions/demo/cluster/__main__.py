"""``python -m airflow_partitions.demo.cluster``: make airflow-cluster, make airflow-stop."""

import sys

from airflow_partitions.demo.cluster.cli import main

sys.exit(main())

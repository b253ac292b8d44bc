"""``python -m airflow_partitions.demo.services``: ``make airflow`` / ``make airflow-stop``."""

import sys

from airflow_partitions.demo.services.cli import main

sys.exit(main())

"""``python -m airflow_partitions.demo``: the main job end to end (``make demo``)."""

import sys

from airflow_partitions.demo.run import main

sys.exit(main())

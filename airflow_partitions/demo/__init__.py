"""``make demo`` (:mod:`.run`), the timelines demo, and the example facts the DAGs share."""

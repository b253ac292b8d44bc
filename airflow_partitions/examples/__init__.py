"""Settings shared by the example DAGs in dags_examples/ (importable wherever they are copied)."""

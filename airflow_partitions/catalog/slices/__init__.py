"""Declared dimensions in the catalog: domains, slice timelines and per-slice completeness.

``dimensions.py`` (declared dimensions, domains, required slices; pure), ``notes.py`` (what an
answer says about undeclared columns), ``cells.py`` (where slice timelines live, the build
marker), ``writer.py`` (the register and drop steps per slice), ``build.py`` (slice timelines
built from the rows), ``completeness.py`` (which hours every required slice has),
``sources.py`` (a slice cover's input), ``sliced_runs.py`` (the rows behind a sliced run).
Other packages import these names from :mod:`airflow_partitions.catalog`.
"""

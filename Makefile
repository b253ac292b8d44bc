# The README's two commands: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

# pytest-xdist: TEST_WORKERS processes, each module whole on one of them (module fixtures start
# services once), the end-to-end modules first (tests/conftest.py); the last
# TEST_BACKGROUND_WORKERS of them take fast modules only, at the lowest CPU priority, using the
# cores while the end-to-end modules wait (tests/xdist_scheduling.py). docs/testing.md has the tiers.
TEST_WORKERS ?= 3
TEST_BACKGROUND_WORKERS ?= 1
export TEST_BACKGROUND_WORKERS
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

.PHONY: venv lint test suite check test-thorough demo demo-clean spark-archive airflow airflow-cluster airflow-stop hbase hbase-stop bench bench-peers peer-venvs clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,plot,cluster]'
	@touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(VENV)/bin/ruff check airflow_partitions tests benchmarks dags_examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# Lint and the whole suite side by side (lint is single-threaded: it takes the spare CPU while
# the suite waits on services); either failing fails `make test`.
test: venv
	@$(MAKE) --no-print-directory -j2 lint suite

# The whole suite: every tier, on one real HBase it starts for the run (docs/hbase.md, "A real
# HBase here"), Hypothesis profile ci (tests/hypothesis_budget.py); the 30
# slowest tests are listed at the end, to keep an eye on the budget (docs/testing.md).
suite: venv spark-archive
	AIRFLOW_PARTITIONS_TEST_HBASE=$${AIRFLOW_PARTITIONS_TEST_HBASE-start} \
	  $(VENV)/bin/pytest $(PYTEST_PARALLEL) --durations=30

# The inner loop: lint and every test that starts no Spark JVM, no Airflow service and no
# `airflow dags test` (not marked e2e), Hypothesis profile dev.
check: lint
	HYPOTHESIS_PROFILE=dev $(VENV)/bin/pytest $(PYTEST_PARALLEL) -m "not e2e"

# The whole suite with every property test's full example count (profile thorough).
test-thorough: lint spark-archive
	HYPOTHESIS_PROFILE=thorough $(VENV)/bin/pytest $(PYTEST_PARALLEL)

demo: venv spark-archive
	$(PY) -m airflow_partitions.demo

# The class-data archive of Spark's JVM that local jobs start from (once per virtual
# environment, about 25 s; airflow_partitions/demo/spark_archive.py). Without it jobs still run.
spark-archive: venv
	-@$(PY) -m airflow_partitions.demo.spark_archive >/dev/null

demo-clean:
	@test ! -x $(PY) || $(PY) -m airflow_partitions.demo.services stop
	rm -rf .demo

# The four Airflow services on loopback over the demo's catalog and data (docs/operations.md).
# AIRFLOW_API_PORT=0 picks a free port; AIRFLOW_HOST other than loopback is at your own risk.
AIRFLOW_API_PORT ?= 0
AIRFLOW_HOST     ?= 127.0.0.1
airflow: venv
	$(PY) -m airflow_partitions.demo.services start --host $(AIRFLOW_HOST) --api-port $(AIRFLOW_API_PORT)

# The cluster on one machine: PostgreSQL, Redis, CeleryExecutor with two workers, Spark
# standalone with two workers, the catalog on Apache HBase distributed over HDFS (NameNode,
# DataNode, ZooKeeper, HMaster, two RegionServers, Thrift1); all on loopback, under .cluster/
# (docs/operations.md, "A cluster on one machine").
airflow-cluster: venv
	$(PY) -m airflow_partitions.demo.cluster start --api-port $(AIRFLOW_API_PORT)

# Stops what `make airflow` and `make airflow-cluster` started, by recorded pid; safe twice.
airflow-stop:
	@test ! -x $(PY) || { $(PY) -m airflow_partitions.demo.services stop; s=$$?; \
	  $(PY) -m airflow_partitions.demo.cluster stop && exit $$s; }

# A real Apache HBase 2.6 (standalone: master, RegionServer and ZooKeeper in one JVM) and its
# Thrift1 server on 127.0.0.1, free ports; jars from Maven Central through hbase/pom.xml, cached
# in hbase/lib/; data and logs in .hbase/. Prints `store: hbase://...` (docs/hbase.md).
hbase: venv
	$(PY) -m airflow_partitions.demo.hbase start

# Stops what `make hbase` started, by recorded pid; safe twice.
hbase-stop:
	@test ! -x $(PY) || $(PY) -m airflow_partitions.demo.hbase stop

# Re-measure every benchmark (several minutes) and rebuild docs/benchmarks.md.
bench: venv
	$(PY) benchmarks/timelines.py --write docs/benchmarks-timelines.md
	$(PY) benchmarks/kv.py --write docs/benchmarks-kv.md
	$(PY) benchmarks/catalog.py --write docs/benchmarks-catalog.md
	$(PY) benchmarks/catalog_scale.py --write docs/benchmarks-catalog_scale.md
	$(PY) benchmarks/sparse_history.py --write docs/benchmarks-sparse_history.md
	$(PY) benchmarks/cover.py --write docs/benchmarks-cover.md
	$(PY) benchmarks/filters.py --write docs/benchmarks-filters.md
	$(PY) benchmarks/pruning.py --write docs/benchmarks-pruning.md
	$(PY) benchmarks/bench_plan.py --write docs/benchmarks-plan.md
	$(PY) benchmarks/bench_spark_read.py --write docs/benchmarks-spark_read.md
	$(PY) benchmarks/bench_ui_view.py --write docs/benchmarks-ui_view.md
	$(PY) benchmarks/poke.py --write docs/benchmarks-poke.md
	$(PY) benchmarks/verify_memo.py --write docs/benchmarks-verify_memo.md
	$(PY) benchmarks/after_write.py --hbase --write docs/benchmarks-after_write.md
	$(PY) benchmarks/hbase_real.py --write docs/benchmarks-hbase_real.md
	$(PY) benchmarks/hbase_real.py --distributed --write docs/benchmarks-hbase_distributed.md
	$(PY) benchmarks/collect.py

# Our cover beside Luigi, Dagster and an os.path.exists loop on the same data (issue 33;
# docs/benchmarks-peers.md). Each peer gets its own virtual environment under benchmarks/.peers/
# (git-ignored), pinned here, so nothing clashes with Airflow's pins in .venv; a stamp named after
# the version re-creates it when a pin changes. BENCH_PEERS_ARGS=--quick for a 1-year smoke run.
PEERS           := benchmarks/.peers
LUIGI_VERSION   ?= 3.8.1
DAGSTER_VERSION ?= 1.13.29
LUIGI_STAMP     := $(PEERS)/luigi-venv/.installed-luigi-$(LUIGI_VERSION)
DAGSTER_STAMP   := $(PEERS)/dagster-venv/.installed-dagster-$(DAGSTER_VERSION)
BENCH_PEERS_ARGS ?=

# $(call peer_venv,TOOL,VERSION): a fresh virtual environment with only TOOL==VERSION in it.
define peer_venv
	rm -rf $(PEERS)/$(1)-venv
	$(PYTHON) -m venv $(PEERS)/$(1)-venv
	$(PEERS)/$(1)-venv/bin/python -m pip install --quiet --upgrade pip
	$(PEERS)/$(1)-venv/bin/python -m pip install --quiet '$(1)==$(2)'
	@touch $@
endef

$(LUIGI_STAMP):
	$(call peer_venv,luigi,$(LUIGI_VERSION))

$(DAGSTER_STAMP):
	$(call peer_venv,dagster,$(DAGSTER_VERSION))

peer-venvs: $(LUIGI_STAMP) $(DAGSTER_STAMP)

bench-peers: venv peer-venvs
	$(PY) benchmarks/peers.py --hbase --write docs/benchmarks-peers.md $(BENCH_PEERS_ARGS)

clean: demo-clean hbase-stop
	@test ! -x $(PY) || $(PY) -m airflow_partitions.demo.cluster stop
	rm -rf $(VENV) .cluster .hbase .pytest_cache .mypy_cache .ruff_cache .hypothesis

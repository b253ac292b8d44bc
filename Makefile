# The README's two commands: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv lint test demo demo-clean bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,plot]'
	@touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(VENV)/bin/ruff check airflow_partitions tests benchmarks dags_examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: lint
	$(VENV)/bin/pytest

demo: venv
	$(PY) -m airflow_partitions.demo

demo-clean:
	rm -rf .demo

# Re-measure every benchmark (several minutes) and rebuild docs/benchmarks.md.
bench: venv
	$(PY) benchmarks/timelines.py --write docs/benchmarks-timelines.md
	$(PY) benchmarks/kv.py --write docs/benchmarks-kv.md
	$(PY) benchmarks/catalog.py --write docs/benchmarks-catalog.md
	$(PY) benchmarks/sparse_history.py --write docs/benchmarks-sparse_history.md
	$(PY) benchmarks/cover.py --write docs/benchmarks-cover.md
	$(PY) benchmarks/filters.py --write docs/benchmarks-filters.md
	$(PY) benchmarks/pruning.py --write docs/benchmarks-pruning.md
	$(PY) benchmarks/collect.py

clean: demo-clean
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

"""The house keeps its shape: imports point down, the core stays free of Airflow, modules stay
small. ``make lint`` runs the same import contracts; these tests prove the check bites."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.any_signatures import any_signatures
from tests.helpers import ROOT
from tests.import_graph import cycles, internal_reaches, module_graph, private_reaches

PACKAGE = ROOT / "airflow_partitions"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
MAX_MODULE_LINES = 500


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """Run the project's import contracts against the package copy under ``tree``."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tree, env={"PYTHONPATH": str(tree), "PATH": str(LINT_IMPORTS.parent)},
        capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("house")
    shutil.copytree(PACKAGE, tree / "airflow_partitions",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tree


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed")
def test_the_contracts_hold_on_the_real_tree(tree_copy: Path) -> None:
    result = lint_imports(tree_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed")
@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # filters must never know the catalog, not even for typing
        ("filters/ast.py",
         "if False:\n    from airflow_partitions.catalog import Catalog  # noqa\n",
         "Layers"),
        ("periods/__init__.py", "import airflow.sdk  # noqa\n", "never imports Airflow"),
        ("get_provider_info.py", "import airflow  # noqa\n", "Provider discovery"),
        ("kv/base.py", "import airflow_partitions.keys  # noqa\n", "kv knows nothing"),
    ],
    ids=["upward-import", "airflow-in-core", "airflow-in-provider-info", "kv-knows-keys"],
)
def test_a_forbidden_import_breaks_lint(tmp_path: Path, module: str, line: str,
                                        contract: str) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "airflow_partitions",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tree / "airflow_partitions" / module
    target.write_text(target.read_text() + "\n" + line)
    result = lint_imports(tree)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout


def test_no_shipped_module_is_over_the_size_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_big = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not too_big, f"split these modules (over {MAX_MODULE_LINES} lines): {too_big}"


#: No circle is left: ``UpdatePeriod`` and ``TimePartition``, which name each other, share
#: ``periods/update_period.py``.
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles_between_modules() -> None:
    """Type-only imports count; only function-level imports are left out."""
    assert cycles(module_graph(PACKAGE)) == KNOWN_CYCLES


def test_the_cycle_check_bites() -> None:
    graph = module_graph(PACKAGE)
    graph["airflow_partitions.cover.compute"].add("airflow_partitions.catalog.facade")
    found = cycles(graph)
    assert any("airflow_partitions.catalog.facade" in c and "airflow_partitions.cover.compute" in c
               for c in found)


def test_no_private_name_crosses_a_module() -> None:
    """Tests included: a test goes through public behaviour, or the thing is made public."""
    assert private_reaches(PACKAGE, [PACKAGE, ROOT / "tests", ROOT / "benchmarks"]) == []


def test_the_private_name_check_bites(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "test_probe.py").write_text(
        "from airflow_partitions.catalog import writer\n"
        "from airflow_partitions.kv.cell_blob import _directory\n"
        "writer._secret\n")
    found = private_reaches(PACKAGE, [probe])
    assert found == ["test_probe.py: from airflow_partitions.kv.cell_blob import _directory",
                     "test_probe.py: writer._secret"]


#: Rooms used only through what their ``__init__`` exports (``__all__``): nothing outside the
#: room's folder (and its tests' folder) names one of its modules. ``spark``'s ``jobs/`` stay
#: files spark-submit runs by path; ``spark`` exports what others use of them. Not here: the
#: Airflow layer's rooms, which DAG files import by module.
THROUGH_INIT = ["periods", "keys", "kv", "timelines", "cover", "filters", "catalog", "pruning",
                "planning", "watch", "lanes", "coverage_events", "interop", "spark", "cli"]
#: Where the package is used: itself, the tests, the benchmarks and the example DAGs.
USERS = [PACKAGE, ROOT / "tests", ROOT / "benchmarks", ROOT / "dags_examples"]


def test_rooms_are_used_through_their_exports() -> None:
    assert internal_reaches(PACKAGE, USERS, THROUGH_INIT) == []


@pytest.mark.parametrize("room", THROUGH_INIT)
def test_a_room_exports_everything_in_its_all(room: str) -> None:
    module = importlib.import_module(f"airflow_partitions.{room}")
    assert sorted(set(module.__all__)) == sorted(module.__all__)
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def test_the_exports_check_bites(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "test_probe.py").write_text(
        "from airflow_partitions.catalog import Catalog, writer\n"
        "from airflow_partitions.catalog.definitions.tables import StorageDef\n"
        "import airflow_partitions.watch.watch\n"
        "def later():\n"
        "    from airflow_partitions.interop.connection import CONN_TYPE\n")
    assert internal_reaches(PACKAGE, [probe], THROUGH_INIT) == [
        "probe/test_probe.py:1: airflow_partitions.catalog.writer",
        "probe/test_probe.py:2: airflow_partitions.catalog.definitions.tables",
        "probe/test_probe.py:3: airflow_partitions.watch.watch",
        "probe/test_probe.py:5: airflow_partitions.interop.connection",
    ]


_KWARGS = ("**kwargs forwarded to Airflow's BaseOperator.__init__, which takes **kwargs: Any "
           "beside its typed keywords; **kwargs: object would not type-check in the forward")
#: The boundaries that keep ``Any`` in a public signature, each with its reason: untyped code
#: we call, or Airflow's own ``Any`` that an override or a forward must match. Everywhere else
#: in the package (every module, ``tests/any_signatures.py`` says which names count) a public
#: signature names no ``Any``, directly or through an alias: JSON is a ``TypedDict`` or
#: ``JsonValue``, a value only passed through is ``object``, a duck-typed collaborator a
#: ``Protocol``.
#: Why the REST client's two calls keep ``Any``: they carry the api-server's JSON bodies both
#: ways, whose shape each endpoint's caller knows (``DagRunJson`` where it is kept).
_REST = "JSON bodies of Airflow's REST API, each shaped as its endpoint documents"
ANY_ALLOWED = {
    # thriftpy2 builds happybase's Hbase client at run time from the .thrift file: no static
    # type; ``call`` hands it to the request it runs.
    "airflow_partitions/kv/hbase.py: HBaseStore.call":
        "thriftpy2's generated Hbase client has no static types",
    "airflow_partitions/kv/hbase_table.py: HBaseTableStore.call":
        "thriftpy2's generated Hbase client has no static types",
    "airflow_partitions/operators/backfill.py: PartitionBackfillOperator.__init__": _KWARGS,
    "airflow_partitions/operators/partitions.py: RegisterPartitionsOperator.__init__": _KWARGS,
    "airflow_partitions/operators/pruned_spark.py: PrunedSparkSubmitOperator.__init__": _KWARGS,
    "airflow_partitions/operators/spark.py: CoveredSparkSubmitOperator.__init__": _KWARGS,
    "airflow_partitions/sensors/coverage.py: PartitionCoverageSensor.__init__": _KWARGS,
    "airflow_partitions/hooks/catalog.py: PartitionCatalogHook.__init__": (
        "**kwargs forwarded to Airflow's BaseHook.__init__ (untyped there)"),
    "airflow_partitions/triggers/coverage.py: PartitionCoverageTrigger.__init__": (
        "**kwargs forwarded to Airflow's BaseTrigger.__init__ (untyped there)"),
    "airflow_partitions/triggers/coverage.py: PartitionCoverageTrigger.serialize": (
        "overrides BaseTrigger.serialize, which Airflow declares -> tuple[str, dict[str, Any]]"),
    "airflow_partitions/backfill/rest_api.py: AirflowRest.call": _REST,
    "airflow_partitions/backfill/rest_api.py: AirflowRest.request": _REST,
}


def _every_module() -> list[Path]:
    """The package's own modules and every subpackage: a new package is checked too."""
    return sorted(PACKAGE.glob("*.py")) + sorted(
        p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_no_any_in_public_signatures() -> None:
    """Public signatures say what they take and give: a ``TypedDict`` for a known
    JSON, ``JsonValue`` for an open one, ``object`` for a value only passed on, a Protocol for
    a duck-typed collaborator. Only the listed boundaries keep ``Any``, each with its reason."""
    found = any_signatures(PACKAGE, _every_module())
    assert [s for s in found if s not in ANY_ALLOWED] == []
    assert [s for s in ANY_ALLOWED if s not in found] == [], "allowed but no longer there"


def test_the_any_check_bites(tmp_path: Path) -> None:
    package = tmp_path / "airflow_partitions"
    (package / "room").mkdir(parents=True)
    (package / "aliases.py").write_text("from typing import Any\nJsonDict = dict[str, Any]\n")
    (package / "room" / "m.py").write_text(
        "from typing import Any\n"
        "from airflow_partitions.aliases import JsonDict\n"
        "Row = list[JsonDict]\n"
        "def direct(x: Any) -> None: ...\n"
        "def quoted() -> 'dict[str, Any]': ...\n"
        "def aliased(rows: Row) -> None: ...\n"
        "def _private(x: Any) -> None: ...\n"
        "class Public:\n"
        "    field: JsonDict\n"
        "    def __init__(self, x: Any) -> None: ...\n"
        "    def _helper(self, x: Any) -> None: ...\n"
        "    def typed(self, x: object) -> int: ...\n"
        "class _Private:\n"
        "    def method(self, x: Any) -> None: ...\n")
    assert any_signatures(package, [package / "room"]) == [
        f"airflow_partitions/room/m.py: {name}"
        for name in ["direct", "quoted", "aliased", "Public.field", "Public.__init__"]
    ]
    (package / "top.py").write_text("from typing import Any\ndef top(x: Any) -> None: ...\n")
    assert any_signatures(package, [package / "top.py"]) == ["airflow_partitions/top.py: top"]

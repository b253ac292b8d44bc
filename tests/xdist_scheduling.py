"""How ``make test`` spreads the suite over pytest-xdist workers (``--dist loadgroup``).

Whole modules go to one worker, so a module-scoped fixture (a catalog, the Airflow services)
starts once. Modules whose tests carry one ``xdist_group`` go to the same worker as a unit:
``tests/conftest.py`` puts every module that uses the ``spark`` session in the group ``spark``,
so the suite starts one Spark JVM for them instead of one per worker.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling


class ModulesAndGroups(LoadScopeScheduling):
    """xdist's per-module scheduling, with ``xdist_group`` units kept whole."""

    def _split_scope(self, nodeid: str) -> str:
        # xdist appends "@<group>" to the ids of grouped tests under --dist loadgroup; a "@"
        # inside a parametrize id comes before its closing "]".
        if nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[-1]
        return nodeid.split("::", 1)[0]

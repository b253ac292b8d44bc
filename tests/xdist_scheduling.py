"""How ``make test`` spreads the suite over pytest-xdist workers (``--dist loadgroup``).

Whole modules go to one worker, so a module-scoped fixture (a catalog, the Airflow services)
starts once. Modules whose tests carry one ``xdist_group`` go to the same worker as a unit:
``tests/conftest.py`` puts every module that uses the ``spark`` session in the group
``e2e:spark``, and every other module with end-to-end tests in a group of its own named
``e2e:`` and the module (or one it shares, like ``e2e:scheduler``): a unit is end-to-end
exactly when its name starts with :data:`END_TO_END`.

The last ``TEST_BACKGROUND_WORKERS`` workers are *background* workers: they take fast modules
only, and run at the lowest CPU priority (``tests/conftest.py``), so they use the cores while
the end-to-end modules wait on services, heartbeats and outages, and yield them as soon as
those modules compute again. The other workers take the end-to-end units first, then fast
modules like any worker.
"""

from __future__ import annotations

import os
from typing import Any

from xdist.scheduler import LoadScopeScheduling

#: The prefix of every end-to-end unit's group name.
END_TO_END = "e2e:"
#: How many of the ``-n`` workers are background workers (``make test`` sets it).
BACKGROUND_ENV = "TEST_BACKGROUND_WORKERS"


def background_workers() -> int:
    """The number of background workers this run asked for (0 unless set)."""
    return int(os.environ.get(BACKGROUND_ENV, "0") or 0)


def is_background(worker_id: str, workers: int) -> bool:
    """Whether the worker ``gwN`` of ``workers`` is a background worker (the last ones; one
    worker always stays in the foreground)."""
    count = min(background_workers(), workers - 1)
    return count > 0 and int(worker_id.removeprefix("gw")) >= workers - count


class ModulesAndGroups(LoadScopeScheduling):
    """xdist's per-module scheduling, with ``xdist_group`` units kept whole and background
    workers kept to the fast modules."""

    def _split_scope(self, nodeid: str) -> str:
        # xdist appends "@<group>" to the ids of grouped tests under --dist loadgroup; a "@"
        # inside a parametrize id comes before its closing "]".
        if nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[-1]
        return nodeid.split("::", 1)[0]

    def _assign_work_unit(self, node: Any) -> None:
        if is_background(node.gateway.id, len(self.nodes)):
            fast = next((scope for scope in self.workqueue
                         if not scope.startswith(END_TO_END)), None)
            if fast is None:  # only end-to-end units are left: the other workers take them
                node.shutdown()
                return
            self.workqueue.move_to_end(fast, last=False)
        super()._assign_work_unit(node)


#: The nice value of a background worker and what it starts: the lowest priority there is.
BACKGROUND_NICE = 19


def run_in_background() -> None:
    """Give this worker, and every process it starts, the lowest CPU priority.

    Linux's autogroup scheduler shares the CPU between sessions first, whatever the nice
    values inside them, so the worker leaves pytest's session for one of its own and sets that
    session's nice value (``/proc/self/autogroup``) as well as its own (where autogroup is
    off). Where neither can be changed, the worker runs at its normal priority."""
    try:
        os.setsid()
    except OSError:  # already a session or process group leader
        pass
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(BACKGROUND_NICE))
    except OSError:  # no autogroup here
        pass
    os.nice(BACKGROUND_NICE - os.nice(0))

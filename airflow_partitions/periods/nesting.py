"""What nesting implies for a set of periods, derived from each period's ``within``
(:data:`~airflow_partitions.periods.specs.SPECS`), so no other module lists periods by hand.

Why: the cover fills nested periods greedily and needs a shortest path only where two periods'
partitions cross each other's boundaries (WEEKLY against months, quarters and years); the
planner keeps a nested chain. Cost: computed once at import, a frozenset test after that.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from airflow_partitions.periods.update_period import UpdatePeriod


def straddles(a: UpdatePeriod, b: UpdatePeriod) -> bool:
    """Whether partitions of ``a`` and ``b`` cross each other's boundaries: neither nests in
    the other (WEEKLY and MONTHLY).

    >>> straddles(UpdatePeriod.WEEKLY, UpdatePeriod.MONTHLY)
    True
    >>> straddles(UpdatePeriod.DAILY, UpdatePeriod.MONTHLY)
    False
    """
    return not a.nests_in(b) and not b.nests_in(a)


#: Periods some other period straddles (WEEKLY, MONTHLY, QUARTERLY, YEARLY): a cover using
#: two of them cannot be filled greedily.
STRADDLING: Final[frozenset[UpdatePeriod]] = frozenset(
    p for p in UpdatePeriod if any(straddles(p, q) for q in UpdatePeriod)
)


def nested_chain(periods: Iterable[UpdatePeriod]) -> list[UpdatePeriod]:
    """``periods`` coarsest first, each kept only when it nests in every coarser one kept: a
    period straddling a coarser one (WEEKLY next to months, quarters or years) is left out.

    >>> [p.name for p in nested_chain(UpdatePeriod)]
    ['YEARLY', 'QUARTERLY', 'MONTHLY', 'DAILY', 'HOURLY', 'MINUTELY', 'SECONDLY']
    """
    chain: list[UpdatePeriod] = []
    for period in sorted(set(periods), reverse=True):
        if all(period.nests_in(coarser) for coarser in chain):
            chain.append(period)
    return chain

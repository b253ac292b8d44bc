"""An answer kept on a store without a change stamp or feeds (HBase), and asking it again.

Why: HBase proves nothing unchanged by itself, so a sensor's answer asked again after a
producer's registration must read what it rests on: the fact's and its storages' catalog rows
and the answer's partition rows. Where the store can (:meth:`KVStore.reads_again`), both are
asked in one write and each reply is compared, as bytes, with the one last proven: a reply
equal byte for byte is not decoded. The answer stands when the catalog rows hold what it came
from (:meth:`.answer_basis.AnswerBasis.holds`) and the partition rows are the rows it was
checked against (then the cover worked out again is this one, over the same rows). Otherwise
what was read is handed back (:class:`ReadNow`), so working the answer out reads none of it
again.

Cost: one exchange of two requests and a comparison of their replies' bytes; a check of the
catalog rows that changed; the partition rows checked only when their reply changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from airflow_partitions.catalog.covers.answer_basis import AnswerBasis
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.runs import RunRows, keyed_reads, read_runs, same_runs
from airflow_partitions.cover import CoverRun
from airflow_partitions.kv import (
    AskedAgain,
    Cells,
    KeyedRead,
    KVStore,
    ReadsAgain,
    RowValues,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState
    from airflow_partitions.catalog.rows.layout import CatalogRows

#: Partition rows read by key but not checked, by the keys read (``read_runs(read=...)``).
RowsByKeys = dict[tuple[bytes, ...], list[RowValues]]
#: The answer kept (a verified cover).
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class ReadAgain(Generic[Answer]):
    """An answer on a store without a change stamp, and what asking it again takes."""

    basis: AnswerBasis
    defs: dict[str, StorageDef]
    column: str
    #: The computed cover's runs, whose rows are read again.
    runs_of: tuple[CoverRun, ...]
    answer: Answer
    #: The answer's runs with the rows they were checked against, as the rows' memo keeps
    #: them: rows read again and found the same come back as these very objects.
    checked: tuple[RunRows, ...]
    #: The store ``again`` asks (another store of the same URL reads one after the other).
    store: KVStore
    #: The catalog rows the basis reads, then the runs' partition rows by key, asked again
    #: together; None when the store reads them one after the other, or a group of runs is
    #: scanned.
    again: ReadsAgain | None
    #: The keys and columns of each partition read in ``again``, in order.
    keyed: tuple[tuple[tuple[bytes, ...], tuple[bytes, ...]], ...]

    @classmethod
    def of(cls, rows: CatalogRows, basis: AnswerBasis, state: FactState, column: str,
           answer: Answer, runs_of: tuple[CoverRun, ...], checked: tuple[RunRows, ...]
           ) -> ReadAgain[Answer]:
        """The kept answer, with its requests built (once: a sensor asks them at each poke)."""
        defs = {name: s.definition for name, s in state.storages.items()}
        keyed = keyed_reads(rows, defs, runs_of, column)
        again = None if keyed is None else rows.kv.reads_again(
            [basis.catalog_read(rows),
             *(KeyedRead(rows.partitions.name, keys, columns) for keys, columns in keyed)])
        return cls(basis, defs, column, runs_of, answer, checked, rows.kv, again,
                   tuple(keyed or ()))


class ReadNow(NamedTuple):
    """What asking a kept answer again read, for working the answer out without reading it
    again."""

    #: The fact's and its storages' catalog rows (None: not read, or a cell damaged).
    catalog: dict[bytes, Cells] | None
    #: The kept answer's runs, with their rows read and checked now.
    runs: tuple[tuple[CoverRun, ...], list[RunRows]] | None
    #: Partition rows read by key but not checked.
    rows: RowsByKeys | None


def asked_again(rows: CatalogRows, kept: ReadAgain[Answer]) -> ReadNow | None:
    """None when the rows read now leave ``kept``'s answer true (give it again); else what
    was read."""
    basis = kept.basis
    again = kept.again if kept.store is rows.kv else None
    answers = None if again is None else again.ask()
    if again is None or answers is None:  # read one after the other
        now = basis.read_now(rows)
        if now is None or not basis.holds(now):
            return ReadNow(now, None, None)
        runs = read_runs(rows, kept.defs, kept.runs_of, kept.column)
    else:
        catalog_rows, *partition_rows = answers
        now = None if catalog_rows.same else basis.now_of(catalog_rows.rows())
        holds = now is None or basis.holds(now)
        if holds and all(found.same for found in partition_rows):
            if now is not None:
                again.keep(answers)
            return None
        if now is None:
            now = basis.now_of(catalog_rows.rows())
        read = _by_keys(kept, partition_rows)
        if not holds:
            return ReadNow(now, None, read)
        runs = read_runs(rows, kept.defs, kept.runs_of, kept.column, read=read)
    if not same_runs(kept.checked, runs):
        return ReadNow(now, (kept.runs_of, runs), None)
    if again is not None and answers is not None:
        again.keep(answers)
    return None


def _by_keys(kept: ReadAgain[Answer], answers: list[AskedAgain]) -> RowsByKeys:
    """Each partition read's rows, projected on its columns as ``get_columns`` returns them."""
    return {keys: [(row, tuple(map(cells.get, columns))) for row, cells in found.rows()
                   if cells]
            for (keys, columns), found in zip(kept.keyed, answers, strict=True)}


__all__ = ["ReadAgain", "ReadNow", "RowsByKeys", "asked_again"]

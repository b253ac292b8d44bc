"""Where the Partitions view keeps its actions: a table of the catalog's own store.

Why there and not in memory: the api-server runs several worker processes (and may run on
several hosts), and a double click or a retried request may reach any of them; the catalog's
store is shared by all, and its one compare-and-swap (``check_and_put``) is what makes an
action's confirmation, and each of its backfills, happen once. Cost: one small row per
action (its plan, a few hundred bytes per backfill); nothing expires them (a few per day).

Row ``<action id>``, family ``a``:

* ``a:doc``: the prepared action (JSON), written once;
* ``a:confirmed``: the user who confirmed it (claimed with check-and-put: one confirmation);
* ``a:state``: its state when a progress request last looked (what the list of a fact's
  actions shows without asking Airflow);
* ``a:b<index>``: ``creating`` while one request creates that backfill (claimed with
  check-and-put, so two requests never create it twice), then its Airflow backfill id;
  ``refused: ...`` when Airflow refused it. A backfill Airflow lost (it removes one whose runs
  it could not create) is claimed again from its old id, so it is created anew once.

Row ``fact:<fact name, hex>:<prepared at, microseconds, 20 digits>:<action id>``, cell
``a:id``: the index of a fact's actions, oldest first, so the most recent are one reverse
prefix scan (an action id is alphanumeric, so no index row is ever read as an action).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from airflow_partitions.kv import KVStore
from airflow_partitions.ui.action_model import ActionDocJson

TABLE: Final = "partition_actions"
DOC: Final = b"a:doc"
CONFIRMED: Final = b"a:confirmed"
STATE: Final = b"a:state"
ACTION_ID: Final = b"a:id"
CREATING: Final = b"creating"
REFUSED: Final = b"refused: "


@dataclass(frozen=True)
class Stored:
    """One action as stored: its document, who confirmed it, and each backfill's cell."""

    doc: ActionDocJson
    confirmed_by: str | None
    backfills: dict[int, str]  # index -> "creating" | backfill id | "refused: ..."
    state: str | None = None  # as a progress request last saw it


class ActionStore:
    """Actions in the table :data:`TABLE` of ``kv`` (created on first use)."""

    def __init__(self, kv: KVStore) -> None:
        kv.create_table(TABLE, ("a",), exist_ok=True)
        self.table = kv.table(TABLE)

    @staticmethod
    def new_id() -> str:
        """An unguessable id (128 bits): holding it is not enough to confirm, though; the
        confirming user must be the one who prepared it."""
        return secrets.token_hex(16)

    def add(self, action_id: str, doc: ActionDocJson, prepared_us: int) -> None:
        """Store a prepared action and index it under its fact (``prepared_us``: when)."""
        if not self.table.check_and_put(action_id.encode(), DOC, None,
                                        json.dumps(doc, sort_keys=True).encode()):
            raise ValueError(f"action {action_id} exists")  # a 128-bit collision: a bug
        self.table.put(_fact_prefix(doc["fact"]) + b"%020d:" % prepared_us
                       + action_id.encode(), {ACTION_ID: action_id.encode()})

    def recent(self, fact: str, limit: int) -> list[tuple[str, Stored]]:
        """The fact's ``limit`` most recent actions, newest first. Cost: one reverse prefix
        scan of the index and one multi-row read."""
        ids = [cells[ACTION_ID] for _, cells in self.table.scan(
            prefix=_fact_prefix(fact), columns=[ACTION_ID], limit=limit, reverse=True)]
        rows = self.table.get_many(ids)
        return [(i.decode(), _stored(rows[i])) for i in ids if DOC in rows.get(i, {})]

    def get(self, action_id: str) -> Stored | None:
        if not action_id.isalnum():
            return None
        cells = self.table.get(action_id.encode())
        return _stored(cells) if DOC in cells else None

    def seen(self, action_id: str, state: str) -> None:
        """Record the state a progress request found (for the list of actions)."""
        self.table.put(action_id.encode(), {STATE: state.encode()})

    def confirm(self, action_id: str, user: str) -> bool:
        """Whether this call confirmed the action (False: it already was)."""
        return self.table.check_and_put(action_id.encode(), CONFIRMED, None, user.encode())

    def claim(self, action_id: str, index: int, lost: str | None = None) -> bool:
        """Whether this call may create backfill ``index``: nobody claimed it before, or
        (``lost``: the id Airflow no longer knows) nobody claimed it again since."""
        return self.table.check_and_put(action_id.encode(), _cell(index),
                                        lost.encode() if lost else None, CREATING)

    def created(self, action_id: str, index: int, backfill_id: int) -> None:
        self.table.put(action_id.encode(), {_cell(index): str(backfill_id).encode()})

    def refused(self, action_id: str, index: int, why: str) -> None:
        self.table.put(action_id.encode(), {_cell(index): REFUSED + why.encode()[:2000]})


def _stored(cells: Mapping[bytes, bytes]) -> Stored:
    backfills = {int(k[3:]): v.decode() for k, v in cells.items()
                 if k.startswith(b"a:b") and k[3:].isdigit()}
    confirmed, state = cells.get(CONFIRMED), cells.get(STATE)
    return Stored(cast(ActionDocJson, json.loads(cells[DOC])),
                  confirmed.decode() if confirmed else None, backfills,
                  state.decode() if state else None)


def _fact_prefix(fact: str) -> bytes:
    return b"fact:" + fact.encode().hex().encode() + b":"


def _cell(index: int) -> bytes:
    return b"a:b%d" % index

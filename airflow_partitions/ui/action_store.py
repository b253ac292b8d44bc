"""Where the Partitions view keeps its actions: a table of the catalog's own store.

Why there and not in memory: the api-server runs several worker processes (and may run on
several hosts), and a double click or a retried request may reach any of them; the catalog's
store is shared by all, and its one compare-and-swap (``check_and_put``) is what makes an
action's confirmation, and each of its backfills, happen once. Cost: one small row per
action (its plan, a few hundred bytes per backfill); nothing expires them (a few per day).

Row ``<action id>``, family ``a``:

* ``a:doc``: the prepared action (JSON), written once;
* ``a:confirmed``: the user who confirmed it (claimed with check-and-put: one confirmation);
* ``a:b<index>``: ``creating`` while one request creates that backfill (claimed with
  check-and-put, so two requests never create it twice), then its Airflow backfill id;
  ``refused: ...`` when Airflow refused it. A backfill Airflow lost (it removes one whose runs
  it could not create) is claimed again from its old id, so it is created anew once.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Final, cast

from airflow_partitions.kv import KVStore
from airflow_partitions.ui.action_model import ActionDocJson

TABLE: Final = "partition_actions"
DOC: Final = b"a:doc"
CONFIRMED: Final = b"a:confirmed"
CREATING: Final = b"creating"
REFUSED: Final = b"refused: "


@dataclass(frozen=True)
class Stored:
    """One action as stored: its document, who confirmed it, and each backfill's cell."""

    doc: ActionDocJson
    confirmed_by: str | None
    backfills: dict[int, str]  # index -> "creating" | backfill id | "refused: ..."


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

    def add(self, action_id: str, doc: ActionDocJson) -> None:
        if not self.table.check_and_put(action_id.encode(), DOC, None,
                                        json.dumps(doc, sort_keys=True).encode()):
            raise ValueError(f"action {action_id} exists")  # a 128-bit collision: a bug

    def get(self, action_id: str) -> Stored | None:
        if not action_id.isalnum():
            return None
        cells = self.table.get(action_id.encode())
        if DOC not in cells:
            return None
        backfills = {int(k[3:]): v.decode() for k, v in cells.items()
                     if k.startswith(b"a:b") and k[3:].isdigit()}
        confirmed = cells.get(CONFIRMED)
        return Stored(cast(ActionDocJson, json.loads(cells[DOC])),
                      confirmed.decode() if confirmed else None, backfills)

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


def _cell(index: int) -> bytes:
    return b"a:b%d" % index

"""Secrets a harness makes once and keeps: the metadata DB's password, the cluster's keys.

Kept in ``secrets.json`` of the state directory, readable by its owner only, so a second start
finds the same ones (PostgreSQL's data directory keeps the password it was made with).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from pathlib import Path

from airflow_partitions.demo.services.processes import write_owner_only

SECRETS_FILE = "secrets.json"


def kept_secrets(state_dir: Path, names: Sequence[str]) -> dict[str, str]:
    """Every secret in ``names`` (URL-safe, 43 characters), made the first time it is asked
    for and kept owner-only in ``state_dir/secrets.json``; others there are kept too."""
    path = state_dir / SECRETS_FILE
    try:
        doc: dict[str, str] = json.loads(path.read_text())
    except (OSError, ValueError):
        doc = {}
    missing = [k for k in names if not isinstance(doc.get(k), str)]
    if missing:
        doc.update({k: secrets.token_urlsafe(32) for k in missing})
        write_owner_only(path, json.dumps(doc))
    return doc

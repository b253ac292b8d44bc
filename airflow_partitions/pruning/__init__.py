"""Dynamic partition pruning (seed 003): small tables' join-key values prune a big table's
partitions before Spark reads them. See ``docs/pruning.md``.
"""

from airflow_partitions.pruning.prune import (
    Analysis,
    PruneResult,
    analyse,
    prune,
    prune_partitions,
)
from airflow_partitions.pruning.query import part_key
from airflow_partitions.pruning.record import (
    DecisionRecord,
)
from airflow_partitions.pruning.spec import (
    InvalidJoinSpec,
    JoinSpec,
    JoinType,
    KeyExpr,
    col,
    fn,
    join_specs,
    keys_to_collect,
    parse_key,
)
from airflow_partitions.pruning.values import (
    DEFAULT_MAX_VALUES,
    JoinKeyTypeError,
    KeyValues,
    ValueSets,
    key_sets_from_json,
    load_key_file,
)

__all__ = [
    "DEFAULT_MAX_VALUES",
    "Analysis",
    "DecisionRecord",
    "InvalidJoinSpec",
    "JoinKeyTypeError",
    "JoinSpec",
    "JoinType",
    "KeyExpr",
    "KeyValues",
    "PruneResult",
    "ValueSets",
    "analyse",
    "col",
    "fn",
    "join_specs",
    "key_sets_from_json",
    "keys_to_collect",
    "load_key_file",
    "parse_key",
    "part_key",
    "prune",
    "prune_partitions",
]

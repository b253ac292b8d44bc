"""Dynamic partition pruning (Hive's MapJoin pruning): small tables' join-key values prune a big
table's
partitions before Spark reads them. See ``docs/pruning.md``.
"""

from airflow_partitions.pruning.prune import (
    Analysis,
    PruneResult,
    analyse,
    prune,
    prune_partitions,
)
from airflow_partitions.pruning.query import QueryJson, part_key
from airflow_partitions.pruning.record import (
    ColumnPruningJson,
    CoverInfoJson,
    DecisionRecord,
    DecisionRecordJson,
    PairRecordJson,
    StorageRecordJson,
)
from airflow_partitions.pruning.spec import (
    InvalidJoinSpec,
    JoinSpec,
    JoinSpecJson,
    JoinType,
    KeyExpr,
    KeyPairs,
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
    "ColumnPruningJson",
    "CoverInfoJson",
    "DecisionRecord",
    "DecisionRecordJson",
    "InvalidJoinSpec",
    "JoinKeyTypeError",
    "JoinSpec",
    "JoinSpecJson",
    "JoinType",
    "KeyExpr",
    "KeyPairs",
    "KeyValues",
    "PairRecordJson",
    "PruneResult",
    "QueryJson",
    "StorageRecordJson",
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

"""Coverage events: the windows of a coverage asset that the catalog can cover, announced once
each, without Airflow (the Airflow layer posts them: :mod:`airflow_partitions.assets`).

* :mod:`.spec`: :class:`CoverageAssetSpec`, what an asset names, its URI and its keys;
* :mod:`.windows`: a window's fresh cover, verified, and which windows are worth asking about;
* :mod:`.markers`: what was announced, claimed by check-and-put in the catalog's store;
* :mod:`.emitter`: :class:`CoverageEmitter`, which windows are due and announcing each once;
* :mod:`.status`: per window of a range, what was announced and what the others lack (the view).
"""

from airflow_partitions.coverage_events.emitter import (
    DEFAULT_HORIZON,
    CoverageEmitter,
    Emission,
    EmissionExtraJson,
    EmissionFactsJson,
    Post,
    restatement_of,
)
from airflow_partitions.coverage_events.markers import (
    CLAIM_TIMEOUT,
    TABLE,
    EmissionMarkers,
    Marker,
    MarkerJson,
)
from airflow_partitions.coverage_events.spec import (
    KEY_FORMAT,
    SCHEME,
    CoverageAssetSpec,
    InvalidCoverageAsset,
    InvalidWindowKey,
)
from airflow_partitions.coverage_events.status import (
    DEFAULT_WINDOW_LIMIT,
    AssetWindows,
    AssetWindowsJson,
    WindowStatus,
    WindowStatusJson,
    WindowStatusName,
    asset_windows,
    followed_assets,
)
from airflow_partitions.coverage_events.windows import (
    InputRef,
    Window,
    WindowState,
    candidate_windows,
    extent,
    slice_columns,
    window_state,
    windows_in,
)

__all__ = [
    "CLAIM_TIMEOUT",
    "DEFAULT_HORIZON",
    "DEFAULT_WINDOW_LIMIT",
    "KEY_FORMAT",
    "SCHEME",
    "TABLE",
    "AssetWindows",
    "AssetWindowsJson",
    "CoverageAssetSpec",
    "CoverageEmitter",
    "Emission",
    "EmissionExtraJson",
    "EmissionFactsJson",
    "EmissionMarkers",
    "InputRef",
    "InvalidCoverageAsset",
    "InvalidWindowKey",
    "Marker",
    "MarkerJson",
    "Post",
    "Window",
    "WindowState",
    "WindowStatus",
    "WindowStatusJson",
    "WindowStatusName",
    "asset_windows",
    "candidate_windows",
    "extent",
    "followed_assets",
    "restatement_of",
    "slice_columns",
    "window_state",
    "windows_in",
]

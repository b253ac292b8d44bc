"""OpenLineage facets for the operators: storage subsets -> ``OperatorLineage``.

The OpenLineage provider is an optional extra (``airflow-partitions[lineage]``). Everything
from it, and from the openlineage-python client it brings, is imported when lineage is asked
for, never when an operator module is imported: without the provider Airflow never calls
``get_openlineage_facets_on_complete``, and a direct call returns ``None``.

Per storage table, one dataset (see :mod:`airflow_partitions.interop.lineage_datasets`) with:

* ``subset`` (``InputSubsetInputDatasetFacet`` / ``OutputSubsetOutputDatasetFacet``): a
  ``PartitionSubsetCondition`` listing exactly the partitions read or written, each with its
  partition columns as ``dimensions`` and its location as ``identifier``;
* ``inputStatistics`` / ``outputStatistics``: ``fileCount`` and ``size`` (bytes), only when
  known (every location on the local file system); the partition count is the subset's length.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from airflow_partitions.catalog import StorageDef
from airflow_partitions.interop import (
    StorageSubset,
    manifest_subsets,
    registered_subset,
)
from airflow_partitions.spark import Manifest

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset
    from openlineage.client.facet_v2 import RunFacet
    from openlineage.client.generated.base_subset_dataset import PartitionSubsetCondition

    #: What ``get_openlineage_facets_on_complete`` returns: input and output datasets, no run
    #: facets.
    Lineage = OperatorLineage[Dataset, RunFacet]

#: The keys of the facets in ``inputFacets`` / ``outputFacets`` (OpenLineage's own names).
SUBSET_FACET: Final = "subset"
INPUT_STATISTICS_FACET: Final = "inputStatistics"
OUTPUT_STATISTICS_FACET: Final = "outputStatistics"
#: What the optional extra installs.
PROVIDER_MODULE: Final = "airflow.providers.openlineage"


def openlineage_available() -> bool:
    """Whether the OpenLineage provider (and so its client) is installed."""
    try:
        return importlib.util.find_spec(PROVIDER_MODULE) is not None
    except (ImportError, ValueError):
        return False


def operator_lineage(inputs: Sequence[StorageSubset] = (),
                     outputs: Sequence[StorageSubset] = ()) -> Lineage | None:
    """``OperatorLineage`` with one dataset per subset; ``None`` without the provider."""
    try:
        from airflow.providers.openlineage.extractors import OperatorLineage
        from openlineage.client.event_v2 import InputDataset, OutputDataset
        from openlineage.client.generated.base_subset_dataset import (
            InputSubsetInputDatasetFacet,
            OutputSubsetOutputDatasetFacet,
            Partition,
            PartitionSubsetCondition,
        )
        from openlineage.client.generated.input_statistics_input_dataset import (
            InputStatisticsInputDatasetFacet,
        )
        from openlineage.client.generated.output_statistics_output_dataset import (
            OutputStatisticsOutputDatasetFacet,
        )
    except ImportError:
        return None

    def condition(subset: StorageSubset) -> PartitionSubsetCondition:
        return PartitionSubsetCondition(partitions=[
            Partition(dimensions=dict(p.dimensions), identifier=p.location)
            for p in subset.partitions])

    ins: list[Dataset] = []
    for subset in inputs:
        facets: dict[str, Any] = {SUBSET_FACET: InputSubsetInputDatasetFacet(
            inputCondition=condition(subset))}
        if subset.files is not None:
            facets[INPUT_STATISTICS_FACET] = InputStatisticsInputDatasetFacet(
                fileCount=subset.files, size=subset.size)
        ins.append(InputDataset(namespace=subset.dataset.namespace, name=subset.dataset.name,
                                inputFacets=facets))
    outs: list[Dataset] = []
    for subset in outputs:
        out_facets: dict[str, Any] = {SUBSET_FACET: OutputSubsetOutputDatasetFacet(
            outputCondition=condition(subset))}
        if subset.files is not None:
            out_facets[OUTPUT_STATISTICS_FACET] = OutputStatisticsOutputDatasetFacet(
                fileCount=subset.files, size=subset.size)
        outs.append(OutputDataset(namespace=subset.dataset.namespace, name=subset.dataset.name,
                                  outputFacets=out_facets))
    return OperatorLineage(inputs=ins, outputs=outs)


def manifest_lineage(manifest: Manifest, storages: Mapping[str, StorageDef]
                     ) -> Lineage | None:
    """The inputs of a job launched on ``manifest``: one dataset per storage it reads
    (``storages``: the definitions of those storages)."""
    if not openlineage_available():
        return None
    return operator_lineage(inputs=manifest_subsets(manifest.partitions, storages))


def registration_lineage(sdef: StorageDef, period: str, parts: Sequence[Mapping[str, str]],
                         location: str | None = None) -> Lineage | None:
    """The output of a registration: the storage's dataset, with the registered partitions."""
    if not openlineage_available():
        return None
    return operator_lineage(outputs=[registered_subset(sdef, period, parts, location)])

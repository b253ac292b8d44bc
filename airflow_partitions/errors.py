"""Typed errors shared by the pure core.

Every error a user can cause by bad input derives from :class:`InvalidInput`, so the CLI and the
Airflow layer can turn it into a one-line message (exit code 2) instead of a traceback.
"""

from __future__ import annotations


class PartitionsError(Exception):
    """Base class of every error raised by airflow-partitions."""


class InvalidInput(PartitionsError, ValueError):
    """The caller passed something malformed; the message names the value and the reason."""


class WrongType(InvalidInput, TypeError):
    """A public argument has the wrong Python type (``period=None``, ``priority="high"``)."""


class InvalidPartitionValue(InvalidInput):
    """A partition value string does not parse strictly in its period's format."""


class AmbiguousTime(InvalidPartitionValue):
    """A local wall-clock value occurs twice (DST fall-back) and carries no offset to choose."""


class UnsupportedZone(InvalidInput):
    """A zone cannot hold partitions of a period (its offsets break the period's boundaries)."""


class MisalignedTime(InvalidInput):
    """An instant does not start a partition of the period it is used with."""


class InvalidRange(InvalidInput):
    """A range is malformed or reversed."""


class MixedPeriods(InvalidInput):
    """Two partitions of different update periods were combined where one period is required."""


class RangeTooLarge(InvalidRange):
    """A range holds more partitions than the safety limit; the message gives the count."""


class CorruptCatalog(PartitionsError):
    """Something stored in the catalog cannot be decoded; it is reported, never half-used."""


class CorruptTimeline(CorruptCatalog):
    """Stored timeline properties are inconsistent; they are reported, never half-used."""


class CorruptDefinition(CorruptCatalog):
    """A stored fact or storage definition is not the JSON this version writes."""


class CorruptPartitionRow(CorruptCatalog):
    """A partition row holds a state or cell this version does not know."""


class ConcurrentUpdateError(PartitionsError):
    """A timeline cell kept changing under us; nothing was lost, the caller may retry."""

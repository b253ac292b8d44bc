"""Parser and evaluator for a subset of the HBase filter language (test double support).

The HBase Thrift test double (:mod:`airflow_partitions.testing.hbase.server`) uses this module to
honour ``TScan.filterString``. It follows the HBase reference guide, chapter "Thrift API and
Filter Language", so code tested against the double behaves the same on a real cluster.

Syntax
    ``FilterName ('arg', arg, ...)`` combined with ``AND``, ``OR`` (uppercase), the unary
    ``SKIP`` and ``WHILE``, and parentheses. Precedence, highest first: parentheses,
    ``SKIP``/``WHILE``, ``AND``, ``OR``. String literals use single quotes; a quote inside is
    doubled (``'it''s'``). The filter string is handled as raw bytes, so quoted values may hold
    NUL, non-ASCII bytes, ``)`` or `` AND ``.

Comparators (``'type:value'``)
    ``binary`` (unsigned lexicographic), ``binaryprefix`` (compares only the first
    ``len(value)`` bytes), ``regexstring`` (Java ``Matcher.find()`` semantics, i.e. Python
    :func:`re.search` with ``DOTALL`` as HBase's default; pattern *and* cell bytes are decoded as
    latin-1 so every byte maps to one character) and ``substring`` (case-insensitive; bytes
    decoded as UTF-8 like HBase's ``Bytes.toString``). ``regexstring`` and ``substring`` only
    accept ``=`` and ``!=``, as in HBase.

Comparison direction
    ``RowFilter (>=, 'binary:x')`` keeps rows whose key is ``>= x``: the *cell* is the left operand.

Evaluation model
    A filter sees one row at a time: its key and its visible cells (latest version, after column
    selection) in (family, qualifier) order. It answers with a :class:`Verdict`: whether the row
    survives, which cells survive, and whether the scan can stop (``WHILE``). ``AND`` keeps a
    cell only if every operand keeps it, ``OR`` if any operand keeps it. This simplifies HBase's
    cell-by-cell ``ReturnCode`` machinery and gives the same results for the supported filters.
"""

from airflow_partitions.testing.hbase import filter_eval, filter_parse
from airflow_partitions.testing.hbase.filter_eval import *  # noqa: F403 - the facade of both halves
from airflow_partitions.testing.hbase.filter_parse import *  # noqa: F403

__all__ = filter_eval.__all__ + filter_parse.__all__

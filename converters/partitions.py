"""`evalconv.partitions`: evalconv as the function an engine (Dask, Ray, Spark, DuckDB, Polars)
calls, one Arrow record batch at a time. The implementation is the engine's
(`evalconv.engine.partitions`, docs/scale.md); this is its public name."""
from __future__ import annotations

from .engine.partitions import (ARROW_SOURCE, CheckedBatch, StatsPart, WrittenBatch, assemble, checked_stream, count_batch,
                                loss_report, merge_logs, merge_loss_reports, merge_read_reports, merge_stats_parts,
                                reduce_validation, rows_from_arrow, rows_to_arrow, stats_from_parts, validate_batch,
                                write_rows)
from .engine.row_groups import RowGroup, read_group, reduce_files, row_groups, validate_group
from .engine.set_rules_sql import (DUPLICATE_IDS_SQL, FAMILY_CONFLICTS_SQL, ID_MISMATCHES_SQL, KEY_COLUMNS, keys_table,
                                   keys_to_arrow, set_findings_sql)

__all__ = ["ARROW_SOURCE", "DUPLICATE_IDS_SQL", "FAMILY_CONFLICTS_SQL", "ID_MISMATCHES_SQL", "KEY_COLUMNS", "CheckedBatch",
           "RowGroup", "StatsPart", "WrittenBatch", "assemble", "checked_stream", "count_batch", "keys_table",
           "keys_to_arrow", "loss_report", "merge_logs", "merge_loss_reports", "merge_read_reports", "merge_stats_parts",
           "read_group", "reduce_files", "reduce_validation", "row_groups", "rows_from_arrow", "rows_to_arrow",
           "set_findings_sql", "stats_from_parts", "validate_batch", "validate_group", "write_rows"]

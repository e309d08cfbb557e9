"""The set rules as a reduce in DuckDB SQL, over the keys the map leaves (docs/scale.md).

`validate_batch` checks a partition by the row rules and keeps, per row, what the set rules look
at (`CheckedBatch.keys`). `keys_to_arrow(part)` turns them into an Arrow record batch (row number,
id, case family, oracle type, evaluator), small enough to collect from every partition or to write
beside the data; `set_findings_sql(con, relation)` runs the set rules over all of them at once:

- duplicate ids: a row whose id an earlier row has, naming that first row;
- case-family agreement: a row of a case family whose (oracle type, evaluator) differs from the
  first row of that family, naming it.

The findings, messages included, are those `Validator.set_findings` gives one row at a time.
`ID_MISMATCHES_SQL` is the row rule `caseId` = `id` over an evalconv Parquet file itself (a blank
`caseId` differs from the id, as the validator says).
"""
from __future__ import annotations

from typing import Any, Iterable

from ..canonical import parquet_format
from ..canonical.findings import Finding
from ..canonical.validator import _duplicate_id, _family_conflict
from .partitions import CheckedBatch

KEY_COLUMNS = ("row", "id", "family", "oracle", "evaluator")

DUPLICATE_IDS_SQL = """
SELECT row, id, first_row FROM (
    SELECT row, id, min(row) OVER (PARTITION BY id) AS first_row FROM {keys} WHERE id IS NOT NULL)
WHERE row > first_row ORDER BY row"""

FAMILY_CONFLICTS_SQL = """
SELECT row, family, oracle, evaluator, first_row, first_oracle, first_evaluator FROM (
    SELECT row, family, oracle, evaluator, first_value(row) OVER by_family AS first_row,
           first_value(oracle) OVER by_family AS first_oracle, first_value(evaluator) OVER by_family AS first_evaluator
    FROM {keys} WHERE family IS NOT NULL
    WINDOW by_family AS (PARTITION BY family ORDER BY row))
WHERE (oracle, evaluator) IS DISTINCT FROM (first_oracle, first_evaluator) ORDER BY row"""

ID_MISMATCHES_SQL = """
SELECT file_row_number + 1 AS row, id, "case.caseId" AS case_id FROM read_parquet('{path}', file_row_number = true)
WHERE "case.caseId" <> id ORDER BY row"""


def keys_to_arrow(part: CheckedBatch) -> Any:
    """A partition's set keys as a `pyarrow.RecordBatch`: `row` (the set's row number), `id`,
    `family`, `oracle`, `evaluator` (null where the row rules leave no key: no id, no case family
    of a known oracle type, a family a pack sets up otherwise)."""
    pa = parquet_format._pyarrow()
    keys = part.keys
    triples = [keys.triples[t] if t >= 0 else (None, None, None) for t in keys.families]
    for family, _, evaluator in triples:
        if family is not None and evaluator is not None and not isinstance(evaluator, str):
            raise TypeError(f"case family '{family}': an evaluator that is not text ({evaluator!r}) has no SQL key")
    return pa.RecordBatch.from_arrays(
        [pa.array(range(part.first_record + 1, part.first_record + part.count + 1), pa.int64()),
         pa.array(keys.ids, pa.string()), *(pa.array([t[i] for t in triples], pa.string()) for i in range(3))],
        names=list(KEY_COLUMNS))


def set_findings_sql(con: Any, relation: str) -> dict[int, list[Finding]]:
    """The set rules over `relation` (a table, a view, a registered Arrow table or a
    `read_parquet(...)` call holding `keys_to_arrow`'s columns) on DuckDB connection `con`:
    {row number: its set findings}, each as `Validator.set_findings` gives it."""
    out: dict[int, list[Finding]] = {}
    for row, row_id, first_row in con.execute(DUPLICATE_IDS_SQL.format(keys=relation)).fetchall():
        out.setdefault(row, []).append(_duplicate_id(row_id, first_row))
    for row, family, oracle, evaluator, first_row, first_oracle, first_evaluator in con.execute(
            FAMILY_CONFLICTS_SQL.format(keys=relation)).fetchall():
        out.setdefault(row, []).append(_family_conflict((family, oracle, evaluator),
                                                        (first_row, first_oracle, first_evaluator)))
    return out


def keys_table(parts: Iterable[CheckedBatch]) -> Any:
    """Every partition's keys as one `pyarrow.Table` (`con.register(name, table)` hands it to DuckDB)."""
    pa = parquet_format._pyarrow()
    batches = [keys_to_arrow(part) for part in parts]
    if not batches:
        return pa.table({name: pa.array([], pa.int64() if name == "row" else pa.string()) for name in KEY_COLUMNS})
    return pa.Table.from_batches(batches)

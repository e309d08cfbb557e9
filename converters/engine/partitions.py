"""evalconv as the function an engine calls: one Arrow record batch at a time (docs/scale.md).

Dask, Ray Data (`map_batches(..., batch_format="pyarrow")`), Spark (`mapInArrow`), DuckDB
(`fetch_record_batch`) and Polars (`to_arrow`) hand over `pyarrow.RecordBatch`es in evalconv's
Parquet columns. These functions are the library's own reader, validator and writers over such a
batch, and the reduce that makes the partitions' answers the one answer a single process gives:

- map: `validate_batch(batch)` -> `CheckedBatch` (each row with its findings, and the keys the
  set rules look at); `write_rows(rows, to=FORMAT)` -> `WrittenBatch` (the rows' bytes, or for
  Parquet a record batch, and what writing them lost); `rows_to_arrow(rows)` -> a record batch;
  `count_batch(batch)` -> `StatsPart` (the `stats` tallies).
- reduce, in partition order: `reduce_validation(parts)` applies the set rules (duplicate ids,
  case families) over the partitions' keys and gives what `evalconv.validate_file` gives;
  `assemble(parts, path)` writes one file, byte for byte the one a single process writes;
  `merge_logs`, `merge_read_reports`, `merge_loss_reports`, `merge_stats_parts` combine reports
  associatively; `stats_from_parts` gives what `evalconv stats` gives.

No function keeps state between calls: a partition's answer depends on its batch and on
`first_record` (how many rows of the set come before it) alone, so any subset of row groups,
in any process, in any order, gives the same partial answers; only the reduce needs their order.
"""
from __future__ import annotations

import io
from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from ..atomic import SIDE_FILES, AtomicFolder, AtomicOutput
from ..canonical import parquet_format
from ..canonical.errors import UsageError
from ..canonical.findings import Finding
from ..canonical.format import Format, WriteOptions
from ..canonical.row import Row
from ..canonical.source import SourceRow
from ..canonical.validator import Checked, Validator
from ..registry import REGISTRY
from ..reports import ROWS_NAMED, ChunkLosses, FindingLog, LossReport, ReadReport, _FieldIds
from ..validation import FileValidation
from . import parallel
from .chunk_writer import ChunkWriter, cuttable
from .payloads import CleanRows, Encoded, RowNotes, noted_in, runs_in
from .set_keys import SetKeys
from .split_writers import write_row

__all__ = ["ARROW_SOURCE", "CheckedBatch", "StatsPart", "WrittenBatch", "assemble", "checked_stream",
           "count_batch", "loss_report", "merge_logs", "merge_loss_reports", "merge_read_reports", "merge_stats_parts",
           "reduce_validation", "rows_from_arrow", "rows_to_arrow", "stats_from_parts", "validate_batch",
           "write_rows"]

ARROW_SOURCE = "<arrow>"  # what findings name as their file when the caller names none


def rows_from_arrow(batch: Any, *, source: str = ARROW_SOURCE, first_record: int = 0) -> Iterator[SourceRow]:
    """The rows of a `pyarrow.RecordBatch` (or `Table`) in evalconv's Parquet columns, as the
    Parquet reader reads them: row k is record `first_record + k + 1`. The columns are checked
    first (a batch that is not a canonical set is a `ReadError` naming the missing column)."""
    pa = parquet_format._pyarrow()
    batches = batch.to_batches() if isinstance(batch, pa.Table) else [batch]
    layout = parquet_format.Layout(batch.schema, source)
    return parquet_format._rows(iter(batches), layout, source, first_record, "Arrow")


@dataclass
class CheckedBatch:
    """One partition validated by the row rules. `rows[k]` is row k as a `Row`, or None when
    the row rules reject it; `findings[k]` its findings, located as one process locates them
    (row number `first_record + k + 1`), for the rows that have any. The set rules (duplicate
    ids, case families across the set) are left to the reduce: `keys` is what they look at."""

    source: str
    first_record: int
    rows: list[Row | None]
    findings: dict[int, list[Finding]]
    rejected: dict[int, Any]  # k -> the value of a row the row rules reject (for an error ledger)
    keys: SetKeys
    read: ReadReport
    versions: dict[Any, int] = field(default_factory=dict)  # rows by the schema version they say

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def valid(self) -> list[Row]:
        """The rows the row rules accept (the set rules may still reject some)."""
        return [row for row in self.rows if row is not None]


def validate_batch(batch: Any, *, source: str = ARROW_SOURCE, first_record: int = 0,
                   require: Iterable[str] = ()) -> CheckedBatch:
    """Read and check one record batch: the schema and every row rule (caseId = id,
    admissibility, expected shapes, the warnings, `require`d fields, the packs' case families).
    `first_record`: rows of the set before this batch (its row numbers follow on)."""
    from ..validation import _required_paths

    validator = Validator(source=source, require=tuple(_required_paths(require)))
    validator.count = first_record
    rows: list[Row | None] = []
    findings: dict[int, list[Finding]] = {}
    rejected: dict[int, Any] = {}
    keys = SetKeys()
    for k, src in enumerate(rows_from_arrow(batch, source=source, first_record=first_record)):
        checked = validator.check_row(src)
        if checked.findings:
            findings[k] = checked.findings
        if checked.row is None:
            rejected[k] = src.value
        rows.append(checked.row)
        keys.add(checked.key)
    report = ReadReport("parquet", source, len(rows))
    return CheckedBatch(source, first_record, rows, findings, rejected, keys, report, dict(validator.versions))


def rows_to_arrow(rows: Iterable[Row]) -> Any:
    """Rows as one `pyarrow.RecordBatch` in evalconv's Parquet columns (the schema of
    docs/parquet-spec.md): what `--to parquet` writes, for an engine to carry on with."""
    columns = parquet_format.Columns()
    for row in rows:
        write_row(columns, row)
    return columns.batch()


@dataclass
class WrittenBatch:
    """Rows written by a target format's own writer, as one part of a file: `data` is their
    text as UTF-8 (Parquet and Hugging Face folders: a `pyarrow.RecordBatch` of the rows),
    `ends[k]` where row k ends in it (a row given as None, or refused, adds nothing). `refused`
    names the rows the writer refused (`refused-by-target`). `loss()` is what writing them lost;
    `assemble` makes the whole file of parts, with its header and its loss report."""

    format: str
    options: WriteOptions
    data: Any
    ends: array
    runs: Any = None  # CSV: under which columns each stretch of `data` was written
    parts: list[Any] | None = None  # a vendor writer: what each row left for the file's writer
    losses: ChunkLosses | None = None  # and the fields each row carried
    refused: dict[int, Finding] = field(default_factory=dict)
    noted: RowNotes | None = None  # CSV: what the writer noted of some rows (formula-looking cells)

    @property
    def count(self) -> int:
        return len(self.ends)

    def loss(self, output: str | None = None) -> LossReport:
        """This part's loss report, as if it were the whole file."""
        return _assembled([self], output, discard=True)

    def to_bytes(self) -> bytes:
        """The part's bytes: for a format with no header and no joins (JSONL, the one-record-a-line
        vendor formats) these, concatenated in partition order, are the file."""
        if not isinstance(self.data, bytes):
            raise UsageError(f"a {self.format} part is a record batch, not bytes: assemble() writes the file")
        return self.data


def _target(to: str, path: str | None, options: dict[str, Any]) -> tuple[Format, WriteOptions]:
    fmt = REGISTRY.get(to)
    if not fmt.can_write:
        raise UsageError(f"format '{to}' cannot be written")
    writer_options = REGISTRY.writer_options(fmt, path, options)
    if fmt.write_shape == "document":
        raise UsageError(f"format '{fmt.name}' does not write a row on its own, so it cannot be written a "
                         f"partition at a time; write the rows with evalconv.write")
    return fmt, writer_options


def write_rows(rows: Iterable[Row | None], to: str, *, path: str | None = None, **options: Any) -> WrittenBatch:
    """Rows through format `to`'s own writer, as one part of a file (`path`: the file it is a
    part of, where the format takes its variant from the name). A None stands for a row that
    is left out (`CheckedBatch.rows` can be passed as it is). `options`: the format's writer
    options, as for `evalconv.write`."""
    fmt, writer_options = _target(to, path, options)
    fmt.load_writer()
    writer = ChunkWriter(fmt, writer_options)
    ends, refused = array("Q"), {}
    for k, row in enumerate(rows):
        refusal = writer.add(row)
        if refusal is not None:
            refused[k] = refusal
        ends.append(writer.end())
    return WrittenBatch(fmt.name, writer_options, writer.data(), ends, writer.runs, writer.parts, writer.losses, refused,
                        writer.noted)


# The reduce ------------------------------------------------------------------------------


def checked_stream(parts: Iterable[tuple[CheckedBatch, WrittenBatch | None]], validator: Validator,
                   ) -> Iterator[Checked[Any] | CleanRows]:
    """The partitions, in order, as the `Checked` rows one process gives (`parallel.Workers`
    gives the same): `validator` applies the set rules over each partition's keys in turn, a
    row the set rules or the writer reject loses its payload, and runs of valid rows with
    nothing to report come as `CleanRows` of the bytes the partitions wrote."""
    for checked, written in parts:
        yield from _merge(checked, written, validator)


def _per_row(checked: CheckedBatch, written: WrittenBatch | None) -> WrittenBatch | None:
    if written is not None and written.count != checked.count:
        raise UsageError(f"a written part of {written.count} rows does not go with a checked partition of "
                         f"{checked.count}: write CheckedBatch.rows as they are")
    return written


def _merge(checked: CheckedBatch, written: WrittenBatch | None,
           validator: Validator) -> Iterator[Checked[Any] | CleanRows]:
    written = _per_row(checked, written)
    first, label, ids = checked.first_record, checked.source, checked.keys.ids
    later = validator.set_findings_many(checked.keys, first + 1)
    validator.count = first + checked.count
    validator.versions.update(checked.versions)  # as a worker's chunk adds its versions in parallel.py
    notes, refused = checked.findings, written.refused if written is not None else {}
    data, ends = (cuttable(written.data), written.ends) if written is not None else (b"", array("Q"))
    runs = written.runs if written is not None else None
    done = 0
    for k in sorted(notes.keys() | later.keys() | refused.keys()):
        row_from = ends[k - 1] if k and written is not None else 0
        if k > done and written is not None:  # the clean rows before this one
            at = ends[done - 1] if done else 0
            yield CleanRows(k - done, data[at:row_from], runs_in(runs, at, row_from),
                            *_split_parts(written, done, k, at), noted=noted_in(written.noted, done, k))
        done = k + 1
        number = first + k + 1
        located = list(notes.get(k, ()))
        located += [f.locate(row=number, id=ids[k], line=None, record=number, source=label) for f in later.get(k, ())]
        rejected = k in checked.rejected
        ok = not rejected and not any(f.severity == "error" for f in located)
        value = checked.rejected.get(k)
        row = checked.rows[k]
        if not ok and row is not None:  # the set rules rejected it: the ledger wants the row
            value = row.to_json()
        if k in refused:  # the writer refused it (after the set rules, as in one process)
            if ok:
                located.append(refused[k].locate(row=number, id=ids[k], line=None, record=number, source=label))
            ok = False
        payload: Any = None
        if ok:
            payload = row if written is None else Encoded(
                data[row_from:ends[k]], runs_in(runs, row_from, ends[k]),
                None if written.parts is None else [written.parts[k]],
                None if written.losses is None else (written.losses, k, k + 1), noted_in(written.noted, k, k + 1))
        yield Checked(SourceRow(value, None, number), number, located, payload)
    if checked.count > done and written is not None:
        at = ends[done - 1] if done else 0
        yield CleanRows(checked.count - done, data[at:], runs_in(runs, at, len(data)),
                        *_split_parts(written, done, checked.count, at),
                        noted=noted_in(written.noted, done, checked.count))
    elif checked.count > done:  # validating only: the clean rows, counted
        yield CleanRows(checked.count - done, b"")


def _split_parts(written: WrittenBatch, start: int, stop: int, at: int) -> tuple[Any, Any, Any]:
    if written.parts is None or written.losses is None:
        return None, None, None
    return written.parts[start:stop], (written.ends, start, stop, at), (written.losses, start, stop)


def reduce_validation(parts: Iterable[CheckedBatch], *, source: str = ARROW_SOURCE,
                      format: str = "parquet") -> FileValidation:
    """The set rules over the partitions' keys, in partition order, and every finding: what
    `evalconv.validate_file` gives for the file the partitions make (a partition's
    `first_record` must be the rows before it)."""
    result = FileValidation(source, format)
    validator = Validator(source=source)

    def counted(parts: Iterable[CheckedBatch]) -> Iterator[tuple[CheckedBatch, None]]:
        for part in parts:
            result.versions.update(part.versions)
            yield part, None

    for checked in checked_stream(counted(parts), validator):
        if checked.findings:
            result.log.add(checked.findings)
    result.rows = validator.count
    return result


def _assembled(parts: Sequence[WrittenBatch], output: str | None, *, discard: bool = False) -> LossReport:
    if not parts:
        raise UsageError("assemble() needs at least one part (it takes the format and options from them)")
    fmt = REGISTRY.get(parts[0].format)
    options = parts[0].options
    report = LossReport(fmt.name, output)
    if discard and fmt.write_shape == "columnar":  # canonical columns lose nothing
        report.rows = sum(part.count - len(part.refused) for part in parts)
        return report
    out: Any = _Discard() if discard else AtomicFolder(output) if fmt.folder and output else AtomicOutput(output)
    with out:
        if not discard:
            out.open()
        writer = fmt.open_writer(out.stream, report, options)
        row_writer = parallel.writer_for(out, writer, fmt.name, report)
        for part in parts:
            for item in _merge_written(part):
                row_writer.write(item)
                report.rows += item.count
        row_writer.finish()
        writer.close()
        if not discard:
            out.commit()
            fmt.committed(writer, options, SIDE_FILES)
    return report


def _merge_written(part: WrittenBatch) -> Iterator[Any]:
    """A written part's rows, as the payloads a file's writer takes (refused rows left out)."""
    done, data, ends = 0, cuttable(part.data), part.ends
    for k in sorted(part.refused) + [part.count]:
        if k > done:
            at, end = ends[done - 1] if done else 0, ends[k - 1]
            yield CleanRows(k - done, data[at:end], runs_in(part.runs, at, end),
                            *_split_parts(part, done, k, at), noted=noted_in(part.noted, done, k))
        done = k + 1


def loss_report(parts: Iterable[WrittenBatch], output: str | None = None) -> LossReport:
    """The loss report of the file the parts make, without writing it: what `assemble` returns.
    This is the merge of loss reports that holds for every format, since a writer that sums up
    at the end of a file (promptfoo: "N tests need a person") sums up here over all the parts;
    `merge_loss_reports` merges finished reports, equal where the writer notes row by row."""
    return _assembled(list(parts), output, discard=True)


def assemble(parts: Iterable[WrittenBatch], path: str | None) -> LossReport:
    """Write the file the parts make, in order, atomically (`path=None`: standard output), with
    the format's header, joins and closing, and return its loss report: the bytes and the report
    one process writes for the same rows. A refused row is left out."""
    return _assembled(list(parts), path)


class _Discard:
    """An output that keeps nothing: for a part's loss report alone."""

    def __init__(self) -> None:
        self.stream = io.TextIOWrapper(io.BufferedWriter(_Nowhere()), encoding="utf-8", newline="")

    def write_encoded(self, data: bytes) -> None:
        self.stream.flush()

    def __enter__(self) -> "_Discard":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stream.flush()


class _Nowhere(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


# Reports that merge ------------------------------------------------------------------------


def merge_logs(a: FindingLog, b: FindingLog) -> FindingLog:
    """Two partitions' findings as one log (a's first): associative, and equal to one log that
    saw a's findings then b's, its kept lists cut as one log cuts them."""
    from ..reports import FINDINGS_KEPT

    by_code = dict(a.by_code)
    for code, n in b.by_code.items():
        by_code[code] = by_code.get(code, 0) + n
    return FindingLog((a.errors + b.errors)[:FINDINGS_KEPT], (a.warnings + b.warnings)[:FINDINGS_KEPT],
                      a.error_count + b.error_count, a.warning_count + b.warning_count, by_code)


def _merge_ids(a: _FieldIds, b: _FieldIds) -> _FieldIds:
    out = _FieldIds(keep_ids=a.keep_ids and b.keep_ids)
    for side in (a, b):
        for key, ids in side.entries.items():
            if out.keep_ids:
                out.note_ids(key, list(ids))
            else:
                out.entries.setdefault(key, [])
                out.counts[key] = out.counts.get(key, 0) + (side.counts.get(key, 0) if not side.keep_ids else len(ids))
    return out


def _once(a: list[str], b: list[str]) -> list[str]:
    """Notes a writer or reader makes once a file: each once, in order of first appearance."""
    return list(dict.fromkeys([*a, *b]))


def merge_read_reports(a: ReadReport, b: ReadReport) -> ReadReport:
    """Two partitions' read reports as one (a's first): rows added, fields' ids in order."""
    return ReadReport(a.format, a.source, a.rows + b.rows, _merge_ids(a.inferred, b.inferred),
                      _merge_ids(a.ignored, b.ignored), _merge_ids(a.edited, b.edited), _once(a.notes, b.notes))


def merge_loss_reports(a: LossReport, b: LossReport) -> LossReport:
    """Two partitions' loss reports as one (a's first): rows added, dropped and carried fields'
    ids in order, a notice about some rows counting the rows of both (its first ids named).
    Equal to one process's report for every writer that notes row by row; a writer that sums
    up at the end of a file (promptfoo) sums up each part: use `loss_report(parts)` for it."""
    out = LossReport(a.format, a.output, a.rows + b.rows, _merge_ids(a.dropped, b.dropped),
                     _merge_ids(a.carried, b.carried), _once(a.notes, b.notes))
    row_notices: dict[str, tuple[list[str], int]] = {}
    order: list[tuple[str, str]] = []  # ("row" | "plain", text) in order of first appearance
    for side in (a, b):
        by_place = {at: text for text, (at, _, _) in side._row_notices.items()}
        for at, notice in enumerate(side.notices):
            text = by_place.get(at)
            if text is None:
                if ("plain", notice) not in order:
                    order.append(("plain", notice))
                continue
            _, ids, rows = side._row_notices[text]
            have = row_notices.get(text)
            if have is None:
                order.append(("row", text))
                row_notices[text] = (list(ids), rows)
            else:
                kept, count = have  # a row is in one partition: the parts' rows add up
                row_notices[text] = ((kept + ids)[:ROWS_NAMED], count + rows)
    for kind, text in order:
        if kind == "plain":
            out.notice(text)
            continue
        ids, rows = row_notices[text]
        out.notices.append("")
        out._row_notices[text] = (len(out.notices) - 1, ids, rows)
        named = ", ".join(repr(i) for i in ids) + (f" and {rows - len(ids)} more" if rows > len(ids) else "")
        out.notices[-1] = f"{text} ({rows} {'row' if rows == 1 else 'rows'}: {named})"
    return out


# Stats --------------------------------------------------------------------------------------


@dataclass
class StatsPart:
    """One partition's `stats` tallies (`count_batch`), merged in partition order
    (`merge_stats_parts`) and finished into the `Stats` one process gives (`stats_from_parts`)."""

    by: tuple[str, ...]
    samples: int
    counter: Any  # stats._Counter, uncapped: a part keeps every value's count and sample rows
    files: list[Any]  # stats.FileStats: the rows and invalid rows of each file the part covers


def _partial_counter(by: Iterable[str], minimums: Iterable[str], samples: int) -> Any:
    from ..coverage import stats

    wanted, _, crosstabs = stats.plan_slices(by, minimums)
    counter = stats._Counter(wanted, crosstabs, samples)
    counter.sampled_values = 1 << 30  # rows for every value: the reduce cuts them as one pass would
    for tally in [*counter.tallies.values(), *(c[4] for c in counter.cross)]:
        tally.raw_cap = 1 << 62
    return counter


def count_batch(batch: Any, *, by: Iterable[str] = (), minimums: Iterable[str] = (), samples: int | None = None,
                source: str = ARROW_SOURCE, first_record: int = 0) -> StatsPart:
    """One record batch counted for `stats` (`by`, `minimums`: as `evalconv.coverage.stats` takes them,
    so that the part counts the slices the gate looks at)."""
    from ..coverage import stats

    samples = stats.DEFAULT_SAMPLES if samples is None else samples
    by, minimums = tuple(by), tuple(minimums)
    counter = _partial_counter(by, minimums, samples)
    result = stats.FileStats(source, "parquet")
    stats.count_sources(counter, rows_from_arrow(batch, source=source, first_record=first_record), result)
    return StatsPart(by + tuple(f"--min {m}" for m in minimums), samples, counter, [result])


def merge_stats_parts(a: StatsPart, b: StatsPart) -> StatsPart:
    """Two parts (a's rows first) as one: associative."""
    from ..coverage import stats

    if (a.by, a.samples) != (b.by, b.samples):
        raise UsageError("stats parts counted with different --by, --min or --samples do not merge")
    by = tuple(x for x in a.by if not x.startswith("--min "))
    minimums = tuple(x.removeprefix("--min ") for x in a.by if x.startswith("--min "))
    counter = _partial_counter(by, minimums, a.samples)
    counter.merge(a.counter, 0)
    counter.merge(b.counter, 0)
    files = [stats.FileStats(f.path, f.format, f.rows, f.invalid) for f in a.files]
    for f in b.files:
        if files and files[-1].path == f.path:
            files[-1].rows += f.rows
            files[-1].invalid += f.invalid
        else:
            files.append(stats.FileStats(f.path, f.format, f.rows, f.invalid))
    return StatsPart(a.by, a.samples, counter, files)


def stats_from_parts(parts: Iterable[StatsPart], *, family_min: int | None = None,
                     fail_on: Iterable[str] = ()) -> Any:
    """The parts, in order, finished as `evalconv stats` finishes one pass: slices, gaps, samples
    and the gate (`--min` from the parts, `fail_on` gap codes). Returns a `stats.Stats`."""
    from ..coverage import stats

    parts = list(parts)
    if not parts:
        raise UsageError("stats_from_parts() needs at least one part")
    merged = parts[0]
    for part in parts[1:]:
        merged = merge_stats_parts(merged, part)
    by = tuple(x for x in merged.by if not x.startswith("--min "))
    minimums = tuple(x.removeprefix("--min ") for x in merged.by if x.startswith("--min "))
    wanted, _, crosstabs = stats.plan_slices(by, minimums)
    counter = stats._Counter(wanted, crosstabs, merged.samples)
    counter.merge(merged.counter, 0)
    return stats.finish(counter, merged.files, by=by, minimums=minimums, fail_on=fail_on, samples=merged.samples,
                        family_min=stats.DEFAULT_FAMILY_MIN if family_min is None else family_min)
